package relay

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/cdp"
	"github.com/cdprelay/cdprelay/relay/internal/config"

	"github.com/cdprelay/cdprelay/internal/fakeext"
)

// Managed browsers, against the fake extension giving Chrome's exact texts:
// a policy of the browser keeps chrome.debugger out of a tab, and the
// client, the audit log and the live view say which policy and where to
// look.

// policyRefusals are Chrome's texts of a policy's refusal to attach, with
// the policy the relay names. The first two were seen on Chromium 156 (a
// site in ExtensionSettings' runtime_blocked_hosts; DeveloperToolsAvailability
// 2); the last two are the texts Chrome's documentation gives for newer
// versions.
var policyRefusals = []struct {
	name, chrome, policy string
	says                 string // in the words of the client's error
}{
	{"blocked host", "This page cannot be scripted due to an ExtensionsSettings policy.", "ExtensionSettings (runtime_blocked_hosts)", "runtime_blocked_hosts"},
	{"developer tools off", "Cannot attach to this target.", "DeveloperToolsAvailability", "DeveloperToolsAvailability"},
	{"any blocked host", "Host access is restricted by policy.", "ExtensionSettings (runtime_blocked_hosts)", "runtime_blocked_hosts"},
	{"screenshots", "Screenshot capture is restricted by policy.", "ScreenCaptureAllowed, DisableScreenshots or a data-loss-prevention rule", "ScreenCaptureAllowed"},
}

// TestPolicyRefusesAttach: Chrome refuses to attach a tab because of a
// policy; the client that asks for the tab gets an error that names the
// policy and chrome://policy, the live view lists the tab as refused with
// the policy, and the audit log records it. With either extension: the
// relay reads Chrome's own text. (The stock extension's tabs come without
// target ids, so a tab Chrome never let in is no target a client can name:
// there the live view and the audit log say it.)
func TestPolicyRefusesAttach(t *testing.T) {
	t.Parallel()
	for _, x := range extensions {
		for _, p := range policyRefusals {
			t.Run(x.name+"/"+p.name, func(t *testing.T) {
				t.Parallel()
				rec := &auditRecorder{}
				h := newHarness(t, config.Config{Observer: rec})
				e := h.ext(x.with(fakeext.Options{Tabs: twoTabs}))
				e.RefuseAttach(1, p.chrome)
				c := h.client()
				if got := h.autoAttach(c); len(got) != 1 {
					t.Fatalf("auto-attach announced %v; want the one tab Chrome lets in", got)
				}
				if !x.stock {
					m := h.callMsg(c, "", "Target.attachToTarget", map[string]any{"targetId": tid(1), "flatten": true})
					if m.Error == nil || !strings.Contains(m.Error.Message, p.chrome) || !strings.Contains(m.Error.Message, p.says) || !strings.Contains(m.Error.Message, "chrome://policy") {
						t.Fatalf("attach refused by a policy: %s", m.Raw)
					}
				}
				st := h.srv.Default().Status()
				if len(st.Refused) != 1 || st.Refused[0].TabID != 1 || st.Refused[0].Policy != p.policy || st.Refused[0].Origin != "https://a.example" ||
					!strings.Contains(st.Refused[0].Reason, "chrome://policy") {
					t.Errorf("live view's refusals: %+v", st.Refused)
				}
				if !rec.find(api.KindAttach, p.policy) {
					t.Errorf("no audit record naming %s: %+v", p.policy, rec.ev)
				}
				if x.stock {
					return
				}
				// Once Chrome lets it in, it is no longer listed.
				e.RefuseAttach(1, "")
				h.call(c, "", "Target.attachToTarget", map[string]any{"targetId": tid(1), "flatten": true})
				if st := h.srv.Default().Status(); len(st.Refused) != 0 {
					t.Errorf("refusals after the tab was attached: %+v", st.Refused)
				}
			})
		}
	}
}

// TestPolicyDetachTold: our extension says a policy made Chrome detach a
// tab (the person took it to a site the policy keeps extensions off): the
// client's console and its detach say so in words, and so do the live
// view's tab status and refusals and the audit log.
func TestPolicyDetachTold(t *testing.T) {
	t.Parallel()
	rec := &auditRecorder{}
	h := newHarness(t, config.Config{Observer: rec})
	e := h.ext(fakeext.Options{Tabs: twoTabs, Features: ourFeatures})
	c := h.client()
	h.autoAttach(c)
	h.call(c, "pw-tab-1", "Log.enable", nil)
	from := len(c.Messages())
	e.RefuseAttach(1, policyRefusals[0].chrome)
	e.DetachByBrowser(1, "target_closed", map[string]any{"cause": cdp.CausePolicyBlockedHost})

	warn, _ := h.event(c, from, "Log.entryAdded")
	var w struct{ Entry struct{ Level, Text string } }
	json.Unmarshal(warn.Params, &w)
	if w.Entry.Level != "warning" || !strings.Contains(w.Entry.Text, "runtime_blocked_hosts") || !strings.Contains(w.Entry.Text, "chrome://policy") {
		t.Errorf("console warning: %s", warn.Raw)
	}
	det, _ := h.event(c, from, "Target.detachedFromTarget")
	var d struct{ Reason string }
	json.Unmarshal(det.Params, &d)
	if !strings.Contains(d.Reason, "ExtensionSettings") {
		t.Errorf("detach: %s", det.Raw)
	}
	st := h.srv.Default().Status()
	for _, ts := range st.Tabs {
		if ts.TabID == 1 && !strings.Contains(ts.Detached, "chrome://policy") {
			t.Errorf("tab status: %+v", ts)
		}
	}
	if len(st.Refused) != 1 || st.Refused[0].Policy != "ExtensionSettings (runtime_blocked_hosts)" {
		t.Errorf("refusals: %+v", st.Refused)
	}
	// The record is written once the instance's lock is let go, which
	// may be after the client heard of the detach.
	h.waitFor("the audit record of the detach naming the policy", func() bool { return rec.find(api.KindDetach, "a policy of the browser") })
}

