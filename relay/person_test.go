package relay

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/config"
	"github.com/cdprelay/cdprelay/relay/internal/core"

	"github.com/cdprelay/cdprelay/internal/fakeext"
)

func sentMethods(e *fakeext.Ext, from int) []string {
	var out []string
	for _, cmd := range commandsSince(e, from) {
		var args []json.RawMessage
		if json.Unmarshal(cmd.Params, &args) == nil && len(args) > 1 && cmd.Method == "chrome.debugger.sendCommand" {
			var m string
			_ = json.Unmarshal(args[1], &m)
			out = append(out, m)
		}
	}
	return out
}

func hasMethod(ms []string, m string) bool {
	for _, x := range ms {
		if x == m {
			return true
		}
	}
	return false
}

// Stop fails what is under way at once, refuses what comes, and keeps the
// client connected and informed; Resume lets it go on.
func TestStopAndResume(t *testing.T) {
	rec := &auditRecorder{}
	h := newHarness(t, config.Config{Observer: rec})
	page := newBusyPage()
	e := h.ext(fakeext.Options{Tabs: twoTabs[:1], Handler: page.handler})
	page.e = e
	c := h.client()
	sess := h.autoAttach(c)[0]
	h.call(c, sess, "Runtime.enable", nil)
	in := h.srv.Default()
	id := h.send(c, sess, "Runtime.evaluate", map[string]any{"expression": "while(true){}"})
	page.waitBusy(h, "")
	from := len(c.Messages())
	if err := in.Stop("viewer-1"); err != nil {
		t.Fatal(err)
	}
	m, _ := h.reply(c, id)
	// Script is answered as its own exception, saying why.
	if m.Error != nil || refusal(m) != "Error: "+api.MsgStopped {
		t.Fatalf("the command under way: %s", m.Raw)
	}
	h.waitFor("the script is ended", func() bool {
		return len(page.received(`Debugger.resume {"terminateOnResume":true}`)) == 1 && !page.isBusy("")
	})
	h.waitFor("what it set is undone", func() bool { return rec.find(api.KindStop, "the Stop by viewer-1 undid") })
	ev, _ := h.event(c, from, "CDPRelay.stopped")
	if !strings.Contains(string(ev.Raw), `"stopped":true`) || !strings.Contains(string(ev.Raw), "viewer-1") {
		t.Fatalf("stopped event %s", ev.Raw)
	}
	h.event(c, from, "Log.entryAdded")
	if err := in.Stop("viewer-2"); !errors.Is(err, api.ErrStopped) {
		t.Fatalf("second stop: %v", err)
	}
	if st := in.Status(); !st.Stopped || st.StoppedBy != "viewer-1" {
		t.Fatalf("status %+v", st)
	}
	sent := len(e.Commands())
	for _, method := range []string{"Runtime.evaluate", "Target.getTargets", "Input.insertText", "Browser.getVersion"} {
		m := h.callMsg(c, sess, method, map[string]any{"expression": "1", "text": "x"})
		if r := refusal(m); r != api.MsgStopped && r != "Error: "+api.MsgStopped {
			t.Errorf("%s while stopped: %s", method, m.Raw)
		}
	}
	if got := sentMethods(e, sent); len(got) != 0 {
		t.Fatalf("reached the tab while stopped: %v", got)
	}
	// Events still flow.
	from = len(c.Messages())
	e.Event(1, "", "Runtime.consoleAPICalled", map[string]any{"type": "log", "args": []any{}})
	h.event(c, from, "Runtime.consoleAPICalled")

	if err := in.Resume("viewer-1"); err != nil {
		t.Fatal(err)
	}
	if err := in.Resume("viewer-1"); !errors.Is(err, api.ErrNotStopped) {
		t.Fatalf("second resume: %v", err)
	}
	if m := h.callMsg(c, sess, "Runtime.evaluate", map[string]any{"expression": "1"}); m.Error != nil {
		t.Fatalf("after resume: %s", m.Raw)
	}
	if !rec.find(api.KindStop, "stopped by viewer-1; 1 commands under way failed") || !rec.find(api.KindResume, "4 commands refused while stopped") {
		t.Errorf("the audit log of the Stop and the Resume: %+v", rec.ev)
	}
}

