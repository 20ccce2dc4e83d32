package relay

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/config"

	"github.com/gorilla/websocket"

	"github.com/cdprelay/cdprelay/internal/cdptest"
	"github.com/cdprelay/cdprelay/internal/fakeext"
)

// blocker is a fakeext.Handler that holds Runtime.evaluate on one tab
// until the test ends, as a tab busy with a long evaluation would. The
// relay's own commands (those of an attach) pass.
type blocker struct {
	tab     int
	entered chan string   // the method of each held command
	release chan struct{} // closed at cleanup
}

func newBlocker(t *testing.T, tab int) *blocker {
	b := &blocker{tab: tab, entered: make(chan string, 16), release: make(chan struct{})}
	// Registered before the harness's own cleanups run, so it runs after
	// them: the held handlers then find a closed connection.
	t.Cleanup(func() { close(b.release) })
	return b
}

func (b *blocker) handle(tabID int, sessionID, method string, params json.RawMessage) (any, error) {
	if tabID == b.tab && method == "Runtime.evaluate" {
		b.entered <- method
		<-b.release
	}
	return fakeext.DefaultHandler(tabID, sessionID, method, params)
}

func TestPopupIsAnnouncedWithOpener(t *testing.T) {
	t.Parallel()
	for _, autoAttach := range []bool{true, false} {
		t.Run(fmt.Sprintf("autoAttach=%t", autoAttach), func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, config.Config{})
			e := h.ext(fakeext.Options{Tabs: twoTabs})
			c := h.client()
			h.call(c, "", "Target.setDiscoverTargets", map[string]any{"discover": true})
			if autoAttach {
				h.autoAttach(c)
			} else {
				h.call(c, "", "Target.attachToTarget", map[string]any{"targetId": tid(2), "flatten": true})
			}
			from := len(c.Messages())
			popup := e.OpenTab(fakeext.Tab{URL: "https://popup.example/", Title: "Pop", OpenerTabID: 2})
			m, at := h.event(c, from, "Target.targetCreated")
			mustMatch(t, m.Raw, fmt.Sprintf(`{"method":"Target.targetCreated","params":{"targetInfo":{"targetId":%q,"type":"page","title":"Pop","url":"https://popup.example/","attached":false,"openerId":%q,"canAccessOpener":false,"browserContextId":"<any>"}}}`, popup.TargetID, tid(2)))
			if !autoAttach {
				// The extension's next message comes after the popup's
				// offer; by then an attach would have started.
				e.Event(2, "", "Page.loadEventFired", map[string]any{})
				_, i, err := c.WaitMessage(h.ctx, at+1, func(cdptest.Message) bool { return true })
				if err != nil {
					t.Fatal(err)
				}
				mustMatch(t, c.Messages()[i].Raw, `{"method":"Page.loadEventFired","sessionId":"pw-tab-1","params":{}}`)
				for _, cmd := range e.Commands() {
					if cmd.Method == "chrome.debugger.attach" && strings.Contains(string(cmd.Params), fmt.Sprintf(`"tabId":%d`, popup.ID)) {
						t.Error("the popup was attached without auto-attach")
					}
				}
				return
			}
			m, _ = h.event(c, at, "Target.attachedToTarget")
			mustMatch(t, m.Raw, fmt.Sprintf(`{"method":"Target.attachedToTarget","params":{"sessionId":"pw-tab-3","targetInfo":{"targetId":%q,"type":"page","title":"Pop","url":"https://popup.example/","attached":true,"openerId":%q,"canAccessOpener":false,"browserContextId":%q},"waitingForDebugger":false}}`, popup.TargetID, tid(2), fakeContext))
			h.call(c, "pw-tab-3", "Runtime.evaluate", map[string]any{"expression": "1"})
		})
	}
}

