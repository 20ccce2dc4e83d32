package person

import (
	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/core"
	"github.com/cdprelay/cdprelay/relay/internal/lines"
)

// Asks is the ask stage, after access: a command the policy asked about,
// or one that may submit a form when that is asked, is held.
func Asks(c *core.ClientConn, k *core.Cmd) bool {
	if !CheckApproved(c, k) {
		return false // looked at again first (recheck.go)
	}
	if k.Held != nil && k.Held.Approved {
		approvedCommand(c, k)
		return true
	}
	if k.Own {
		// The relay's own command is not held for anyone: what a person is
		// asked about now is not done unasked.
		if k.Ask.Verdict == core.Ask {
			return c.Refuse(k, core.Denial(k.Ask.Rule, "cdprelay: "+k.M.Name+" needs a person's approval now"))
		}
		return true
	}
	d := k.Ask
	probe := false
	switch {
	case d.Verdict == core.Ask && Acts(k.M.Name, k.Env.Params):
		probe = LooksFirst(k.M.Name)
	case d.Verdict == core.Ask:
		return true
	case SubmitLike(k.M.Name, k.Env.Params) && k.Route.Tab != nil && asksSubmit(k.Policy.Policy, c.Inst.ProfileName):
		d, probe = core.Decision{Verdict: core.Ask, Rule: RuleAskSubmit}, true
	default:
		return true
	}
	in := c.Inst
	st := in.Lock()
	h := lines.Hold(st, c, k)
	h.Decision = d
	var desc Description
	if k.Route.Tab != nil {
		desc.Origin = api.Origin(k.Route.Tab.DocURL)
	}
	desc.Method, desc.URL, desc.Files, desc.Params = k.M.Name, k.Args.Url, k.Args.Files, h.Cmd.Env.Params
	if probe {
		h.Stage = core.HoldProbing
		via := k.Route.Via
		in.Unlock()
		c.Wg.Add(1)
		in.Tasks.Spawn("look before asking", func() {
			defer c.Wg.Done()
			probeThenAsk(c, h, via, desc)
		})
	} else {
		askPerson(st, h, desc.Text())
		in.Unlock()
	}
	k.Out.Kind = core.OutHeld
	return false
}