// While stopped, the page does not wait for an automation that may not
// answer: its paused requests go on.
func TestStoppedRequestsContinue(t *testing.T) {
	h := newHarness(t, config.Config{})
	e := h.ext(fakeext.Options{Tabs: twoTabs[:1]})
	c := h.client()
	sess := h.autoAttach(c)[0]
	h.call(c, sess, "Fetch.enable", map[string]any{"patterns": []any{map[string]any{"urlPattern": "*"}}})
	if err := h.srv.Default().Stop("p"); err != nil {
		t.Fatal(err)
	}
	sent := len(e.Commands())
	e.Event(1, "", "Fetch.requestPaused", map[string]any{"requestId": "R9", "request": map[string]any{"url": "https://a.example/x"}, "resourceType": "XHR"})
	h.waitFor("the relay continues it", func() bool { return hasMethod(sentMethods(e, sent), "Fetch.continueRequest") })
	for _, m := range c.Messages() {
		if m.Method == "Fetch.requestPaused" {
			t.Fatalf("the client got %s", m.Raw)
		}
	}
}

// An emulated command a Stop catches is answered msgStopped.
func TestStopCatchesEmulatedCommands(t *testing.T) {
	hold, arrived := make(chan struct{}), make(chan struct{})
	var once sync.Once
	h := newHarness(t, config.Config{})
	h.ext(fakeext.Options{Tabs: twoTabs[:1], Gate: func(method string, args []json.RawMessage) {
		if method == "chrome.tabs.create" {
			once.Do(func() { close(arrived) })
			<-hold
		}
	}})
	defer close(hold)
	c := h.client()
	h.autoAttach(c)
	id := h.send(c, "", "Target.createTarget", map[string]any{"url": "about:blank"})
	<-arrived
	if err := h.srv.Default().Stop("p"); err != nil {
		t.Fatal(err)
	}
	m, _ := h.reply(c, id)
	if m.Error == nil || m.Error.Message != api.MsgStopped {
		t.Fatalf("createTarget under way: %s", m.Raw)
	}
}