func TestPersonClosesTabs(t *testing.T) {
	t.Parallel()
	b := newBlocker(t, 1)
	h := newHarness(t, config.Config{})
	e := h.ext(fakeext.Options{Tabs: twoTabs, Handler: b.handle})
	c := h.client()
	h.autoAttach(c)
	from := len(c.Messages())

	// A command the tab will never answer, because it closes: Chrome's
	// answer for a session that is gone, after the session's detach.
	id := h.send(c, "pw-tab-1", "Runtime.evaluate", map[string]any{"expression": "while(true){}"})
	<-b.entered
	e.CloseTab(1)
	m, at := h.reply(c, id)
	mustMatch(t, m.Raw, fmt.Sprintf(`{"id":%d,"sessionId":"pw-tab-1","error":{"code":-32001,"message":"Session with given id not found."}}`, id))
	ev, i := h.event(c, from, "Target.detachedFromTarget")
	mustMatch(t, ev.Raw, detachedEvent("pw-tab-1", 1))
	if i > at {
		t.Errorf("the command failed before its session detached: %s", describe(c.Messages()[from:]))
	}

	// Later commands on the gone session fail at once.
	m = h.callMsg(c, "pw-tab-1", "Runtime.evaluate", map[string]any{"expression": "1"})
	mustMatch(t, m.Raw, fmt.Sprintf(`{"id":%d,"sessionId":"pw-tab-1","error":{"code":-32001,"message":"Session with given id not found."}}`, *m.ID))
	// One tab is left: the client stays.
	h.call(c, "pw-tab-2", "Runtime.evaluate", map[string]any{"expression": "1"})

	from = len(c.Messages())
	e.CloseTab(2)
	code, text := h.closed(c)
	if code != websocket.CloseNormalClosure || text != "All controlled tabs detached" {
		t.Errorf("close frame %d %q", code, text)
	}
	mustMatch(t, c.Messages()[from].Raw, detachedEvent("pw-tab-2", 2))
}

func TestClientClosingLastTabKeepsConnection(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config.Config{})
	e := h.ext(fakeext.Options{Tabs: twoTabs[:1]})
	c := h.client()
	h.autoAttach(c)
	res := h.call(c, "", "Target.closeTarget", map[string]any{"targetId": tid(1)})
	mustMatch(t, res, `{"success":true}`)
	h.event(c, 0, "Target.detachedFromTarget")
	h.waitFor("the tab to go", func() bool { return len(h.srv.Default().Status().Tabs) == 0 })
	// Playwright closes its last page and opens a new one: the connection
	// must survive that.
	h.call(c, "", "Browser.getVersion", nil)
	res = h.call(c, "", "Target.createTarget", map[string]any{"url": "about:blank"})
	mustMatch(t, res, fmt.Sprintf(`{"targetId":%q}`, tid(101)))
	if !e.Attached(101) {
		t.Error("new tab not attached")
	}
}

func TestCanceledByUser(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config.Config{})
	e := h.ext(fakeext.Options{Tabs: twoTabs})
	c := h.client()
	h.call(c, "", "Target.setDiscoverTargets", map[string]any{"discover": true})
	h.autoAttach(c)
	from := len(c.Messages())
	e.DetachByBrowser(1, "canceled_by_user")
	_, at := h.event(c, from, "Target.targetDestroyed")
	msgs := c.Messages()[from : at+1]
	if len(msgs) != 2 {
		t.Fatalf("messages: %s", describe(msgs))
	}
	mustMatch(t, msgs[0].Raw, detachedEventWhy("pw-tab-1", 1, "the person stopped sharing the tab (Cancel on the debugging bar)"))
	mustMatch(t, msgs[1].Raw, fmt.Sprintf(`{"method":"Target.targetDestroyed","params":{"targetId":%q}}`, tid(1)))
	// The tab is the person's again: not a target any more.
	res := h.call(c, "", "Target.getTargets", nil)
	mustMatch(t, res, `{"targetInfos":[`+pageInfo(2, "https://b.example/", "B", true)+`]}`)
	m := h.callMsg(c, "pw-tab-1", "Runtime.evaluate", map[string]any{"expression": "1"})
	if m.Error == nil || m.Error.Code != -32001 {
		t.Errorf("command on the cancelled tab: %s", m.Raw)
	}

	e.DetachByBrowser(2, "canceled_by_user")
	if code, text := h.closed(c); code != websocket.CloseNormalClosure || text != "All controlled tabs detached" {
		t.Errorf("close frame %d %q", code, text)
	}
}