// TestPolicyWithdrawnListed: our extension takes back the offer of a tab
// a policy keeps the debugger out of; the tab is no target, and the live
// view lists it as refused, with the policy.
func TestPolicyWithdrawnListed(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config.Config{})
	e := h.ext(fakeext.Options{Tabs: twoTabs, Features: ourFeatures})
	c := h.client()
	h.autoAttach(c)
	e.Emit("chrome.tabs.onRemoved", 2, map[string]any{"windowId": 1, "isWindowClosing": false, "withdrawn": true, "cause": cdp.CausePolicyDevTools})
	h.waitFor("the refusal listed", func() bool { return len(h.srv.Default().Status().Refused) == 1 })
	r := h.srv.Default().Status().Refused[0]
	if r.TabID != 2 || r.Policy != "DeveloperToolsAvailability" || !strings.Contains(r.Reason, "developer tools") || r.Origin != "https://b.example" {
		t.Errorf("refusal: %+v", r)
	}
}

// TestPolicyCommandError: a policy that comes while a tab is attached makes
// its commands fail with Chrome's text; the client's error explains it.
// Page.navigate to a site the policy keeps extensions off fails with
// "Not allowed", explained too. Other errors are left as Chrome gives them.
func TestPolicyCommandError(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config.Config{})
	h.ext(fakeext.Options{Tabs: twoTabs, Handler: func(tabID int, _, method string, _ json.RawMessage) (any, error) {
		switch {
		case method == "Runtime.evaluate" && tabID == 1:
			return nil, errors.New(policyRefusals[0].chrome)
		case method == "Page.navigate":
			return nil, fakeext.CDPError(-32000, "Not allowed")
		case method == "DOM.getDocument":
			return nil, fakeext.CDPError(-32000, "Not allowed")
		}
		return fakeext.DefaultHandler(tabID, "", method, nil)
	}})
	c := h.client()
	h.autoAttach(c)
	m := h.callMsg(c, "pw-tab-1", "Runtime.evaluate", map[string]any{"expression": "1"})
	if m.Error == nil || !strings.HasPrefix(m.Error.Message, policyRefusals[0].chrome) || !strings.Contains(m.Error.Message, "chrome://policy") {
		t.Errorf("command refused by a policy: %s", m.Raw)
	}
	m = h.callMsg(c, "pw-tab-2", "Page.navigate", map[string]any{"url": "https://blocked.example/"})
	if m.Error == nil || m.Error.Code != -32000 || !strings.Contains(m.Error.Message, "runtime_blocked_hosts") {
		t.Errorf("navigation refused by a policy: %s", m.Raw)
	}
	m = h.callMsg(c, "pw-tab-2", "DOM.getDocument", nil)
	mustMatch(t, m.Raw, fmt.Sprintf(`{"id":%d,"sessionId":"pw-tab-2","error":{"code":-32000,"message":"Not allowed"}}`, *m.ID))
	if st := h.srv.Default().Status(); len(st.Refused) != 2 {
		t.Errorf("refusals: %+v", st.Refused)
	}
}

// TestPolicyDetachFailsNavigation: a navigation under way when Chrome
// detaches the tab for a policy fails with the policy in words, before the
// client hears of the session's end (a client that heard of the end first
// reports the navigation as a closed page's, with no reason).
func TestPolicyDetachFailsNavigation(t *testing.T) {
	t.Parallel()
	entered, release := make(chan struct{}), make(chan struct{})
	defer close(release)
	h := newHarness(t, config.Config{})
	e := h.ext(fakeext.Options{Tabs: twoTabs, Features: ourFeatures, Handler: func(tab int, sid, method string, params json.RawMessage) (any, error) {
		if method == "Page.navigate" {
			close(entered)
			<-release
		}
		return fakeext.DefaultHandler(tab, sid, method, params)
	}})
	c := h.client()
	h.autoAttach(c)
	from := len(c.Messages())
	nav := h.send(c, "pw-tab-1", "Page.navigate", map[string]any{"url": "https://blocked.example/"})
	<-entered
	e.RefuseAttach(1, policyRefusals[0].chrome)
	e.DetachByBrowser(1, "target_closed", map[string]any{"cause": cdp.CausePolicyBlockedHost})
	r, at := h.reply(c, nav)
	if r.Error == nil || !strings.Contains(r.Error.Message, "runtime_blocked_hosts") || !strings.Contains(r.Error.Message, "chrome://policy") {
		t.Fatalf("the navigation's answer: %s", r.Raw)
	}
	if _, i := h.event(c, from, "Target.detachedFromTarget"); i < at {
		t.Errorf("the client heard of the session's end (message %d) before the navigation's answer (message %d)", i, at)
	}
}