func TestDialogs(t *testing.T) {
	rec := &auditRecorder{}
	h := newHarness(t, config.Config{DialogTimeout: 200 * time.Millisecond, Observer: rec})
	e := h.ext(fakeext.Options{Tabs: twoTabs})
	c := h.client()
	sess := h.autoAttach(c)[0]
	in := h.srv.Default()
	dialogOf := func() *api.DialogStatus { return in.Status().Tabs[0].Dialog }
	open := func(typ, msg string) {
		e.Event(1, "", "Page.javascriptDialogOpening", map[string]any{"url": "https://a.example/", "message": msg, "type": typ, "hasBrowserHandler": false, "defaultPrompt": ""})
		h.waitFor("the dialog shows", func() bool { return dialogOf() != nil })
	}
	closed := func(result bool) {
		e.Event(1, "", "Page.javascriptDialogClosed", map[string]any{"result": result, "userInput": ""})
		h.waitFor("the dialog closes", func() bool { return dialogOf() == nil })
	}

	// The person answers first; the automation's answer is refused.
	open("confirm", "Delete everything?")
	if d := dialogOf(); d.Type != "confirm" || d.Message != "Delete everything?" {
		t.Fatalf("dialog %+v", d)
	}
	sent := len(e.Commands())
	if err := in.AnswerDialog(1, 0, true, "", "viewer-1"); err != nil {
		t.Fatal(err)
	}
	if got := sentMethods(e, sent); len(got) != 1 || got[0] != "Page.handleJavaScriptDialog" || !strings.Contains(string(e.Commands()[sent].Params), `"accept":true`) {
		t.Fatalf("sent %v", got)
	}
	m := h.callMsg(c, sess, "Page.handleJavaScriptDialog", map[string]any{"accept": false})
	if m.Error == nil || !strings.Contains(m.Error.Message, "already answered by viewer-1") {
		t.Fatalf("the automation's answer after the person's: %s", m.Raw)
	}
	if err := in.AnswerDialog(1, 0, false, "", "viewer-2"); !errors.Is(err, ErrDialogAnswered) {
		t.Fatalf("a second answer: %v", err)
	}
	closed(true)
	if err := in.AnswerDialog(1, 0, true, "", "viewer-1"); !errors.Is(err, ErrNoDialog) {
		t.Fatalf("answer with no dialog: %v", err)
	}
	if err := in.AnswerDialog(99, 0, true, "", "viewer-1"); !errors.Is(err, api.ErrNoTab) {
		t.Fatalf("answer on no tab: %v", err)
	}

	// The automation answers first; the person's answer is refused.
	open("alert", "hi")
	if m := h.callMsg(c, sess, "Page.handleJavaScriptDialog", map[string]any{"accept": true}); m.Error != nil {
		t.Fatalf("the automation's answer: %s", m.Raw)
	}
	if err := in.AnswerDialog(1, 0, true, "", "viewer-1"); !errors.Is(err, ErrDialogAnswered) {
		t.Fatalf("the person's answer after the automation's: %v", err)
	}
	closed(true)

	// Nobody answers: the relay does, by type.
	sent = len(e.Commands())
	open("prompt", "Name?")
	h.waitFor("the relay answers", func() bool { return hasMethod(sentMethods(e, sent), "Page.handleJavaScriptDialog") })
	var args []json.RawMessage
	for _, cmd := range commandsSince(e, sent) {
		if strings.Contains(string(cmd.Params), "handleJavaScriptDialog") {
			_ = json.Unmarshal(cmd.Params, &args)
		}
	}
	if !strings.Contains(string(args[2]), `"accept":false`) {
		t.Fatalf("a prompt nobody answered: %s", args[2])
	}
	closed(false)
	// The other types: alert and beforeunload accepted, confirm dismissed.
	for _, tc := range []struct {
		typ    string
		accept bool
	}{{"alert", true}, {"beforeunload", true}, {"confirm", false}} {
		sent = len(e.Commands())
		open(tc.typ, "nobody answers")
		h.waitFor("the relay answers the "+tc.typ, func() bool { return hasMethod(sentMethods(e, sent), "Page.handleJavaScriptDialog") })
		want := `"accept":` + strconv.FormatBool(tc.accept)
		for _, cmd := range commandsSince(e, sent) {
			if strings.Contains(string(cmd.Params), "handleJavaScriptDialog") && !strings.Contains(string(cmd.Params), want) {
				t.Errorf("a %s nobody answered: %s, want %s", tc.typ, cmd.Params, want)
			}
		}
		closed(tc.accept)
	}
	// Every dialog, its answer and who gave it are in the audit log.
	for _, detail := range []string{"opened confirm", "confirm accepted by viewer-1", "alert accepted by", "prompt dismissed by", "beforeunload accepted by", "confirm dismissed by"} {
		if !rec.find(api.KindDialog, detail) {
			t.Errorf("no audit record %q of kind %s; have %+v", detail, api.KindDialog, rec.ev)
		}
	}
}

// askPolicy asks before navigations to shop.example and the methods it
// lists.
type askPolicy struct {
	methods map[string]bool
	submit  bool
}

func (p askPolicy) Command(_, method string, _ []byte) core.Decision {
	if p.methods[method] {
		return core.Decision{Verdict: core.Ask, Rule: "ask:method:" + method}
	}
	return core.Decision{}
}
func (askPolicy) MethodURL(_, method, url string, _ bool) core.Decision {
	if strings.Contains(url, "shop.example") {
		return core.Decision{Verdict: core.Ask, Rule: "ask:domain"}
	}
	return core.Decision{}
}
func (askPolicy) URL(string, string) core.Decision { return core.Decision{} }
func (askPolicy) FencesNavigation(string) bool     { return false }
func (askPolicy) UploadDirs(string) []string       { return nil }
func (p askPolicy) AsksSubmit(string) bool         { return p.submit }

