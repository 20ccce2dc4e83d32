package relay

import (
	"strings"
	"sync"
	"testing"

	"github.com/cdprelay/cdprelay/relay/internal/config"
	"github.com/cdprelay/cdprelay/relay/internal/core"

	"github.com/cdprelay/cdprelay/internal/fakeext"
)

// profilePolicy denies Runtime.evaluate under the "strict" profile only,
// and records the profiles it was asked about.
type profilePolicy struct {
	mu   sync.Mutex
	seen []string
}

func (p *profilePolicy) Command(profile, method string, _ []byte) core.Decision {
	p.mu.Lock()
	p.seen = append(p.seen, profile)
	p.mu.Unlock()
	if profile == "strict" && method == "Runtime.evaluate" {
		return core.Decision{Verdict: core.Deny, Rule: "method:Runtime.evaluate", Message: "Denied by cdprelay policy: strict"}
	}
	return core.Decision{}
}
func (*profilePolicy) URL(string, string) core.Decision { return core.Decision{} }
func (*profilePolicy) MethodURL(string, string, string, bool) core.Decision {
	return core.Decision{}
}
func (*profilePolicy) FencesNavigation(string) bool { return false }
func (*profilePolicy) UploadDirs(string) []string   { return nil }

func TestInstanceProfiles(t *testing.T) {
	pol := &profilePolicy{}
	h := newHarness(t, config.Config{Policy: pol, DefaultProfile: "", ValidProfile: func(n string) bool { return n == "strict" }})
	if _, err := h.srv.NewInstanceWithProfile("nope"); err == nil || !strings.Contains(err.Error(), "no policy profile") {
		t.Fatalf("unknown profile: %v", err)
	}
	strict, err := h.srv.NewInstanceWithProfile("strict")
	if err != nil {
		t.Fatal(err)
	}
	if got := strict.Status().Profile; got != "strict" {
		t.Fatalf("profile %q", got)
	}
	// The strict instance refuses what the default one allows.
	h.extAt(h.extURL(strict), fakeext.Options{Tabs: []fakeext.Tab{{ID: 1}}})
	c := h.clientAt(h.cdpURL(strict))
	sess := h.autoAttach(c)[0]
	if m := h.callMsg(c, sess, "Runtime.evaluate", map[string]any{"expression": "1"}); m.Error == nil || !strings.Contains(m.Error.Message, "strict") {
		t.Fatalf("strict instance: %s", m.Raw)
	}
	h.ext(fakeext.Options{Tabs: []fakeext.Tab{{ID: 1}}})
	d := h.client()
	dsess := h.autoAttach(d)[0]
	h.call(d, dsess, "Runtime.evaluate", map[string]any{"expression": "1"})
}