func TestTargetClosedThenReofferedGetsNewSession(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config.Config{})
	e := h.ext(fakeext.Options{Tabs: twoTabs[:1]})
	c := h.client()
	h.autoAttach(c)
	from := len(c.Messages())
	// A frame navigated somewhere the debugger cannot follow: the tab
	// stays open, and the extension offers it again.
	e.DetachByBrowser(1, "target_closed")
	m, at := h.event(c, from, "Target.detachedFromTarget")
	mustMatch(t, m.Raw, detachedEvent("pw-tab-1", 1))
	if st := h.srv.Default().Status().Tabs; len(st) != 1 || st[0].Attached || st[0].Detached != "target_closed" {
		t.Errorf("status while detached: %+v", st)
	}
	e.Emit("chrome.tabs.onCreated", e.Tabs()[0])
	m, _ = h.event(c, at, "Target.attachedToTarget")
	mustMatch(t, m.Raw, attachedEvent("pw-tab-2", pageInfo(1, "https://a.example/", "A", true)))
	if st := h.srv.Default().Status().Tabs; len(st) != 1 || !st[0].Attached || st[0].Detached != "" {
		t.Errorf("status after the re-attach: %+v", st)
	}
	if !e.Attached(1) {
		t.Error("not attached again")
	}
	h.call(c, "pw-tab-2", "Runtime.evaluate", map[string]any{"expression": "1"})
	m2 := h.callMsg(c, "pw-tab-1", "Runtime.evaluate", map[string]any{"expression": "1"})
	if m2.Error == nil || m2.Error.Code != -32001 {
		t.Errorf("old session: %s", m2.Raw)
	}
	select {
	case <-c.Done():
		t.Fatalf("client closed: %v", c.CloseErr())
	default:
	}
}

// TestExtensionDisconnectClosesClient: an extension that does not come back
// within ExtensionGrace costs the client its connection, with the reason.
func TestExtensionDisconnectClosesClient(t *testing.T) {
	t.Parallel()
	b := newBlocker(t, 1)
	h := newHarness(t, config.Config{ExtensionGrace: 50 * time.Millisecond})
	e := h.ext(fakeext.Options{Tabs: twoTabs, Handler: b.handle})
	c := h.client()
	h.autoAttach(c)
	id := h.send(c, "pw-tab-1", "Runtime.evaluate", map[string]any{"expression": "while(true){}"})
	<-b.entered
	e.Close()
	code, text := h.closed(c)
	if code != websocket.CloseGoingAway || !strings.HasPrefix(text, "Extension disconnected: ") {
		t.Errorf("close frame %d %q", code, text)
	}
	// The pending command was answered before the close, after its
	// session's detach.
	m, at := h.reply(c, id)
	mustMatch(t, m.Raw, fmt.Sprintf(`{"id":%d,"sessionId":"pw-tab-1","error":{"code":-32001,"message":"Session with given id not found."}}`, id))
	_, i := h.event(c, 0, "Target.detachedFromTarget")
	if i > at {
		t.Errorf("the command failed before its session detached: %s", describe(c.Messages()))
	}
	h.waitFor("the instance to forget the tabs", func() bool {
		st := h.srv.Default().Status()
		return !st.Extension && !st.Client && len(st.Tabs) == 0
	})
}

func TestSecondClientIsRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config.Config{})
	h.ext(fakeext.Options{Tabs: twoTabs})
	c1 := h.client()
	h.autoAttach(c1)
	c2 := h.client()
	code, text := h.closed(c2)
	if code != websocket.ClosePolicyViolation || text != "Another CDP client is already connected to this instance" {
		t.Errorf("close frame %d %q", code, text)
	}
	if msgs := c2.Messages(); len(msgs) != 0 {
		t.Errorf("the refused client got %s", describe(msgs))
	}
	h.call(c1, "pw-tab-1", "Runtime.evaluate", map[string]any{"expression": "1"})
	h.call(c1, "", "Browser.getVersion", nil)
}

func TestClientDisconnectDetachesAndTabsStayShared(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config.Config{})
	e := h.ext(fakeext.Options{Tabs: twoTabs})
	c1 := h.client()
	if got := h.autoAttach(c1); strings.Join(got, ",") != "pw-tab-1,pw-tab-2" {
		t.Fatalf("sessions %v", got)
	}
	c1.Close()
	// What the client switched on in the tabs must not outlive it.
	h.waitFor("the debugger to leave both tabs", func() bool { return !e.Attached(1) && !e.Attached(2) })
	h.waitFor("the client to be gone", func() bool { return !h.srv.Default().Status().Client })
	if st := h.srv.Default().Status(); len(st.Tabs) != 2 {
		t.Fatalf("tabs no longer shared: %+v", st.Tabs)
	}

	c2 := h.client()
	if got := h.autoAttach(c2); strings.Join(got, ",") != "pw-tab-3,pw-tab-4" {
		t.Fatalf("sessions of the second client %v, want new ones", got)
	}
	if !e.Attached(1) || !e.Attached(2) {
		t.Error("not attached again")
	}
	h.call(c2, "pw-tab-3", "Runtime.evaluate", map[string]any{"expression": "1"})
	m := h.callMsg(c2, "pw-tab-1", "Runtime.evaluate", map[string]any{"expression": "1"})
	if m.Error == nil || m.Error.Code != -32001 {
		t.Errorf("the first client's session: %s", m.Raw)
	}
}

func TestClientDisconnectWhileAttaching(t *testing.T) {
	t.Parallel()
	var (
		mu      sync.Mutex
		hold    = true
		release = make(chan struct{})
	)
	attaching := make(chan struct{}, 4)
	gate := func(method string, _ []json.RawMessage) {
		mu.Lock()
		held := hold && method == "chrome.debugger.attach"
		mu.Unlock()
		if held {
			attaching <- struct{}{}
			<-release
		}
	}
	h := newHarness(t, config.Config{})
	e := h.ext(fakeext.Options{Tabs: twoTabs[:1], Gate: gate})
	c1 := h.client()
	h.send(c1, "", "Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true})
	<-attaching
	// The client goes while Chrome is still attaching; Chrome then
	// finishes the attach.
	c1.Close()
	h.waitFor("the client to be gone", func() bool { return !h.srv.Default().Status().Client })
	mu.Lock()
	hold = false
	mu.Unlock()
	close(release)
	// The relay must not leave the debugger on a tab nobody uses, or the
	// next client finds it taken.
	h.waitFor("the relay to detach the tab it attached for nobody", func() bool {
		for _, cmd := range e.Commands() {
			if cmd.Method == "chrome.debugger.detach" {
				return !e.Attached(1)
			}
		}
		return false
	})

	c2 := h.client()
	got := h.autoAttach(c2)
	if len(got) != 1 {
		t.Fatalf("the next client got sessions %v", got)
	}
	h.call(c2, got[0], "Runtime.evaluate", map[string]any{"expression": "1"})
}

func TestExtensionReconnectReplacesTheOld(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config.Config{ExtensionGrace: -1})
	e1 := h.ext(fakeext.Options{Tabs: twoTabs})
	c1 := h.client()
	h.autoAttach(c1)

	// A restarted service worker connects again before the old socket
	// times out.
	e2 := h.ext(fakeext.Options{Tabs: []fakeext.Tab{{ID: 7, URL: "https://seven.example/", Title: "Seven"}}})
	if code, text := closeFrame(t, e1.Err()); code != websocket.CloseNormalClosure || text != "replaced by a new extension connection" {
		t.Errorf("old extension's close frame %d %q", code, text)
	}
	if code, text := h.closed(c1); code != websocket.CloseGoingAway || text != "Extension disconnected: replaced by a new extension connection" {
		t.Errorf("client close frame %d %q", code, text)
	}
	h.waitFor("the client to be gone", func() bool { return !h.srv.Default().Status().Client })

	c2 := h.client()
	got := h.autoAttach(c2)
	if len(got) != 1 {
		t.Fatalf("sessions %v", got)
	}
	mustMatch(t, c2.Messages()[0].Raw, attachedEvent(got[0], pageInfo(7, "https://seven.example/", "Seven", true)))
	if !e2.Attached(7) {
		t.Error("tab 7 not attached")
	}
	h.call(c2, got[0], "Runtime.evaluate", map[string]any{"expression": "1"})
}

