package core

import (
	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/person"
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
	return []string{rules.RuleNested, rules.RuleNonFlat, rules.RuleTargetTab, rules.RuleUploads, ruleCredentials, RuleSecret,
		ruleNeverShared, ruleOutsideFence, ruleTakeOver, ruleReadOnlyWrite, ruleBlindFrame, ruleStopped,
		person.RuleDialogAnswered, person.RuleUndoable, person.RuleUnstoppable, person.RuleDebuggerOff, ruleContext, rules.RuleOwnOrigin, ruleSecretField, ruleUnscannable}
}

// RelayRules (rules.Relay) applies the relay's own rules to k, but for
// the rows of their own after it: credentials, uploads, what a Stop could
// not undo, target methods on a tab.
func (c *ClientConn) RelayRules(k *Cmd) bool {
	if k.Args.HasURL && c.Inst.Srv.ownURL(k.Args.Url) {
		return c.refuse(k, ownRefusal(k.Args.Url))
	}
	if k.M.domain == domainHeapProfiler && c.Inst.Srv.secrets.load() != nil {
		return c.refuse(k, deny(RuleSecret, msgHeap))
	}
	switch k.M.Name {
	case "Target.sendMessageToTarget":
		return c.refuse(k, deny(rules.RuleNested, rules.MsgNested))
	case "Target.setAutoAttach":
		if k.Args.autoAttach && (k.Args.Flatten == nil || !*k.Args.Flatten) {
			return c.refuse(k, deny(rules.RuleNonFlat, rules.MsgNonFlat))
		}
	}
	return true
}

// wantsRestore: a client's answer to a paused request.
func WantsRestore(m *MethodInfo) bool {
	switch m.Name {
	case "Fetch.continueRequest", "Fetch.continueResponse", "Fetch.fulfillRequest":
		return true
	}
	return false
}

// Restore (creds.Restore): the credentials a paused request showed as
// markers, put back (credentials.go); a refused answer fails the request.
func (c *ClientConn) Restore(k *Cmd) bool {
	p, d, ok := c.restoreCredentials(k)
	if !ok {
		if d.Verdict == Allow {
			d = deny(ruleCredentials, "cdprelay: the request's headers could not be read")
		}
		c.failPaused(k)
		return c.refuse(k, d)
	}
	k.Params = p
	return true
}

// wantsUploads: the commands that hand the page files.
func WantsUploads(m *MethodInfo) bool {
	return m.Name == "DOM.setFileInputFiles" || m.Name == "Input.dispatchDragEvent"
}

// UploadsStage (rules.Uploads): only files inside the upload folders, as
// their resolved paths.
func (c *ClientConn) UploadsStage(k *Cmd) bool {
	if len(k.Args.files) == 0 {
		return true
	}
	files, err := rules.Uploads(k.pol.p.UploadDirs(c.Inst.ProfileName), k.Args.files)
	if err != nil {
		return c.refuse(k, deny(rules.RuleUploads, "cdprelay: "+err.Error()))
	}
	p, err := rules.ReplaceFiles(k.M.Name, k.Params, files)
	if err != nil {
		return c.refuse(k, deny(rules.RuleUploads, "cdprelay: "+err.Error()))
	}
	k.Params = p
	return true
}

// wantsTargetOnTab: the Target domain.
func WantsTargetOnTab(m *MethodInfo) bool { return m.domain == domainTarget }

// TargetOnTab (rules.TargetOnTab): past the ones the relay emulates, a
// tab's session sends Chrome only the Target methods rules.TargetOnTab
// allows.
func (c *ClientConn) TargetOnTab(k *Cmd) bool {
	if k.Route.sess != nil && k.Route.sess.Tab != nil && Emulated(k.M, k.Route.sess) == nil && !rules.TargetOnTab(k.M.Name) {
		return c.refuse(k, deny(rules.RuleTargetTab, rules.MsgTargetTab(k.M.Name)))
	}
	return true
}

// failPaused fails the paused request of a refused Fetch.continueRequest,
// continueResponse or fulfillRequest: Playwright, among others, does not
// fail the request itself when the relay refuses its answer, and a paused
// request nobody answers hangs the page.
func (c *ClientConn) failPaused(k *Cmd) {
	id, ok, _ := exactString(k.Params, "requestId")
	if !ok || id == "" || k.Route.via == nil {
		return
	}
	sid := ""
	if k.Route.via.Child {
		sid = k.Route.via.Id
	}
	st := c.Inst.Lock()
	st.Fire(k.Route.Tab.Id, sid, "Fetch.failRequest", map[string]any{"requestId": id, "errorReason": "BlockedByClient"})
	c.Inst.Unlock()
}

func deny(rule, msg string) Decision { return Decision{Verdict: Deny, Rule: rule, Message: msg} }
