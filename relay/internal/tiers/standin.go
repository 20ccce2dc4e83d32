package tiers

import (
	"strings"

	"github.com/cdprelay/cdprelay/relay/internal/access"
	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/core"
)

// blindHistory reduces the entries of a Page.getNavigationHistory result
// that are on pages automation may not see to their origin, with no title
// (BlindHistory).
func blindHistory(in *core.Instance, result []byte) []byte {
	st := &in.St // the access of a page the instance does not hold reads only the policy (tabAccess)
	return BlindHistory(result, func(u string) bool { return st.UrlAccess(u).Level == api.Blind })
}

// blindStandIn answers, on a blind tab, the commands a client sends to set
// a page up (Playwright on every page it finds): as if they had worked,
// without any of them reaching the page. Its worlds are stand-ins that
// refuse whatever is run in them; what it sets is not applied. Without
// this, a client that finds a tab already blind would wait for good for a
// page it can never use, and not use it again once it leaves. It reports
// whether it answered k.
func blindStandIn(c *core.ClientConn, k *core.Cmd) bool {
	if k.Ask.Verdict == core.Ask {
		return false // what needs a person's approval is not acknowledged unasked
	}
	in := c.Inst
	frame := k.Route.Tab.TargetID
	if k.Route.Via.Child {
		frame = k.Route.Via.TargetID
	}
	switch name := k.M.Name; {
	case name == "Runtime.enable":
		// Forwarded (its events are withheld); the client is shown the
		// page's main world as a stand-in (not again for the relay's own
		// Runtime.enable after a resume: the client keeps what it was shown).
		if k.Own {
			return false
		}
		c.Event("Runtime.executionContextCreated", k.Route.ReplyTo, map[string]any{"context": map[string]any{
			"id": in.FakeContext.Add(1), "origin": k.Route.Tab.ShownOrigin(), "name": "", "uniqueId": "cdprelay-blind-" + core.RandHex(8),
			"auxData": map[string]any{"isDefault": true, "type": "default", "frameId": frame},
		}})
		return false
	case name == "Page.createIsolatedWorld":
		world, _, _ := core.ExactString(k.Params, "worldName")
		in.Lock()
		noteWorld(k.Route.Tab, k.Params)
		in.Unlock()
		id := in.FakeContext.Add(1)
		c.Event("Runtime.executionContextCreated", k.Route.ReplyTo, map[string]any{"context": map[string]any{
			"id": id, "origin": k.Route.Tab.ShownOrigin(), "name": world, "uniqueId": "cdprelay-blind-" + core.RandHex(8),
			"auxData": map[string]any{"isDefault": false, "type": "isolated", "frameId": frame},
		}})
		c.Answer(k, map[string]int64{"executionContextId": id})
	case name == "Page.addScriptToEvaluateOnNewDocument":
		if core.InitRunsNothing(k.Params) {
			// An isolated world's bootstrap runs nothing: it goes to
			// Chrome, so that the world is there once the tab leaves.
			return false
		}
		// Kept, out of Chrome, and put in once the tab is on a full site.
		id := "cdprelay-blind-" + core.RandHex(6)
		in.Lock()
		if t := k.Route.Tab; len(t.Scripts) < core.MaxInitScripts {
			sc := &core.InitScript{Client: id, Params: append([]byte(nil), k.Params...)}
			if k.Route.Via.Child {
				sc.Sid, sc.Child = k.Route.Via.Id, k.Route.Via
			}
			t.Scripts = append(t.Scripts, sc)
		}
		in.Unlock()
		c.Answer(k, map[string]string{"identifier": id})
	case name == "Target.getTargetInfo":
		// Chrome's answer names the page (its URL, its title): the relay's
		// own view of the tab says its origin only, as discovery does.
		id, _, _ := core.ExactString(k.Params, "targetId")
		st := in.Lock()
		var ti core.TargetInfo
		switch {
		case k.Route.Via.Child && (id == "" || id == k.Route.Via.TargetID):
			ti = core.TargetInfo{TargetID: k.Route.Via.TargetID, Type: "iframe", URL: api.Origin(k.Route.Via.Url), Attached: true, BrowserContextID: st.BrowserCtx}
		case !k.Route.Via.Child && (id == "" || id == k.Route.Tab.TargetID):
			ti = st.TargetInfo(k.Route.Tab)
		default:
			in.Unlock()
			return false // another target's: as Chrome answers it on this session
		}
		in.Unlock()
		c.Answer(k, map[string]any{"targetInfo": ti})
	case name == "Page.removeScriptToEvaluateOnNewDocument":
		// Out of Chrome while the tab is blind: forgotten, so that it is
		// not put back.
		st := in.Lock()
		removeScript(st, k.Route.Tab, k.Route.Via, k.Params)
		in.Unlock()
		c.AnswerEmpty(k)
	case core.Emulated(k.M, k.Route.Sess) != nil && name != "Target.setAutoAttach":
		// What the relay answers itself (Page.setDownloadBehavior and its
		// folder check, among others) is no setting of the page to keep
		// for later and send Chrome unchecked: it is not a stand-in's, and
		// the gate refuses it on a blind tab.
		return false
	case name == "Runtime.addBinding", name == "Runtime.removeBinding",
		strings.HasPrefix(name[strings.IndexByte(name, '.')+1:], "set") && !access.BlindAllowed(name):
		if !k.Route.Via.Child {
			// Applied once the tab is on a full site again.
			in.Lock()
			deferSet(k.Route.Tab, name, k.Params)
			in.Unlock()
		}
		c.AnswerEmpty(k)
	default:
		return false
	}
	k.Out.Kind = core.OutEmulated
	return true
}
