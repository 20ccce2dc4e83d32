package origins

import (
	"testing"

	"github.com/cdprelay/cdprelay/relay/internal/api"
)

// TestNeverShared: a page that is never shared anywhere and the relay's
// own are refused with a reason; web content and the pages the relay
// treats as harmless are not.
func TestNeverShared(t *testing.T) {
	o, err := NewOrigins("127.0.0.1:9222", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		url  string
		want string
	}{
		{"https://example.com/", ""},
		{"about:blank", ""},
		{"chrome-error://chromewebdata/", ""},
		{"file:///etc/passwd", "a file: page, which is never shared with automation"},
		{"chrome://settings", "a chrome: page, which is never shared with automation"},
		{"chrome-extension://abc/popup.html", "a chrome-extension: page, which is never shared with automation"},
		{"blob:chrome-extension://abc/1", "a blob: page, which is never shared with automation"},
		{"http://127.0.0.1:9222/live", "the relay's own page, which is never shared with automation"},
		{"blob:http://localhost:9222/1", "the relay's own page, which is never shared with automation"},
	} {
		if got := o.NeverShared(tc.url); got != tc.want {
			t.Errorf("NeverShared(%q) = %q, want %q", tc.url, got, tc.want)
		}
	}
}

// TestOwnRefusalAndAccess: a command that would take a tab to the relay's
// own page is refused by the own-origin rule, and a page or frame there
// is blind, saying where it is; another page is not the relay's.
func TestOwnRefusalAndAccess(t *testing.T) {
	o, err := NewOrigins("127.0.0.1:9222", "")
	if err != nil {
		t.Fatal(err)
	}
	d := Refusal("http://127.0.0.1:9222/live#x")
	if d.Verdict != api.Deny || d.Rule != RuleOwnOrigin || d.Message != "cdprelay: http://127.0.0.1:9222 is the relay's own page, which is never shared with automation" {
		t.Errorf("refusal %+v", d)
	}
	a, own := o.Access("http://localhost:9222/json", "the frame")
	if !own || a.Level != api.Blind || a.Rule != RuleOwnOrigin || a.Why != "the frame shows http://localhost:9222, the relay's own page, which is never shared with automation" {
		t.Errorf("access of the relay's own page: %+v, %v", a, own)
	}
	if a, own := o.Access("https://example.com/", "the tab"); own || a != (api.Access{}) {
		t.Errorf("access of another page: %+v, %v", a, own)
	}
}