func TestApprovals(t *testing.T) {
	rec := &auditRecorder{}
	h := newHarness(t, config.Config{Policy: askPolicy{}, ApprovalTimeout: time.Hour, Observer: rec})
	e := h.ext(fakeext.Options{Tabs: twoTabs})
	c := h.client()
	sess := h.autoAttach(c)
	in := h.srv.Default()
	asked := func(n int) []api.ApprovalStatus {
		var a []api.ApprovalStatus
		h.waitFor("the approvals", func() bool { a = in.Status().Approvals; return len(a) == n })
		return a
	}
	sent := len(e.Commands())
	nav := h.send(c, sess[0], "Page.navigate", map[string]any{"url": "https://shop.example/checkout"})
	a := asked(1)[0]
	if a.What != "navigate to https://shop.example/checkout" || a.TabID != 1 || a.Rule != "ask:domain" {
		t.Fatalf("approval %+v", a)
	}
	// Behind it, on the same tab, the next command waits; the other tab
	// goes on.
	next := h.send(c, sess[0], "Runtime.evaluate", map[string]any{"expression": "1"})
	if m := h.callMsg(c, sess[1], "Runtime.evaluate", map[string]any{"expression": "2"}); m.Error != nil {
		t.Fatalf("the other tab: %s", m.Raw)
	}
	if got := sentMethods(e, sent); len(got) != 1 || got[0] != "Runtime.evaluate" {
		t.Fatalf("sent while held: %v", got)
	}
	if err := in.Approve(a.ID, "viewer-1"); err != nil {
		t.Fatal(err)
	}
	m1, _ := h.reply(c, nav)
	m2, _ := h.reply(c, next)
	if m1.Error != nil || m2.Error != nil {
		t.Fatalf("after approval: %s %s", m1.Raw, m2.Raw)
	}
	if got := sentMethods(e, sent); len(got) != 3 || got[1] != "Page.navigate" || got[2] != "Runtime.evaluate" {
		t.Fatalf("sent after approval: %v", got)
	}
	if err := in.Approve(a.ID, "viewer-1"); !errors.Is(err, api.ErrNoApproval) {
		t.Fatalf("a second approval: %v", err)
	}
	if err := in.Deny(12345, "viewer-1"); !errors.Is(err, api.ErrNoApproval) {
		t.Fatalf("a denial of nothing: %v", err)
	}

	// Denied.
	nav = h.send(c, sess[0], "Page.navigate", map[string]any{"url": "https://shop.example/pay"})
	a = asked(1)[0]
	if err := in.Deny(a.ID, "viewer-1"); err != nil {
		t.Fatal(err)
	}
	if m, _ := h.reply(c, nav); m.Error == nil || m.Error.Message != "cdprelay: a person denied navigate to https://shop.example/pay" {
		t.Fatalf("denied: %s", m.Raw)
	}

	// Two at once, one per tab: listed oldest first, each answered by
	// itself.
	nav = h.send(c, sess[0], "Page.navigate", map[string]any{"url": "https://shop.example/a"})
	asked(1)
	nav2 := h.send(c, sess[1], "Page.navigate", map[string]any{"url": "https://shop.example/b"})
	two := asked(2)
	if two[0].ID >= two[1].ID || two[0].TabID != 1 || two[1].TabID != 2 {
		t.Fatalf("two approvals, not oldest first: %+v", two)
	}
	if err := in.Deny(two[1].ID, "viewer-1"); err != nil {
		t.Fatal(err)
	}
	if m, _ := h.reply(c, nav2); m.Error == nil {
		t.Fatalf("denied: %s", m.Raw)
	}
	if left := asked(1); left[0].ID != two[0].ID {
		t.Fatalf("left %+v, want %d", left, two[0].ID)
	}
	if err := in.Deny(two[0].ID, "viewer-1"); err != nil {
		t.Fatal(err)
	}
	if m, _ := h.reply(c, nav); m.Error == nil {
		t.Fatalf("denied: %s", m.Raw)
	}

	// Stopped while held.
	nav = h.send(c, sess[0], "Page.navigate", map[string]any{"url": "https://shop.example/pay"})
	asked(1)
	if err := in.Stop("viewer-1"); err != nil {
		t.Fatal(err)
	}
	if m, _ := h.reply(c, nav); m.Error == nil || m.Error.Message != api.MsgStopped {
		t.Fatalf("held at stop: %s", m.Raw)
	}
	asked(0)
	// Who approved and who denied what, and the Stop, are audited.
	for _, want := range []struct{ kind, detail string }{
		{api.KindApproval, "approved by viewer-1: navigate to https://shop.example/checkout"},
		{api.KindApproval, "denied by viewer-1: navigate to https://shop.example/pay"},
		{api.KindStop, "stopped by viewer-1; 1 commands under way failed"},
	} {
		if !rec.find(want.kind, want.detail) {
			t.Errorf("no audit record %q of kind %s; have %+v", want.detail, want.kind, rec.ev)
		}
	}
}

