package viewer

import (
	"strings"
	"testing"
	"time"
)

// A person stops and resumes the automation from the live view; the list
// says so at once, and bad requests get clear errors that change nothing.
func TestStopResumeFromTheLiveView(t *testing.T) {
	h := newHarness(t, Config{ListEvery: time.Hour}) // only changes push the list
	c, sess := h.client()
	v := h.viewer("", nil)
	v.waitType(msgHello)
	from := len(v.messages())
	v.send(map[string]any{"type": "stop", "instance": h.inst})
	v.wait(from, "the list saying stopped", func(m vmsg) bool {
		return m.Type == msgInstances && len(m.Instances) > 0 && m.Instances[0].Stopped && m.Instances[0].StoppedBy == v.name
	})
	if _, err := c.Call(h.ctx, sess, "Page.navigate", map[string]any{"url": "https://a.example/"}); err == nil || !strings.Contains(err.Error(), "a person stopped the automation") {
		t.Fatalf("a command while stopped: %v", err)
	}
	// Script is answered as its own exception, saying the same.
	if res, err := c.Call(h.ctx, sess, "Runtime.evaluate", map[string]any{"expression": "1"}); err != nil || !strings.Contains(string(res), "a person stopped the automation") {
		t.Fatalf("script while stopped: %s %v", res, err)
	}
	v.mustFail(map[string]any{"type": "stop", "instance": h.inst}, "already stopped")
	v.mustFail(map[string]any{"type": "stop", "instance": "nope"}, "no such instance")
	v.mustFail(map[string]any{"type": "stop"}, "needs an instance")
	from = len(v.messages())
	v.send(map[string]any{"type": "resume", "instance": h.inst})
	v.wait(from, "the list saying running", func(m vmsg) bool {
		return m.Type == msgInstances && len(m.Instances) > 0 && !m.Instances[0].Stopped
	})
	if _, err := c.Call(h.ctx, sess, "Runtime.evaluate", map[string]any{"expression": "1"}); err != nil {
		t.Fatalf("a command after resume: %v", err)
	}
	v.mustFail(map[string]any{"type": "resume", "instance": h.inst}, "not stopped")

	// A viewer that only watches may not.
	w := h.viewer("mode=view", nil)
	w.waitType(msgHello)
	w.mustFail(map[string]any{"type": "stop", "instance": h.inst}, "only watch")
	if stopped, _ := h.relay.Default().Stopped(); stopped {
		t.Fatal("a view-only viewer stopped the automation")
	}
}

// A dialog shows in the list with its text; the person's answer reaches
// the tab once, and a second answer is refused.
func TestDialogFromTheLiveView(t *testing.T) {
	h := newHarness(t, Config{ListEvery: time.Hour})
	v := h.viewer("", nil)
	v.waitType(msgHello)
	v.subscribe() // the tab is attached, as it is for a dialog to be seen
	from := len(v.messages())
	h.ext.Event(int(tabID), "", "Page.javascriptDialogOpening", map[string]any{"url": "https://example.com/", "message": "Leave the page?", "type": "confirm", "hasBrowserHandler": false, "defaultPrompt": ""})
	m, _ := v.wait(from, "the dialog in the list", func(m vmsg) bool {
		return m.Type == msgInstances && len(m.Instances) > 0 && len(m.Instances[0].Tabs) > 0 && m.Instances[0].Tabs[0].Dialog != nil
	})
	d := m.Instances[0].Tabs[0].Dialog
	if d.Type != "confirm" || d.Message != "Leave the page?" {
		t.Fatalf("dialog %+v", d)
	}
	v.mustFail(map[string]any{"type": "answer-dialog", "instance": h.inst, "tab": tabID}, "needs a tab and accept")
	v.send(map[string]any{"type": "answer-dialog", "instance": h.inst, "tab": tabID, "dialog": d.ID, "accept": true})
	calls := h.waitCommand("Page.handleJavaScriptDialog", 1)
	if !strings.Contains(string(calls[0].Params), `"accept":true`) {
		t.Fatalf("answered %s", calls[0].Params)
	}
	v.mustFail(map[string]any{"type": "answer-dialog", "instance": h.inst, "tab": tabID, "dialog": d.ID, "accept": false}, "already answered")
	h.ext.Event(int(tabID), "", "Page.javascriptDialogClosed", map[string]any{"result": true, "userInput": ""})
	v.wait(from, "the dialog gone", func(m vmsg) bool {
		return m.Type == msgInstances && len(m.Instances) > 0 && len(m.Instances[0].Tabs) > 0 && m.Instances[0].Tabs[0].Dialog == nil
	})
	v.mustFail(map[string]any{"type": "answer-dialog", "instance": h.inst, "tab": tabID, "dialog": d.ID, "accept": true}, "shows no dialog")
	if n := h.countCommands("Page.handleJavaScriptDialog"); n != 1 {
		t.Fatalf("%d answers reached the tab", n)
	}
}

// Approving or denying what is not waiting is a clear error.
func TestApprovalErrors(t *testing.T) {
	h := newHarness(t, Config{})
	v := h.viewer("", nil)
	v.waitType(msgHello)
	v.mustFail(map[string]any{"type": "approve", "instance": h.inst, "approval": 41}, "no command is waiting")
	v.mustFail(map[string]any{"type": "deny", "instance": h.inst, "approval": 41}, "no command is waiting")
	v.mustFail(map[string]any{"type": "approve", "instance": h.inst}, "needs an approval id")
}

// A tab Chrome let go of shows why in the list, until it is back.
func TestInstancesListSaysWhyATabWasLetGo(t *testing.T) {
	h := newHarness(t, Config{ListEvery: 20 * time.Millisecond})
	v := h.viewer("", nil)
	v.subscribe()
	h.waitCommand("Page.startScreencast", 1)
	from := len(v.messages())
	h.ext.RefuseAttach(tabID, "Cannot access a chrome:// URL")
	h.ext.DetachByBrowser(tabID, "target_closed", map[string]any{"cause": "restricted_url"})
	m, _ := v.wait(from, "the reason in the list", func(m vmsg) bool {
		return m.Type == msgInstances && len(m.Instances) > 0 && len(m.Instances[0].Tabs) > 0 && m.Instances[0].Tabs[0].Detached != ""
	})
	if tab := m.Instances[0].Tabs[0]; tab.Attached || !strings.Contains(tab.Detached, "a browser page") {
		t.Fatalf("tab = %+v", tab)
	}
	// The tab can be attached again: the relay takes it back for the
	// watching viewer, and the reason goes.
	h.ext.RefuseAttach(tabID, "")
	from = len(v.messages())
	v.wait(from, "the tab back, with no reason", func(m vmsg) bool {
		if m.Type != msgInstances || len(m.Instances) == 0 || len(m.Instances[0].Tabs) == 0 {
			return false
		}
		tab := m.Instances[0].Tabs[0]
		return tab.Attached && tab.Detached == ""
	})
}
