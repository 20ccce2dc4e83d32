package relay

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/cdprelay/cdprelay/relay/internal/person"
)

// The relay's own rules: refusals that hold whatever the operator's policy
// says, because without them a client could go around every other check.
// They run in the policy stage, after the operator's method rules.
//
//   - Nested commands. Target.sendMessageToTarget carries a whole CDP
//     command inside a string, and a non-flat session (auto-attach without
//     flatten) delivers and takes its messages that way: neither would pass
//     through the pipeline. Both are refused; flat sessions are what every
//     supported client uses.
//   - Target methods on a tab. Past the ones the relay emulates, a tab's
//     session may send Target.setAutoAttach (flat) and getTargetInfo, and
//     nothing else of the Target domain.
//   - Files. DOM.setFileInputFiles and Input.dispatchDragEvent make the
//     page read files of the machine the browser runs on, which a form
//     then sends anywhere. Only files inside the configured upload folders
//     (Policy.UploadDirs) are accepted, after symlinks and ".." are
//     resolved, and they go to Chrome as the resolved paths. Without
//     folders, uploads are refused.
//   - The relay's own origins. No URL-bearing command goes there
//     (ownorigins.go).
//   - Downloads. Browser.setDownloadBehavior and Page.setDownloadBehavior
//     are the relay's to answer (downloads.go): the folder a client names
//     must be one the operator allows.

// Rule ids of the relay's own rules, the label values of
// cdprelay_policy_refusals_total beside the policy's.
const (
	ruleNested              = "relay:nested-command"
	ruleBreakpointCondition = "relay:breakpoint-condition"
	ruleNonFlat             = "relay:non-flat-session"
	ruleTargetTab           = "relay:target-method-on-tab"
	ruleUploads             = "relay:uploads"
)

// RelayRules lists the rule ids of the relay's own refusals (its rules and
// the access stage's), for counters that start at zero.
func RelayRules() []string {
	return []string{ruleNested, ruleNonFlat, ruleTargetTab, ruleUploads, ruleCredentials, ruleSecret,
		ruleNeverShared, ruleOutsideFence, ruleTakeOver, ruleReadOnlyWrite, ruleBlindFrame, ruleStopped,
		person.RuleDialogAnswered, person.RuleUndoable, person.RuleUnstoppable, person.RuleDebuggerOff, ruleContext, ruleOwnOrigin, ruleSecretField, ruleUnscannable}
}

// targetOnTab are the Target methods a tab's session may send to Chrome.
var targetOnTab = map[string]bool{"Target.setAutoAttach": true, "Target.getTargetInfo": true}

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
		return c.refuse(k, deny(ruleNested, "cdprelay: Target.sendMessageToTarget carries a nested command past the relay's checks; use a flat session (Target.attachToTarget with flatten: true) and send the command on it"))
	case "Target.setAutoAttach":
		if k.a.autoAttach && (k.a.flatten == nil || !*k.a.flatten) {
			return c.refuse(k, deny(ruleNonFlat, "cdprelay: only flat sessions are supported (flatten: true)"))
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
	files, err := c.uploads(k.pol.p, k.a.files)
	if err != nil {
		return c.refuse(k, deny(ruleUploads, "cdprelay: "+err.Error()))
	}
	p, err := replaceFiles(k.m.name, k.params, files)
	if err != nil {
		return c.refuse(k, deny(ruleUploads, "cdprelay: "+err.Error()))
	}
	k.params = p
	return true
}

// wantsTargetOnTab: the Target domain.
func wantsTargetOnTab(m *methodInfo) bool { return m.domain == domainTarget }

// targetOnTab (rules.TargetOnTab): past the ones the relay emulates, a
// tab's session sends Chrome only the Target methods of targetOnTab.
func (c *clientConn) targetOnTab(k *cmd) bool {
	if k.r.sess != nil && k.r.sess.tab != nil && emulated(k.m, k.r.sess) == nil && !targetOnTab[k.m.name] {
		return c.refuse(k, deny(ruleTargetTab, "cdprelay: "+k.m.name+" is not available on a tab's session through the relay"))
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

// uploads resolves files for an upload and checks that each lies inside an
// upload folder. It returns the resolved paths.
func (c *clientConn) uploads(pol Policy, files []string) ([]string, error) {
	dirs := pol.UploadDirs(c.inst.profile)
	if len(dirs) == 0 {
		return nil, errors.New("uploads are off: set uploads_dir in the relay's policy to the folders files may be uploaded from")
	}
	var roots []string
	for _, d := range dirs {
		if r, err := filepath.EvalSymlinks(d); err == nil {
			roots = append(roots, r)
		}
	}
	out := make([]string, 0, len(files))
	for _, f := range files {
		if !filepath.IsAbs(f) {
			return nil, errors.New("an upload needs an absolute path: " + clipPath(f))
		}
		real, err := filepath.EvalSymlinks(filepath.Clean(f))
		if err != nil {
			return nil, errors.New("cannot upload " + clipPath(f) + ": it does not exist on the relay's machine")
		}
		if !inside(real, roots) {
			return nil, errors.New(clipPath(f) + " is outside the upload folders (uploads_dir: " + strings.Join(dirs, ", ") + ")")
		}
		out = append(out, real)
	}
	return out, nil
}

// inside reports whether path lies in one of roots (or is one).
func inside(path string, roots []string) bool {
	for _, r := range roots {
		rel, err := filepath.Rel(r, path)
		if err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(os.PathSeparator)) && !filepath.IsAbs(rel) {
			return true
		}
	}
	return false
}

func clipPath(p string) string {
	if len(p) > 120 {
		return p[:117] + "..."
	}
	return p
}

// replaceFiles puts the resolved files in place of the client's.
func replaceFiles(method string, params []byte, files []string) ([]byte, error) {
	var m map[string]jsontext.Value
	if err := decodeStruct(params, &m); err != nil {
		return nil, err
	}
	fs, err := jsonv2.Marshal(files)
	if err != nil {
		return nil, err
	}
	if method == "DOM.setFileInputFiles" {
		m["files"] = fs
	} else {
		var data map[string]jsontext.Value
		if err := jsonv2.Unmarshal(m["data"], &data); err != nil {
			return nil, err
		}
		data["files"] = fs
		if m["data"], err = jsonv2.Marshal(data, jsonv2.Deterministic(true)); err != nil {
			return nil, err
		}
	}
	return jsonv2.Marshal(m, jsonv2.Deterministic(true))
}