func TestApprovalTimeout(t *testing.T) {
	h := newHarness(t, config.Config{Policy: askPolicy{}, ApprovalTimeout: 100 * time.Millisecond})
	h.ext(fakeext.Options{Tabs: twoTabs[:1]})
	c := h.client()
	sess := h.autoAttach(c)[0]
	m := h.callMsg(c, sess, "Target.createTarget", map[string]any{"url": "https://shop.example/"})
	if m.Error == nil || !strings.Contains(m.Error.Message, "a person denied open a new tab at https://shop.example/: nobody answered within 100ms") {
		t.Fatalf("unanswered: %s", m.Raw)
	}
}

// With submit asking on, the relay looks at what a press would land on:
// a form's submit control is asked about, with its label; anything else
// goes on.
func TestAskSubmit(t *testing.T) {
	page := newFakePage(1, "https://a.example")
	page.setAt(&fakeNode{id: 20, name: "BUTTON", in: tid(1), role: "button", label: "Place  order", form: true})
	h := newHarness(t, config.Config{Policy: askPolicy{submit: true}, ApprovalTimeout: time.Hour})
	e := h.ext(fakeext.Options{Tabs: twoTabs[:1], Handler: page.handle})
	page.e.Store(e)
	c := h.client()
	sess := h.autoAttach(c)[0]
	in := h.srv.Default()
	mouse := func(typ string) int64 {
		return h.send(c, sess, "Input.dispatchMouseEvent", map[string]any{"type": typ, "x": 10, "y": 20, "button": "left", "clickCount": 1})
	}
	h.reply(c, mouse("mouseMoved"))
	sent := len(e.Commands())
	press := mouse("mousePressed")
	release := mouse("mouseReleased")
	var a []api.ApprovalStatus
	h.waitFor("the press is asked about", func() bool { a = in.Status().Approvals; return len(a) == 1 })
	if a[0].What != `click the submit button "Place order" on a.example` || a[0].Rule != "ask:submit" {
		t.Fatalf("approval %+v", a[0])
	}
	for _, m := range sentMethods(e, sent) {
		if m == "Input.dispatchMouseEvent" {
			t.Fatal("the press went before it was approved")
		}
	}
	if err := in.Approve(a[0].ID, "viewer-1"); err != nil {
		t.Fatal(err)
	}
	h.reply(c, press)
	h.reply(c, release)
	var order []string
	for _, cmd := range commandsSince(e, sent) {
		for _, typ := range []string{"mousePressed", "mouseReleased"} {
			if strings.Contains(string(cmd.Params), typ) {
				order = append(order, typ)
			}
		}
	}
	if len(order) != 2 || order[0] != "mousePressed" {
		t.Fatalf("sent %v", order)
	}
	// A press on something else goes on unasked.
	page.setAt(&fakeNode{id: 21, name: "A", attrs: []string{"href", "/help"}, in: tid(1), role: "link", label: "Help"})
	if m, _ := h.reply(c, mouse("mousePressed")); m.Error != nil {
		t.Fatalf("press on a link: %s", m.Raw)
	}
	if len(in.Status().Approvals) != 0 {
		t.Fatal("asked about a link")
	}
	// The relay's world is its own.
	from := len(c.Messages())
	h.call(c, sess, "Runtime.enable", nil)
	e.Event(1, "", "Runtime.executionContextCreated", map[string]any{"context": map[string]any{"id": 77, "origin": "https://a.example", "name": "cdprelay", "uniqueId": "u77", "auxData": map[string]any{"isDefault": false, "type": "isolated", "frameId": tid(1)}}})
	h.call(c, sess, "Runtime.evaluate", map[string]any{"expression": "1"})
	for _, m := range c.Messages()[from:] {
		if strings.Contains(string(m.Raw), `"name":"cdprelay"`) {
			t.Fatalf("the client saw the relay's world: %s", m.Raw)
		}
	}
}