func TestLiveViewAttachSurvivesClientLeaving(t *testing.T) {
	t.Parallel()
	var (
		mu   sync.Mutex
		hold bool
	)
	release := make(chan struct{})
	attaching := make(chan struct{}, 4)
	gate := func(method string, _ []json.RawMessage) {
		mu.Lock()
		held := hold && method == "chrome.debugger.attach"
		mu.Unlock()
		if held {
			attaching <- struct{}{}
			<-release
		}
	}
	h := newHarness(t, config.Config{})
	h.ext(fakeext.Options{Tabs: twoTabs[:1], Gate: gate})
	c := h.client()
	h.call(c, "", "Browser.getVersion", nil)

	mu.Lock()
	hold = true
	mu.Unlock()
	opened := make(chan error, 1)
	go func() {
		th, err := OpenTab(h.ctx, h.srv.Default(), 1, func(api.TabEvent) {})
		if err == nil {
			th.Close()
		}
		opened <- err
	}()
	<-attaching
	c.Close()
	h.waitFor("the client to be gone", func() bool { return !h.srv.Default().Status().Client })
	mu.Lock()
	hold = false
	mu.Unlock()
	close(release)
	// The attach was the live view's, not the client's: it must stand.
	if err := <-opened; err != nil {
		t.Fatalf("OpenTab: %v", err)
	}
}

// A tab opened from a shared tab is the automation's only when the
// automation had just sent its opener input or script; after commands
// that only read the tab, it is the person's and is not taken.
func TestOpenedTabWhoseItIs(t *testing.T) {
	rec := &auditRecorder{}
	h := newHarness(t, config.Config{Observer: rec})
	e := h.ext(fakeext.Options{Tabs: twoTabs[:1], Stock: true})
	c := h.client()
	sess := h.autoAttach(c)[0]
	for _, m := range []string{"Page.captureScreenshot", "DOM.getDocument", "Runtime.getProperties"} {
		h.call(c, sess, m, map[string]any{"objectId": "1"})
	}
	from := len(c.Messages())
	person := e.OpenTab(fakeext.Tab{URL: "https://a.example/next", Title: "Next", OpenerTabID: 1})
	h.waitFor("the relay to decide", func() bool { return rec.find(api.KindAttach, "a tab the person opened") })
	for _, m := range c.Messages()[from:] {
		if strings.Contains(string(m.Raw), person.TargetID) {
			t.Fatalf("the person's tab reached the client: %s", m.Raw)
		}
	}
	h.call(c, sess, "Runtime.evaluate", map[string]any{"expression": "window.open('/popup'), 1"})
	popup := e.OpenTab(fakeext.Tab{URL: "https://a.example/popup", Title: "Popup", OpenerTabID: 1})
	m, _ := h.event(c, from, "Target.attachedToTarget")
	if !strings.Contains(string(m.Raw), popup.TargetID) {
		t.Fatalf("the automation's popup: %s", m.Raw)
	}
}
