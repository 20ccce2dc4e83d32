package viewer

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/internal/fakeext"
	"github.com/cdprelay/cdprelay/relay"
)

// tenantHarness is the harness with alice's and bob's instances beside
// the default one (the operator's), each with one shared tab; a viewer's
// X-Tenant header stands in for its token's tenant.
func tenantHarness(t *testing.T) (h *harness, alice, bob *relay.Instance) {
	h = newHarness(t, Config{Tenant: func(r *http.Request) string { return r.Header.Get("X-Tenant") }})
	for i, tenant := range []string{"alice", "bob"} {
		in, err := h.relay.NewInstanceFor(tenant, "")
		if err != nil {
			t.Fatal(err)
		}
		e, err := fakeext.Dial(h.ctx, h.wsBase()+"/extension/"+in.GUID(), fakeext.Options{
			Tabs: []fakeext.Tab{{ID: 20 + i, URL: "https://" + tenant + ".example/", Title: tenant + "'s tab"}},
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(e.Close)
		if err := in.WaitReady(h.ctx); err != nil {
			t.Fatal(err)
		}
		if tenant == "alice" {
			alice = in
		} else {
			bob = in
		}
	}
	return h, alice, bob
}

func listed(m vmsg) []string {
	var out []string
	for _, in := range m.Instances {
		out = append(out, in.ID)
	}
	slices.Sort(out)
	return out
}

// TestViewerTenants: a tenant's viewer lists, subscribes to and hears of
// its own instances only; the operator's viewer sees all.
func TestViewerTenants(t *testing.T) {
	h, alice, bob := tenantHarness(t)
	av := h.viewer("", http.Header{"X-Tenant": {"alice"}})
	bv := h.viewer("", http.Header{"X-Tenant": {"bob"}})
	ov := h.viewer("", nil)

	waitList := func(v *vclient, want ...string) {
		t.Helper()
		slices.Sort(want)
		v.wait(0, "the instances "+strings.Join(want, ","), func(m vmsg) bool {
			return m.Type == msgInstances && slices.Equal(listed(m), want) && allTabs(m)
		})
	}
	waitList(av, alice.ID())
	waitList(bv, bob.ID())
	waitList(ov, h.inst, alice.ID(), bob.ID())
	for _, m := range av.messages() {
		if strings.Contains(string(m.Raw), bob.ID()) || strings.Contains(string(m.Raw), "bob.example") || strings.Contains(string(m.Raw), h.inst) {
			t.Fatalf("alice's viewer got %s", m.Raw)
		}
	}

	// Bob watches his tab and takes control: bob's and the operator's
	// viewers hear of it, alice's does not.
	bv.sendAwait(map[string]any{"type": "subscribe", "instance": bob.ID(), "tab": 21}, msgStatus, nil)
	bv.sendAwait(map[string]any{"type": "take-control"}, msgControl, nil)
	ov.wait(0, "bob's control message", func(m vmsg) bool { return m.Type == msgControl && m.Instance == bob.ID() })

	// To alice, bob's instance (watched right now) is one that does not
	// exist: the same error, byte for byte.
	from := len(av.messages())
	av.send(map[string]any{"type": "subscribe", "id": 5, "instance": bob.ID(), "tab": 21})
	theirs, i := av.wait(from, "an error", func(m vmsg) bool { return m.Type == msgError })
	av.send(map[string]any{"type": "subscribe", "id": 5, "instance": "0123456789ab", "tab": 21})
	none, _ := av.wait(i+1, "an error", func(m vmsg) bool { return m.Type == msgError })
	if string(theirs.Raw) != string(none.Raw) {
		t.Errorf("subscribing to bob's instance: %s; to an unknown one: %s", theirs.Raw, none.Raw)
	}
	bv.sendAwait(map[string]any{"type": "hand-back"}, msgControl, func(m vmsg) bool { return m.Holder == "" })
	// The list refresh and control messages have had their chance.
	time.Sleep(2 * h.view.cfg.ListEvery)
	for _, m := range av.messages() {
		if m.Type == msgControl || strings.Contains(string(m.Raw), bob.ID()) {
			t.Fatalf("alice's viewer got %s", m.Raw)
		}
	}

	// Alice watches her own tab.
	st := av.sendAwait(map[string]any{"type": "subscribe", "instance": alice.ID(), "tab": 20}, msgStatus, nil)
	if st.Instance != alice.ID() {
		t.Errorf("alice's subscription: %s", st.Raw)
	}
}

func allTabs(m vmsg) bool {
	for _, in := range m.Instances {
		if !in.Default && len(in.Tabs) == 0 {
			return false
		}
	}
	return true
}