// Held commands count toward the client's commands in flight.
func TestHeldCountsInFlight(t *testing.T) {
	h := newHarness(t, config.Config{Policy: askPolicy{}, ApprovalTimeout: time.Hour, MaxInFlight: 2})
	h.ext(fakeext.Options{Tabs: twoTabs})
	c := h.client()
	sess := h.autoAttach(c)
	in := h.srv.Default()
	nav := h.send(c, sess[0], "Page.navigate", map[string]any{"url": "https://shop.example/"})
	behind := h.send(c, sess[0], "Runtime.evaluate", map[string]any{"expression": "1"})
	h.waitFor("both held", func() bool { cl := currentClient(in); return cl != nil && cl.Inflight.Load() == 2 })
	m := h.callMsg(c, sess[1], "Runtime.evaluate", map[string]any{"expression": "2"})
	if m.Error == nil || !strings.Contains(m.Error.Message, "waiting for the browser") {
		t.Fatalf("a third command with two held: %s", m.Raw)
	}
	a := in.Status().Approvals
	if len(a) != 1 {
		t.Fatalf("approvals %+v", a)
	}
	if err := in.Deny(a[0].ID, "p"); err != nil {
		t.Fatal(err)
	}
	h.reply(c, nav)
	if r, _ := h.reply(c, behind); r.Error != nil {
		t.Fatalf("the command behind the denied one: %s", r.Raw)
	}
	h.waitFor("nothing in flight", func() bool { return currentClient(in).Inflight.Load() == 0 })
}

// A command that waits for its tab to be resumed (a password manager's
// frame took the debugger away) is refused by a Stop that comes
// meanwhile, at once, and never reaches the tab once the tab is back.
func TestStopWhileWaitingForResume(t *testing.T) {
	ag := holdAttach(2) // the tab, then its resume
	h := newHarness(t, config.Config{})
	e := h.ext(fakeext.Options{Tabs: twoTabs[:1], Features: ourFeatures, Gate: ag.gate})
	c := h.client()
	h.autoAttach(c)
	h.call(c, "pw-tab-1", "Runtime.enable", nil)
	from := len(c.Messages())
	e.DetachByBrowser(1, "target_closed", map[string]any{"cause": "extension_frame", "cleared": true, "guard": true})
	h.event(c, from, "Runtime.executionContextsCleared")
	h.waitFor("the resume to start", func() bool { return ag.count() == 2 })
	waiting := h.send(c, "pw-tab-1", "Runtime.evaluate", map[string]any{"expression": "'after the stop'"})
	h.waitFor("the command to wait for the resume", func() bool { return h.srv.Default().ResumeWaits.Load() == 1 })
	if err := h.srv.Default().Stop("viewer-1"); err != nil {
		t.Fatal(err)
	}
	m, _ := h.reply(c, waiting) // before the tab is back
	if r := refusal(m); r != "Error: "+api.MsgStopped {
		t.Fatalf("the waiting command: %s", m.Raw)
	}
	sent := len(e.Commands())
	close(ag.release)
	h.waitFor("the tab is back", func() bool { return e.Attached(1) })
	// A command after the tab is back shows the resume has run its course.
	if r := refusal(h.callMsg(c, "pw-tab-1", "DOM.enable", nil)); r != api.MsgStopped {
		t.Fatalf("while stopped: %q", r)
	}
	for _, cmd := range commandsSince(e, sent) {
		if strings.Contains(string(cmd.Params), "after the stop") {
			t.Fatalf("reached the tab after the Stop: %s", cmd.Params)
		}
	}
}

