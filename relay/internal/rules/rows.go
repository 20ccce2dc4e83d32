package rules

import (
	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/cdp"
	"github.com/cdprelay/cdprelay/relay/internal/core"
	"github.com/cdprelay/cdprelay/relay/internal/origins"
)

// The rows of the commands table (relay/order.go) that judge a command by
// the operator's rules and the relay's own. Each reads the policy as the
// command's snapshot has it (core.Cmd.Policy), so that a SetPolicy while
// a command is judged does not judge it by two.

// Operator (rules.Operator): the operator's method rules and URL fence.
// An Ask is noted for person.Ask, which holds the command once the other
// judges have had their say.
func Operator(c *core.ClientConn, k *core.Cmd) bool {
	pol, profile := k.Policy.Policy, c.Inst.ProfileName
	d := pol.Command(profile, k.M.Name, k.Env.Params)
	switch d.Verdict {
	case core.Ask:
		k.Ask = d
	case core.Allow:
	default:
		return c.Refuse(k, d)
	}
	if k.M.UrlKey != "" {
		switch d := pol.MethodURL(profile, k.M.Name, k.Args.Url, k.Args.HasURL); d.Verdict {
		case core.Ask:
			if k.Ask.Verdict != core.Ask {
				k.Ask = d
			}
		case core.Allow:
		default:
			return c.Refuse(k, d)
		}
	}
	return true
}

// A heap snapshot holds every string of the page, a typed secret among
// them, and HeapProfiler reaches objects by their place in the heap, past
// the contexts they belong to: refused while secrets are configured
// (Chrome refuses the domain to an extension too, today).
var domainHeapProfiler = cdp.DomainIndex("HeapProfiler")

const msgHeap = "cdprelay: HeapProfiler would read the page's memory, typed secrets included: refused while the relay has secrets"

// RelayRules (rules.Relay) applies the relay's own rules to k (the
// relay's own origins, a heap snapshot while secrets are configured,
// nested and non-flat sessions), but for those with rows of their own
// after it: credentials, uploads, what a Stop could not undo, Target
// methods on a tab.
func RelayRules(c *core.ClientConn, k *core.Cmd) bool {
	if k.Args.HasURL && c.Inst.Srv.OwnURL(k.Args.Url) {
		return c.Refuse(k, origins.Refusal(k.Args.Url))
	}
	if k.M.Domain == domainHeapProfiler && c.Inst.Srv.Secrets.Load() != nil {
		return c.Refuse(k, core.Denial(api.RuleSecret, msgHeap))
	}
	switch k.M.Name {
	case "Target.sendMessageToTarget":
		return c.Refuse(k, core.Denial(RuleNested, MsgNested))
	case "Target.setAutoAttach":
		if k.Args.AutoAttach && (k.Args.Flatten == nil || !*k.Args.Flatten) {
			return c.Refuse(k, core.Denial(RuleNonFlat, MsgNonFlat))
		}
	}
	return true
}

// WantsUploads wants the commands that hand the page files.
func WantsUploads(m *core.MethodInfo) bool {
	return m.Name == "DOM.setFileInputFiles" || m.Name == "Input.dispatchDragEvent"
}

// Uploads (rules.Uploads): only files inside the upload folders, as
// their resolved paths.
func Uploads(c *core.ClientConn, k *core.Cmd) bool {
	if len(k.Args.Files) == 0 {
		return true
	}
	files, err := resolveUploads(k.Policy.Policy.UploadDirs(c.Inst.ProfileName), k.Args.Files)
	if err != nil {
		return c.Refuse(k, core.Denial(RuleUploads, "cdprelay: "+err.Error()))
	}
	p, err := ReplaceFiles(k.M.Name, k.Params, files)
	if err != nil {
		return c.Refuse(k, core.Denial(RuleUploads, "cdprelay: "+err.Error()))
	}
	k.Params = p
	return true
}

// WantsTargetOnTab wants the Target domain.
func WantsTargetOnTab(m *core.MethodInfo) bool { return m.Domain == cdp.DomainTarget }

// TargetOnTab (rules.TargetOnTab): past the ones the relay emulates, a
// tab's session sends Chrome only the Target methods mayTargetOnTab
// allows.
func TargetOnTab(c *core.ClientConn, k *core.Cmd) bool {
	if k.Route.Sess != nil && k.Route.Sess.Tab != nil && core.Emulated(k.M, k.Route.Sess) == nil && !mayTargetOnTab(k.M.Name) {
		return c.Refuse(k, core.Denial(RuleTargetTab, MsgTargetTab(k.M.Name)))
	}
	return true
}
