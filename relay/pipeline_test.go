package relay

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/config"
	"github.com/cdprelay/cdprelay/relay/internal/core"

	"github.com/cdprelay/cdprelay/internal/fakeext"
)

// pinPolicy refuses file: URLs and one method, and records what it was
// asked, so that a test can tell which stage a command reached.
type pinPolicy struct{ urls chan string }

func (p pinPolicy) Command(_, method string, _ []byte) core.Decision {
	if method == "Network.getAllCookies" {
		return core.Decision{Verdict: core.Deny, Rule: "method:Network.getAllCookies", Message: "Denied by cdprelay policy: cookies"}
	}
	return core.Decision{}
}

func (p pinPolicy) MethodURL(profile, _, url string, found bool) core.Decision {
	if !found {
		return core.Decision{}
	}
	return p.URL(profile, url)
}

func (p pinPolicy) URL(_, url string) core.Decision {
	select {
	case p.urls <- url:
	default:
	}
	if strings.HasPrefix(url, "file:") {
		return core.Decision{Verdict: core.Deny, Rule: "url:scheme", Message: "Denied by cdprelay policy: file: URLs are not allowed"}
	}
	return core.Decision{}
}

func (pinPolicy) FencesNavigation(string) bool { return false }
func (pinPolicy) UploadDirs(string) []string   { return nil }

// The order of the stages is a security contract: what the policy refuses
// never reaches the emulation or the tab, and the value the policy judged
// is the one the emulation acts on.
func TestPipelineOrder(t *testing.T) {
	pol := pinPolicy{urls: make(chan string, 16)}
	h := newHarness(t, config.Config{Policy: pol})
	e := h.ext(fakeext.Options{Tabs: twoTabs[:1]})
	c := h.client()
	sess := h.autoAttach(c)[0]

	t.Run("a denied createTarget never reaches the extension", func(t *testing.T) {
		before := len(e.Commands())
		m := h.callMsg(c, "", "Target.createTarget", map[string]any{"url": "file:///etc/passwd"})
		if m.Error == nil || !strings.Contains(m.Error.Message, "file:") {
			t.Fatalf("reply %s", m.Raw)
		}
		for _, cmd := range commandsSince(e, before) {
			t.Errorf("reached the extension: %s %s", cmd.Method, cmd.Params)
		}
	})

	t.Run("the emulation opens the URL the policy judged", func(t *testing.T) {
		for len(pol.urls) > 0 {
			<-pol.urls
		}
		before := len(e.Commands())
		// encoding/json would read "URL" into a field named url; Chrome,
		// and the relay, read the key exactly.
		res := h.call(c, "", "Target.createTarget", rawParams(`{"url":"about:blank","URL":"file:///etc/passwd"}`))
		if !strings.Contains(string(res), "targetId") {
			t.Fatalf("result %s", res)
		}
		if judged := <-pol.urls; judged != "about:blank" {
			t.Fatalf("the policy judged %q", judged)
		}
		var created []string
		for _, cmd := range commandsSince(e, before) {
			if cmd.Method == "chrome.tabs.create" {
				created = append(created, string(cmd.Params))
			}
		}
		if len(created) != 1 || !strings.Contains(created[0], `"url":"about:blank"`) || strings.Contains(created[0], "file:") {
			t.Fatalf("chrome.tabs.create calls: %v", created)
		}
	})

	t.Run("a key given twice is refused before the policy", func(t *testing.T) {
		for len(pol.urls) > 0 {
			<-pol.urls
		}
		before := len(e.Commands())
		m := h.callMsg(c, sess, "Page.navigate", rawParams(`{"url":"https://a.example/","url":"file:///etc/passwd"}`))
		if m.Error == nil || m.Error.Code != core.CodeInvalidParams {
			t.Fatalf("reply %s", m.Raw)
		}
		if len(pol.urls) != 0 {
			t.Fatalf("the policy judged %q", <-pol.urls)
		}
		if got := commandsSince(e, before); len(got) != 0 {
			t.Fatalf("reached the extension: %v", got)
		}
	})

	t.Run("an unknown session is answered before the policy", func(t *testing.T) {
		m := h.callMsg(c, "nope", "Network.getAllCookies", nil)
		if m.Error == nil || m.Error.Code != core.CodeNoSession || m.SessionID != "nope" {
			t.Fatalf("reply %s", m.Raw)
		}
	})

	t.Run("take-over refuses after the policy allowed", func(t *testing.T) {
		if err := h.srv.Default().TakeControl(1, "viewer-1"); err != nil {
			t.Fatal(err)
		}
		defer h.srv.Default().ReleaseControl(1, "viewer-1")
		before := len(e.Commands())
		m := h.callMsg(c, sess, "Input.dispatchMouseEvent", map[string]any{"type": "mouseMoved", "x": 1, "y": 1})
		if m.Error == nil || !strings.Contains(m.Error.Message, "taken control") {
			t.Fatalf("reply %s", m.Raw)
		}
		// A policy denial wins over the take-over's.
		m = h.callMsg(c, sess, "Network.getAllCookies", nil)
		if m.Error == nil || !strings.Contains(m.Error.Message, "cookies") {
			t.Fatalf("reply %s", m.Raw)
		}
		if got := commandsSince(e, before); len(got) != 0 {
			t.Fatalf("reached the extension: %v", got)
		}
	})
}

