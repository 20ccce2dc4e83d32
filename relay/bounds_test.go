package relay

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/config"
	"github.com/cdprelay/cdprelay/relay/internal/core"
	"github.com/cdprelay/cdprelay/relay/internal/metrics"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/cdprelay/cdprelay/internal/fakeext"
)

// waitLong polls cond for up to a minute: thousands of events take a
// while under -race on a loaded machine.
func waitLong(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func limitedCount(h *harness, limit string) float64 {
	return testutil.ToFloat64(h.srv.Cfg.Metrics.Limited[limit])
}

// TestTooManyTabs: a fake extension that offers more tabs than the bound,
// at its handshake and after: the instance keeps MaxTabs of them, counts
// every one past it, audits the first, and the client's Target.createTarget
// is refused with the reason. The relay stays up and serves the tabs it
// keeps.
func TestTooManyTabs(t *testing.T) {
	rec := &auditRecorder{}
	h := newHarness(t, config.Config{MaxTabs: 5, Observer: rec})
	var tabs []fakeext.Tab
	for i := 1; i <= 8; i++ {
		tabs = append(tabs, fakeext.Tab{ID: i, URL: fmt.Sprintf("https://t%d.example/", i)})
	}
	e := h.ext(fakeext.Options{Tabs: tabs})
	for i := 9; i <= 20; i++ {
		e.OpenTab(fakeext.Tab{ID: i, URL: fmt.Sprintf("https://t%d.example/", i)})
	}
	h.waitFor("the offers past the bound counted", func() bool { return limitedCount(h, metrics.LimitTabs) >= 15 })
	if n := len(h.srv.Default().Status().Tabs); n != 5 {
		t.Fatalf("the instance keeps %d tabs, want 5", n)
	}
	if !rec.find(api.KindDenied, "not shared: the instance keeps 5 tabs") {
		t.Error("no audit record of a tab not shared")
	}
	c := h.client()
	if got := len(h.autoAttach(c)); got != 5 {
		t.Errorf("the client was given %d tabs, want 5", got)
	}
	m := h.callMsg(c, "", "Target.createTarget", map[string]any{"url": "about:blank"})
	if m.Error == nil || !strings.Contains(m.Error.Message, "too many tabs") {
		t.Errorf("Target.createTarget past the bound: %s", m.Raw)
	}
	// A tab the person closes makes room for the next one offered.
	e.CloseTab(1)
	h.waitFor("a tab closed", func() bool { return len(h.srv.Default().Status().Tabs) == 4 })
	e.OpenTab(fakeext.Tab{ID: 21, URL: "https://t21.example/"})
	h.waitFor("the next tab kept", func() bool { return len(h.srv.Default().Status().Tabs) == 5 })
}

// TestTooManyTabsDefault: the default bound, against an extension that
// offers far more tabs than a person has.
func TestTooManyTabsDefault(t *testing.T) {
	h := newHarness(t, config.Config{})
	var tabs []fakeext.Tab
	for i := 1; i <= 1500; i++ {
		tabs = append(tabs, fakeext.Tab{ID: i, URL: fmt.Sprintf("https://t%d.example/", i)})
	}
	h.ext(fakeext.Options{Tabs: tabs})
	h.waitFor("the offers past the bound counted", func() bool { return limitedCount(h, metrics.LimitTabs) >= 500 })
	if n := len(h.srv.Default().Status().Tabs); n != 1000 {
		t.Fatalf("the instance keeps %d tabs, want the default 1000", n)
	}
}

// TestTooManyChildSessions: a page whose frames and workers Chrome
// attaches past the bound: those are detached at once and never announced
// to the client; the relay counts them and audits the first.
func TestTooManyChildSessions(t *testing.T) {
	rec := &auditRecorder{}
	h := newHarness(t, config.Config{Observer: rec})
	e := h.ext(fakeext.Options{Tabs: twoTabs[:1]})
	c := h.client()
	sess := h.autoAttach(c)[0]
	total := core.MaxSessions + core.MaxChildSessions + 10
	for i := 0; i < total; i++ {
		e.Event(1, "", "Target.attachedToTarget", map[string]any{
			"sessionId":          fmt.Sprintf("child-%d", i),
			"targetInfo":         map[string]any{"targetId": fmt.Sprintf("F%d", i), "type": "worker", "url": "https://a.example/w.js", "attached": true},
			"waitingForDebugger": false,
		})
	}
	// The client's own session and the children fill the table.
	waitLong(t, "the children past the bound counted", func() bool {
		return limitedCount(h, metrics.LimitChildSessions) >= float64(total+1-core.MaxSessions-core.MaxChildSessions)
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := c.Call(ctx, sess, "Runtime.evaluate", map[string]any{"expression": "1"}); err != nil { // the events before it are in
		t.Fatal(err)
	}
	announced, detached := 0, 0
	for _, m := range c.Messages() {
		if m.Method == "Target.attachedToTarget" && m.SessionID == sess {
			announced++
		}
	}
	for _, cmd := range e.Commands() {
		if strings.Contains(string(cmd.Params), `"Target.detachFromTarget"`) {
			detached++
		}
	}
	if announced > core.MaxSessions+core.MaxChildSessions || announced+detached < total {
		t.Errorf("%d children announced, %d detached, of %d", announced, detached, total)
	}
	if !rec.find(api.KindDenied, "a frame or worker was detached") {
		t.Error("no audit record of a child detached")
	}
}

// TestTooManyFrames: a page, on a site with tiers, with more frames than
// the relay follows: the tab is as strict as a frame it cannot follow
// (blind) until its next document, and what it keeps of them stays
// bounded.
func TestTooManyFrames(t *testing.T) {
	h := newHarness(t, config.Config{Policy: tiers})
	e := h.ext(fakeext.Options{Tabs: twoTabs[:1]})
	c := h.client()
	sess := h.autoAttach(c)[0]
	for i := 0; i < core.MaxPendingFrames+100; i++ {
		e.Event(1, "", "Page.frameNavigated", map[string]any{"frame": map[string]any{"id": fmt.Sprintf("sub%d", i), "parentId": tid(1), "loaderId": "L", "url": "https://a.example/f", "securityOrigin": "https://a.example", "mimeType": "text/html"}})
	}
	waitLong(t, "the frames past the bound counted", func() bool { return limitedCount(h, metrics.LimitFrames) >= 100 })
	in := h.srv.Default()
	st := in.Lock()
	n := len(st.Tabs[1].Frames)
	in.Unlock()
	if n > core.MaxPendingFrames+1 {
		t.Errorf("the tab keeps %d frames", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// Refused as the script's own exception.
	if res, err := c.Call(ctx, sess, "Runtime.evaluate", map[string]any{"expression": "1"}); err != nil || !strings.Contains(string(res), "cdprelay: blind") {
		t.Errorf("a tab past the frames bound is not blind: %s %v", res, err)
	}
}

// TestTooManyFramesInChild: the same in an out-of-process frame: a hostile
// page in a frame of a process of its own makes more frames in it than the
// relay follows. The frame's session is as strict as a frame it cannot
// follow (blind), what it keeps stays bounded, and the tab's own session
// is not made blind by it.
func TestTooManyFramesInChild(t *testing.T) {
	h := newHarness(t, config.Config{Policy: tiers})
	e := h.ext(fakeext.Options{Tabs: twoTabs[:1]})
	c := h.client()
	sess := h.autoAttach(c)[0]
	h.call(c, sess, "Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true})
	from := len(c.Messages())
	e.Event(1, "", "Target.attachedToTarget", map[string]any{"sessionId": "S-OOP", "waitingForDebugger": false,
		"targetInfo": map[string]any{"targetId": "F-OOP", "type": "iframe", "url": "https://a.example/widget", "title": "", "attached": true}})
	h.event(c, from, "Target.attachedToTarget")
	before := limitedCount(h, metrics.LimitFrames)
	for i := 0; i < core.MaxPendingFrames+100; i++ {
		e.Event(1, "S-OOP", "Page.frameNavigated", map[string]any{"frame": map[string]any{"id": fmt.Sprintf("inner%d", i), "parentId": "F-OOP", "loaderId": "L", "url": "https://a.example/f", "securityOrigin": "https://a.example", "mimeType": "text/html"}})
	}
	waitLong(t, "the frames past the bound counted", func() bool { return limitedCount(h, metrics.LimitFrames)-before >= 100 })
	in := h.srv.Default()
	st := in.Lock()
	n := len(st.Sessions["S-OOP"].Frames)
	in.Unlock()
	if n > core.MaxPendingFrames+1 {
		t.Errorf("the frame's session keeps %d frames", n)
	}
	if m := h.callMsg(c, "S-OOP", "Runtime.evaluate", map[string]any{"expression": "1"}); refusal(m) == "" {
		t.Errorf("a frame past the frames bound is not blind: %s", m.Raw)
	}
	if m := h.callMsg(c, sess, "DOM.getDocument", nil); m.Error != nil {
		t.Errorf("the tab's own session, whose document is full, is refused: %s", m.Raw)
	}
}

// What was decided of a frame's site is decided again when the policy
// changes: a tab whose sub-frame is on a site the new policy hides goes
// blind, though no event of the page came since.
func TestFramesDecidedAgainOnPolicyChange(t *testing.T) {
	h := newHarness(t, config.Config{Policy: tierPolicy{"ro.example": "read-only"}})
	e := h.ext(fakeext.Options{Tabs: twoTabs[:1]})
	c := h.client()
	h.autoAttach(c)
	e.Event(1, "", "Page.frameNavigated", map[string]any{"frame": map[string]any{"id": "sub", "parentId": tid(1), "loaderId": "L", "url": "https://x.example/f", "securityOrigin": "https://x.example", "mimeType": "text/html"}})
	in := h.srv.Default()
	access := func() string { return in.Status().Tabs[0].Access }
	h.waitFor("the frame noted", func() bool {
		st := in.Lock()
		defer in.Unlock()
		return st.Tabs[1].Frames["sub"].Url != ""
	})
	if got := access(); got != "full" {
		t.Fatalf("before the policy changed: %s", got)
	}
	h.srv.SetPolicy(tierPolicy{"x.example": "blind"})
	if got := access(); got != "blind" {
		t.Errorf("a frame on a site the new policy hides: the tab is %s", got)
	}
	h.srv.SetPolicy(tierPolicy{"ro.example": "read-only"})
	if got := access(); got != "full" {
		t.Errorf("the policy back as it was: the tab is %s", got)
	}
}

// A frame in a process of its own (a child session) is decided again too.
func TestChildDecidedAgainOnPolicyChange(t *testing.T) {
	h := newHarness(t, config.Config{Policy: tierPolicy{"ro.example": "read-only"}})
	e := h.ext(fakeext.Options{Tabs: twoTabs[:1]})
	c := h.client()
	sess := h.autoAttach(c)[0]
	h.call(c, sess, "Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true})
	from := len(c.Messages())
	e.Event(1, "", "Target.attachedToTarget", map[string]any{"sessionId": "CHILD", "targetInfo": map[string]any{"targetId": "FRAME", "type": "iframe", "url": "https://x.example/"}, "waitingForDebugger": false})
	h.event(c, from, "Target.attachedToTarget")
	in := h.srv.Default()
	childAccess := func() string {
		st := in.Lock()
		defer in.Unlock()
		if s := st.Sessions["CHILD"]; s != nil {
			return s.Acc.Level.String()
		}
		return "no child"
	}
	if got := childAccess(); got != "full" {
		t.Fatalf("before the policy changed: %s", got)
	}
	h.srv.SetPolicy(tierPolicy{"x.example": "blind"})
	if got := childAccess(); got != "blind" {
		t.Errorf("a child on a site the new policy hides is %s", got)
	}
}
