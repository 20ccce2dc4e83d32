package relay

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/config"
	"github.com/cdprelay/cdprelay/relay/internal/core"

	"github.com/cdprelay/cdprelay/internal/cdptest"
	"github.com/cdprelay/cdprelay/internal/fakeext"
)

// navAskPolicy asks about shop.example wherever a navigation there
// starts, as ask_domains does.
type navAskPolicy struct{ askPolicy }

func (navAskPolicy) AsksNavigation(string) bool { return true }
func (navAskPolicy) AskNavigation(_, url string) core.Decision {
	if strings.Contains(url, "shop.example") {
		return core.Decision{Verdict: core.Ask, Rule: "ask:domain"}
	}
	return core.Decision{}
}

// redirected is a Fetch.requestPaused of a redirect's hop in tab 1's main
// frame.
func redirected(id, url string) map[string]any {
	p := pausedDoc(id, url, "GET", map[string]string{"Accept": "text/html"})
	p["redirectedRequestId"] = "R0"
	return p
}

// TestNavigationAskedWhereItEnds: a redirect (or a link, or a script) that
// takes a tab to an asked host from another is held while the person is
// asked, goes on if they approve, and is failed if they deny, nobody
// answers, the automation is stopped or its client leaves. A navigation
// within the host, or one a person approved already, is not asked again.
func TestNavigationAskedWhereItEnds(t *testing.T) {
	setup := func(t *testing.T, timeout time.Duration) (*harness, *fakeext.Ext, *core.Instance, *cdptest.Client, string) {
		h := newHarness(t, config.Config{Policy: navAskPolicy{}, ApprovalTimeout: timeout})
		e := h.ext(fakeext.Options{Tabs: []fakeext.Tab{{ID: 1, URL: "https://a.example/", Title: "A"}}})
		c := h.client()
		sess := h.autoAttach(c)[0]
		if len(fenceCalls(t, e, "Fetch.enable")) == 0 {
			t.Fatal("no backstop on the tab")
		}
		return h, e, h.srv.Default(), c, sess
	}
	asked := func(h *harness, in *core.Instance) api.ApprovalStatus {
		var a []api.ApprovalStatus
		h.waitFor("the person asked", func() bool { a = in.Status().Approvals; return len(a) == 1 })
		return a[0]
	}
	answered := func(t *testing.T, e *fakeext.Ext, from int) string {
		var got string
		deadline := time.Now().Add(5 * time.Second)
		for got == "" {
			for _, s := range cdpSent(e, from) {
				if strings.HasPrefix(s, "Fetch.continueRequest") || strings.HasPrefix(s, "Fetch.failRequest") {
					got = s
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("the request was not answered: %q", cdpSent(e, from))
			}
			time.Sleep(5 * time.Millisecond)
		}
		return got
	}
	for _, tc := range []struct {
		name   string
		answer func(*harness, *core.Instance, api.ApprovalStatus)
		want   string
	}{
		{"approved", func(_ *harness, in *core.Instance, a api.ApprovalStatus) { in.Approve(a.ID, "viewer-1") }, `Fetch.continueRequest {"requestId":"R1"}`},
		{"denied", func(_ *harness, in *core.Instance, a api.ApprovalStatus) { in.Deny(a.ID, "viewer-1") }, `Fetch.failRequest {"errorReason":"Aborted","requestId":"R1"}`},
		{"unanswered", func(*harness, *core.Instance, api.ApprovalStatus) {}, `Fetch.failRequest {"errorReason":"Aborted","requestId":"R1"}`},
		{"stopped", func(_ *harness, in *core.Instance, _ api.ApprovalStatus) { in.Stop("viewer-1") }, `Fetch.failRequest {"errorReason":"Aborted","requestId":"R1"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			timeout := time.Hour
			if tc.name == "unanswered" {
				timeout = 300 * time.Millisecond
			}
			h, e, in, _, _ := setup(t, timeout)
			from := len(e.Commands())
			e.Event(1, "", "Fetch.requestPaused", redirected("R1", "https://shop.example/pay?order=1"))
			a := asked(h, in)
			if !strings.Contains(a.What, "https://shop.example/pay") || a.Rule != "ask:domain" || a.TabID != 1 {
				t.Fatalf("asked %+v", a)
			}
			if got := cdpSent(e, from); indexOf(got, "Fetch.") >= 0 {
				t.Fatalf("answered before the person: %q", got)
			}
			tc.answer(h, in, a)
			if got := answered(t, e, from); got != tc.want {
				t.Fatalf("the request: %s, want %s", got, tc.want)
			}
			if n := len(in.Status().Approvals); n != 0 {
				t.Fatalf("%d approvals left", n)
			}
			// A second viewer's late approval (of one denied, timed out or
			// stopped) lets nothing through, and nothing is sent again.
			sent := len(e.Commands())
			if err := in.Approve(a.ID, "viewer-2"); !errors.Is(err, api.ErrNoApproval) {
				t.Fatalf("a late approval: %v", err)
			}
			time.Sleep(50 * time.Millisecond)
			if got := cdpSent(e, sent); indexOf(got, "Fetch.") >= 0 {
				t.Fatalf("sent after a late approval: %q", got)
			}
		})
	}

	t.Run("client leaves", func(t *testing.T) {
		h, e, in, _, _ := setup(t, time.Hour)
		from := len(e.Commands())
		e.Event(1, "", "Fetch.requestPaused", redirected("R1", "https://shop.example/pay"))
		asked(h, in)
		currentClient(in).Close(1000, "bye")
		if got := answered(t, e, from); got != `Fetch.failRequest {"errorReason":"Aborted","requestId":"R1"}` {
			t.Fatalf("the request: %s", got)
		}
		// Failed before the debugger goes, which would let it go on.
		h.waitFor("the detach", func() bool {
			for _, cmd := range e.Commands()[from:] {
				if cmd.Method == "chrome.debugger.detach" {
					return true
				}
			}
			return false
		})
		fail, detach := -1, -1
		for i, cmd := range e.Commands()[from:] {
			switch {
			case fail < 0 && strings.Contains(string(cmd.Params), "Fetch.failRequest"):
				fail = i
			case detach < 0 && cmd.Method == "chrome.debugger.detach":
				detach = i
			}
		}
		if fail > detach {
			t.Fatalf("failed at %d, detached at %d", fail, detach)
		}
	})

	t.Run("within the host and approved", func(t *testing.T) {
		h, e, in, cl, sess := setup(t, time.Hour)
		// The client's own navigation is asked at the command; approved,
		// its requests to that host are not asked again.
		nav := h.send(cl, sess, "Page.navigate", map[string]any{"url": "https://shop.example/checkout"})
		a := asked(h, in)
		in.Approve(a.ID, "viewer-1")
		h.reply(cl, nav)
		from := len(e.Commands())
		e.Event(1, "", "Fetch.requestPaused", redirected("R2", "https://shop.example/checkout/step2"))
		if got := answered(t, e, from); got != `Fetch.continueRequest {"requestId":"R2"}` {
			t.Fatalf("an approved navigation's redirect: %s", got)
		}
		// On the asked host, going within it is not asked.
		e.Navigate(1, "https://shop.example/checkout/step2", "Shop")
		from = len(e.Commands())
		e.Event(1, "", "Fetch.requestPaused", redirected("R3", "https://shop.example/done"))
		if got := answered(t, e, from); got != `Fetch.continueRequest {"requestId":"R3"}` {
			t.Fatalf("within the host: %s", got)
		}
		// Left and come back by a link: asked again.
		e.Navigate(1, "https://a.example/again", "A")
		e.Event(1, "", "Fetch.requestPaused", pausedDoc("R4", "https://shop.example/", "GET", nil))
		asked(h, in)
	})

	t.Run("Target.createTarget", func(t *testing.T) {
		h, e, _, cl, _ := setup(t, time.Hour)
		from := len(e.Commands())
		res := h.call(cl, "", "Target.createTarget", map[string]any{"url": "https://a.example/redirects"})
		var r struct{ TargetID string }
		json.Unmarshal(res, &r)
		var create, nav string
		h.waitFor("the new tab's navigation", func() bool {
			for _, cmd := range e.Commands()[from:] {
				switch {
				case cmd.Method == "chrome.tabs.create":
					create = string(cmd.Params)
				case strings.Contains(string(cmd.Params), `"Page.navigate"`):
					nav = string(cmd.Params)
				}
			}
			return nav != ""
		})
		if !strings.Contains(create, `"about:blank"`) || !strings.Contains(nav, "https://a.example/redirects") || r.TargetID == "" {
			t.Fatalf("opened with %s, then %s", create, nav)
		}
	})
}
