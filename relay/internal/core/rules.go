package core

import (
	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/cdp"
	"github.com/cdprelay/cdprelay/relay/internal/rules"
)

// The relay's own rules (the rules package says what they are and why):
// the stages that run them on a client's commands.

// ruleBreakpointCondition is the rule id of a refusal of a breakpoint's
// condition (tierrules.go): api.RuleBreakpointCondition.
const ruleBreakpointCondition = api.RuleBreakpointCondition

// RelayRules lists the rule ids of the relay's own refusals (its rules and
// the access stage's), for counters that start at zero.
func RelayRules() []string {
	return []string{rules.RuleNested, rules.RuleNonFlat, rules.RuleTargetTab, rules.RuleUploads, RuleCredentials, RuleSecret,
		ruleNeverShared, ruleOutsideFence, ruleTakeOver, ruleReadOnlyWrite, ruleBlindFrame, ruleStopped,
		api.RuleDialogAnswered, ruleUndoable, ruleUnstoppable, ruleDebuggerOff, ruleContext, rules.RuleOwnOrigin, RuleSecretField, RuleUnscannable}
}

// RelayRules (rules.Relay) applies the relay's own rules to k, but for
// the rows of their own after it: credentials, uploads, what a Stop could
// not undo, target methods on a tab.
func (c *ClientConn) RelayRules(k *Cmd) bool {
	if k.Args.HasURL && c.Inst.Srv.ownURL(k.Args.Url) {
		return c.Refuse(k, ownRefusal(k.Args.Url))
	}
	if k.M.Domain == domainHeapProfiler && c.Inst.Srv.Secrets.Load() != nil {
		return c.Refuse(k, Denial(RuleSecret, msgHeap))
	}
	switch k.M.Name {
	case "Target.sendMessageToTarget":
		return c.Refuse(k, Denial(rules.RuleNested, rules.MsgNested))
	case "Target.setAutoAttach":
		if k.Args.autoAttach && (k.Args.Flatten == nil || !*k.Args.Flatten) {
			return c.Refuse(k, Denial(rules.RuleNonFlat, rules.MsgNonFlat))
		}
	}
	return true
}

// wantsUploads: the commands that hand the page files.
func WantsUploads(m *MethodInfo) bool {
	return m.Name == "DOM.setFileInputFiles" || m.Name == "Input.dispatchDragEvent"
}

// UploadsStage (rules.Uploads): only files inside the upload folders, as
// their resolved paths.
func (c *ClientConn) UploadsStage(k *Cmd) bool {
	if len(k.Args.Files) == 0 {
		return true
	}
	files, err := rules.Uploads(k.Policy.p.UploadDirs(c.Inst.ProfileName), k.Args.Files)
	if err != nil {
		return c.Refuse(k, Denial(rules.RuleUploads, "cdprelay: "+err.Error()))
	}
	p, err := rules.ReplaceFiles(k.M.Name, k.Params, files)
	if err != nil {
		return c.Refuse(k, Denial(rules.RuleUploads, "cdprelay: "+err.Error()))
	}
	k.Params = p
	return true
}

// wantsTargetOnTab: the Target domain.
func WantsTargetOnTab(m *MethodInfo) bool { return m.Domain == domainTarget }

// TargetOnTab (rules.TargetOnTab): past the ones the relay emulates, a
// tab's session sends Chrome only the Target methods rules.TargetOnTab
// allows.
func (c *ClientConn) TargetOnTab(k *Cmd) bool {
	if k.Route.Sess != nil && k.Route.Sess.Tab != nil && Emulated(k.M, k.Route.Sess) == nil && !rules.TargetOnTab(k.M.Name) {
		return c.Refuse(k, Denial(rules.RuleTargetTab, rules.MsgTargetTab(k.M.Name)))
	}
	return true
}

// failPaused fails the paused request of a refused Fetch.continueRequest,
// continueResponse or fulfillRequest: Playwright, among others, does not
// fail the request itself when the relay refuses its answer, and a paused
// request nobody answers hangs the page.
func (c *ClientConn) FailPaused(k *Cmd) {
	id, ok, _ := ExactString(k.Params, "requestId")
	if !ok || id == "" || k.Route.Via == nil {
		return
	}
	sid := ""
	if k.Route.Via.Child {
		sid = k.Route.Via.Id
	}
	st := c.Inst.Lock()
	st.Fire(k.Route.Tab.Id, sid, "Fetch.failRequest", map[string]any{"requestId": id, "errorReason": "BlockedByClient"})
	c.Inst.Unlock()
}

func Denial(rule, msg string) Decision { return Decision{Verdict: Deny, Rule: rule, Message: msg} }

// The credentials' rules, which the relay's own rules list names
// (RelayRules) and the operator's HeapProfiler check uses.
const (
	RuleSecret      = "relay:secret"
	RuleCredentials = "relay:credentials"
	RuleSecretField = "relay:secret-field"
	RuleUnscannable = "relay:secret-unscannable"
)

// A heap snapshot holds every string of the page, a typed secret among
// them, and HeapProfiler reaches objects by their place in the heap, past
// the contexts they belong to: refused while secrets are configured
// (Chrome refuses the domain to an extension too, today).
var domainHeapProfiler = cdp.DomainIndex("HeapProfiler")

const msgHeap = "cdprelay: HeapProfiler would read the page's memory, typed secrets included: refused while the relay has secrets"
