package relay

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
	return []string{rules.RuleNested, rules.RuleNonFlat, rules.RuleTargetTab, rules.RuleUploads, ruleCredentials, ruleSecret,
		ruleNeverShared, ruleOutsideFence, ruleTakeOver, ruleReadOnlyWrite, ruleBlindFrame, ruleStopped,
		person.RuleDialogAnswered, person.RuleUndoable, person.RuleUnstoppable, person.RuleDebuggerOff, ruleContext, rules.RuleOwnOrigin, ruleSecretField, ruleUnscannable}
}

// relayRules (rules.Relay) applies the relay's own rules to k, but for
// the rows of their own after it: credentials, uploads, what a Stop could
// not undo, target methods on a tab.
func (c *clientConn) relayRules(k *cmd) bool {
	if k.a.hasURL && c.inst.srv.ownURL(k.a.url) {
		return c.refuse(k, ownRefusal(k.a.url))
	}
	if k.m.domain == domainHeapProfiler && c.inst.srv.secrets.load() != nil {
		return c.refuse(k, deny(ruleSecret, msgHeap))
	}
	switch k.m.name {
	case "Target.sendMessageToTarget":
		return c.refuse(k, deny(rules.RuleNested, rules.MsgNested))
	case "Target.setAutoAttach":
		if k.a.autoAttach && (k.a.flatten == nil || !*k.a.flatten) {
			return c.refuse(k, deny(rules.RuleNonFlat, rules.MsgNonFlat))
		}
	}
	return true
}

// wantsRestore: a client's answer to a paused request.
func wantsRestore(m *methodInfo) bool {
	switch m.name {
	case "Fetch.continueRequest", "Fetch.continueResponse", "Fetch.fulfillRequest":
		return true
	}
	return false
}

// restore (creds.Restore): the credentials a paused request showed as
// markers, put back (credentials.go); a refused answer fails the request.
func (c *clientConn) restore(k *cmd) bool {
	p, d, ok := c.restoreCredentials(k)
	if !ok {
		if d.Verdict == Allow {
			d = deny(ruleCredentials, "cdprelay: the request's headers could not be read")
		}
		c.failPaused(k)
		return c.refuse(k, d)
	}
	k.params = p
	return true
}

// wantsUploads: the commands that hand the page files.
func wantsUploads(m *methodInfo) bool {
	return m.name == "DOM.setFileInputFiles" || m.name == "Input.dispatchDragEvent"
}

// uploadsStage (rules.Uploads): only files inside the upload folders, as
// their resolved paths.
func (c *clientConn) uploadsStage(k *cmd) bool {
	if len(k.a.files) == 0 {
		return true
	}
	files, err := rules.Uploads(k.pol.p.UploadDirs(c.inst.profile), k.a.files)
	if err != nil {
		return c.refuse(k, deny(rules.RuleUploads, "cdprelay: "+err.Error()))
	}
	p, err := rules.ReplaceFiles(k.m.name, k.params, files)
	if err != nil {
		return c.refuse(k, deny(rules.RuleUploads, "cdprelay: "+err.Error()))
	}
	k.params = p
	return true
}

// wantsTargetOnTab: the Target domain.
func wantsTargetOnTab(m *methodInfo) bool { return m.domain == domainTarget }

// targetOnTab (rules.TargetOnTab): past the ones the relay emulates, a
// tab's session sends Chrome only the Target methods rules.TargetOnTab
// allows.
func (c *clientConn) targetOnTab(k *cmd) bool {
	if k.r.sess != nil && k.r.sess.tab != nil && emulated(k.m, k.r.sess) == nil && !rules.TargetOnTab(k.m.name) {
		return c.refuse(k, deny(rules.RuleTargetTab, rules.MsgTargetTab(k.m.name)))
	}
	return true
}

// failPaused fails the paused request of a refused Fetch.continueRequest,
// continueResponse or fulfillRequest: Playwright, among others, does not
// fail the request itself when the relay refuses its answer, and a paused
// request nobody answers hangs the page.
func (c *clientConn) failPaused(k *cmd) {
	id, ok, _ := exactString(k.params, "requestId")
	if !ok || id == "" || k.r.via == nil {
		return
	}
	sid := ""
	if k.r.via.child {
		sid = k.r.via.id
	}
	st := c.inst.lock()
	st.fire(k.r.tab.id, sid, "Fetch.failRequest", map[string]any{"requestId": id, "errorReason": "BlockedByClient"})
	c.inst.unlock()
}

func deny(rule, msg string) Decision { return Decision{Verdict: Deny, Rule: rule, Message: msg} }