// TestDialogAnsweredAgain: when Chrome does not take the relay's answer to
// a dialog nobody answered, the relay tries again, a few times, so that
// the tab does not hang for good; once the dialog closes it stops.
func TestDialogAnsweredAgain(t *testing.T) {
	var mu sync.Mutex
	tries := 0
	h := newHarness(t, config.Config{DialogTimeout: 50 * time.Millisecond})
	e := h.ext(fakeext.Options{Tabs: twoTabs, Handler: func(tabID int, sid, method string, p json.RawMessage) (any, error) {
		if method == "Page.handleJavaScriptDialog" {
			mu.Lock()
			tries++
			n := tries
			mu.Unlock()
			if n < 3 {
				return nil, fakeext.CDPError(-32000, "Internal error")
			}
		}
		return fakeext.DefaultHandler(tabID, sid, method, p)
	}})
	c := h.client()
	h.autoAttach(c)
	in := h.srv.Default()
	e.Event(1, "", "Page.javascriptDialogOpening", map[string]any{"url": "https://a.example/", "message": "hi", "type": "alert", "hasBrowserHandler": false, "defaultPrompt": ""})
	h.waitFor("the third try", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return tries >= 3
	})
	e.Event(1, "", "Page.javascriptDialogClosed", map[string]any{"result": true, "userInput": ""})
	h.waitFor("the dialog closes", func() bool { return in.Status().Tabs[0].Dialog == nil })
	time.Sleep(200 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if tries != 3 {
		t.Errorf("%d answers sent, want 3: the third was taken", tries)
	}
}

// TestDialogAnsweredBeforeLettingGo: a dialog still open when the client
// leaves is answered, by its type, before the relay detaches from its tab:
// Chrome knows a dialog only in the debugger session it opened under, and
// no later one could answer it. The status then shows no dialog.
func TestDialogAnsweredBeforeLettingGo(t *testing.T) {
	h := newHarness(t, config.Config{DialogTimeout: time.Hour})
	e := h.ext(fakeext.Options{Tabs: twoTabs})
	c := h.client()
	h.autoAttach(c)
	in := h.srv.Default()
	e.Event(1, "", "Page.javascriptDialogOpening", map[string]any{"url": "https://a.example/", "message": "sure?", "type": "confirm", "hasBrowserHandler": false, "defaultPrompt": ""})
	h.waitFor("the dialog shows", func() bool { return in.Status().Tabs[0].Dialog != nil })
	from := len(e.Commands())
	c.Close()
	answered, detached := -1, -1
	h.waitFor("the tab let go", func() bool {
		for i, cmd := range commandsSince(e, from) {
			p := string(cmd.Params)
			switch {
			case answered < 0 && strings.Contains(p, `"Page.handleJavaScriptDialog"`) && strings.Contains(p, `"tabId":1`):
				answered = i
			case detached < 0 && cmd.Method == "chrome.debugger.detach" && strings.Contains(p, `"tabId":1`):
				detached = i
			}
		}
		return detached >= 0
	})
	if answered < 0 || answered > detached {
		t.Fatalf("the dialog was answered at %d, the tab detached at %d", answered, detached)
	}
	if p := string(commandsSince(e, from)[answered].Params); !strings.Contains(p, `"accept":false`) {
		t.Errorf("a confirm let go of: %s", p)
	}
	h.waitFor("no dialog in the status", func() bool { return in.Status().Tabs[0].Dialog == nil })
}
