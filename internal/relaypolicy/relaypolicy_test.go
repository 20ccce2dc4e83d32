package relaypolicy

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cdprelay/cdprelay/denylist"
	"github.com/cdprelay/cdprelay/internal/relaybench"
	"github.com/cdprelay/cdprelay/relay"
)

func TestAdapter(t *testing.T) {
	p, err := denylist.Compile(denylist.Config{AllowedHosts: []string{".example.com"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	a := Adapter{P: p}
	for _, tc := range []struct {
		method, params string
		want           relay.Verdict
		msg            string
	}{
		{"Target.createTarget", `{"url":""}`, relay.Allow, ""},
		{"Fetch.continueRequest", `{"requestId":"1"}`, relay.Allow, ""},
		{"Fetch.continueRequest", `{"requestId":"1","url":"https://evil.net/"}`, relay.Deny, "evil.net"},
		{"Runtime.evaluate", `{"expression":"1"}`, relay.Allow, ""},
		{"Storage.getCookies", `{}`, relay.Deny, "Denied by cdprelay policy: "},
		{"Browser.setDownloadBehavior", `{"behavior":"allow"}`, relay.Allow, ""},
		{"Page.navigate", `{"url":"https://www.example.com/"}`, relay.Allow, ""},
		{"Page.navigate", `{"url":"https://evil.net/"}`, relay.Deny, "evil.net"},
		{"Page.navigate", `{"url":"file:///etc/passwd"}`, relay.Deny, "file"},
	} {
		d := a.Command("", tc.method, []byte(tc.params))
		if name, _, _, ok := denylist.URLParam(tc.method); ok && d.Verdict == relay.Allow {
			// The relay reads the URL itself and hands it over.
			var p map[string]any
			if err := json.Unmarshal([]byte(tc.params), &p); err != nil {
				t.Fatal(err)
			}
			u, found := p[name].(string)
			d = a.MethodURL("", tc.method, u, found)
		}
		if d.Verdict != tc.want || !strings.Contains(d.Message, tc.msg) {
			t.Errorf("%s %s: got %+v, want verdict %d with %q", tc.method, tc.params, d, tc.want, tc.msg)
		}
		if d.Verdict != relay.Allow && d.Rule == "" {
			t.Errorf("%s: a refusal must name its rule", tc.method)
		}
	}
	if d := a.URL("", "javascript:alert(1)"); d.Verdict != relay.Deny {
		t.Errorf("javascript: URL allowed: %+v", d)
	}
}

func BenchmarkCommandNoURL(b *testing.B) {
	p, err := denylist.Compile(denylist.Config{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	a := Adapter{P: p}
	params := []byte(`{"expression":"1"}`)
	b.ReportAllocs()
	for b.Loop() {
		if a.Command("", "Runtime.evaluate", params).Verdict != relay.Allow {
			b.Fatal("denied")
		}
	}
}

// BenchmarkRoundTripPolicy measures a command without a URL through the
// relay with no policy and with the default policy, side by side.
func BenchmarkRoundTripPolicy(b *testing.B) {
	p, err := denylist.Compile(denylist.Config{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("policy=none", func(b *testing.B) { relaybench.RoundTrip(b, relay.Config{}) })
	b.Run("policy=default", func(b *testing.B) { relaybench.RoundTrip(b, relay.Config{Policy: Adapter{P: p}}) })
}