// rawParams lets a test send params exactly as written.
type rawParams string

func (r rawParams) MarshalJSON() ([]byte, error) { return []byte(r), nil }

// A panic in one instance's background work ends that instance's sockets
// and nobody else's.
func TestPanicStaysInItsInstance(t *testing.T) {
	h := newHarness(t, config.Config{})
	a := h.srv.Default()
	b, err := h.srv.NewInstance()
	if err != nil {
		t.Fatal(err)
	}
	h.ext(fakeext.Options{Tabs: twoTabs[:1]})
	h.extAt(h.extURL(b), fakeext.Options{Tabs: twoTabs[1:]})
	ca := h.client()
	cb := h.clientAt(h.cdpURL(b))
	h.autoAttach(ca)
	sb := h.autoAttach(cb)[0]

	a.Tasks.Spawn("test", func() { panic("a bug in one instance") })
	code, reason := h.closed(ca)
	if code != 1011 || !strings.Contains(reason, "internal error") {
		t.Fatalf("instance a's client closed with %d %q", code, reason)
	}
	// b's client still works.
	if res := h.call(cb, sb, "Runtime.evaluate", map[string]any{"expression": "1"}); len(res) == 0 {
		t.Fatal("no result from b")
	}
	if got := testCounter(t, h.srv.Cfg.Metrics.Panics); got != 1 {
		t.Fatalf("panics counted: %v", got)
	}
}

// A panic while the instance's lock is held leaves that instance unusable:
// its sockets close, it leaves the server's list, what asks it anything is
// refused at once, and the other instances, the live view's list and
// shutdown carry on.
func TestPanicUnderLockWedgesOnlyItsInstance(t *testing.T) {
	h := newHarness(t, config.Config{})
	a := h.srv.Default()
	b, err := h.srv.NewInstance()
	if err != nil {
		t.Fatal(err)
	}
	h.ext(fakeext.Options{Tabs: twoTabs[:1]})
	h.extAt(h.extURL(b), fakeext.Options{Tabs: twoTabs[1:]})
	ca := h.client()
	cb := h.clientAt(h.cdpURL(b))
	h.autoAttach(ca)
	sb := h.autoAttach(cb)[0]

	a.Tasks.Spawn("test", func() {
		a.Lock()
		panic("a bug with the lock held")
	})
	code, reason := h.closed(ca)
	if code != 1011 || !strings.Contains(reason, "internal error") {
		t.Fatalf("instance a's client closed with %d %q", code, reason)
	}
	h.waitFor("a is out of the list", func() bool {
		for _, in := range h.srv.Instances() {
			if in == a {
				return false
			}
		}
		return true
	})
	if err := a.Stop("p"); !errors.Is(err, api.ErrWedged) {
		t.Fatalf("Stop on the wedged instance: %v", err)
	}
	if st := a.Status(); len(st.Tabs) != 0 {
		t.Fatalf("status %+v", st)
	}
	if res := h.call(cb, sb, "Runtime.evaluate", map[string]any{"expression": "1"}); len(res) == 0 {
		t.Fatal("no result from b")
	}
	resp, err := http.Get(h.hs.URL + "/json/version")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("discovery of the wedged default instance: %d", resp.StatusCode)
	}
}
