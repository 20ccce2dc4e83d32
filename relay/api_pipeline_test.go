package relay

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/cdprelay/cdprelay/internal/fakeext"
	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/config"
)

// apiDenier is a policy written against the api types alone, as a stage
// package writes its decisions: it denies one method.
type apiDenier struct{ method string }

func (p apiDenier) Command(_, method string, _ []byte) api.Decision {
	if method == p.method {
		return api.Decision{Verdict: api.Deny, Rule: "method:" + method, Message: "Denied by cdprelay policy: " + method}
	}
	return api.Decision{}
}
func (apiDenier) MethodURL(string, string, string, bool) api.Decision { return api.Decision{} }
func (apiDenier) URL(string, string) api.Decision                     { return api.Decision{} }
func (apiDenier) FencesNavigation(string) bool                        { return false }
func (apiDenier) UploadDirs(string) []string                          { return nil }

// apiRecorder is an api.Observer that keeps what it is told.
type apiRecorder struct {
	mu sync.Mutex
	ev []api.Event
}

func (r *apiRecorder) Observe(ev api.Event) {
	r.mu.Lock()
	r.ev = append(r.ev, ev)
	r.mu.Unlock()
}

func (r *apiRecorder) denied(method string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, ev := range r.ev {
		if ev.Kind == api.KindDenied && ev.Outcome == api.OutcomeDenied && ev.Method == method && ev.Rule == "method:"+method {
			return true
		}
	}
	return false
}

// TestAPIVocabularyThroughTheRelay: a relay configured with a policy and
// an observer written against the api types refuses what the policy
// denies (the tab never sees it) and records it with the api's kinds;
// an error it returns is the api's value.
func TestAPIVocabularyThroughTheRelay(t *testing.T) {
	rec := &apiRecorder{}
	h := newHarness(t, config.Config{Policy: apiDenier{method: "Runtime.evaluate"}, Observer: rec})
	e := h.ext(fakeext.Options{Tabs: []fakeext.Tab{{ID: 1, URL: "https://ok.test/"}}})
	c := h.client()
	sess := h.autoAttach(c)[0]
	before := len(e.Commands())
	m := h.callMsg(c, sess, "Runtime.evaluate", map[string]any{"expression": "1"})
	if m.Error == nil || !strings.Contains(m.Error.Message, "Denied by cdprelay policy: Runtime.evaluate") {
		t.Fatalf("Runtime.evaluate under a denying policy: %s", m.Raw)
	}
	if sent := cdpSent(e, before); len(sent) != 0 {
		t.Errorf("a denied command reached the tab: %q", sent)
	}
	h.waitFor("the denial recorded", func() bool { return rec.denied("Runtime.evaluate") })
	h.call(c, sess, "Page.enable", nil)

	_, err := OpenTab(context.Background(), h.srv.Default(), 99, func(api.TabEvent) {})
	if !errors.Is(err, api.ErrNoTab) {
		t.Errorf("OpenTab of a tab not shared: %v, want api.ErrNoTab", err)
	}
}
