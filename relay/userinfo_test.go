package relay

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cdprelay/cdprelay/relay/internal/config"
	"github.com/cdprelay/cdprelay/relay/internal/creds"

	"github.com/cdprelay/cdprelay/internal/fakeext"
)

func TestURLPasswordLocked(t *testing.T) {
	h := newHarness(t, config.Config{})
	in := h.srv.Default()
	creds.LearnURLPasswords(in, []byte(`{"url":"http://me:hunter%402@a.example/"}`))
	for _, s := range []string{"http://me:hunter%402@a.example/", `{"v":"hunter@2"}`, "aHVudGVyQDI="} {
		if got := in.ScrubString(s); strings.Contains(got, "hunter") || strings.Contains(got, "aHVudGVyQDI") {
			t.Errorf("%s scrubbed to %s", s, got)
		}
	}
	// Too short to hide alone: hidden with its user name.
	creds.LearnURLPasswords(in, []byte(`{"url":"http://me:abc@a.example/"}`))
	if got := in.ScrubString("abc"); got != "abc" {
		t.Errorf("a short password locked alone: %s", got)
	}
	if got := in.ScrubString("http://me:abc@a.example/"); strings.Contains(got, "abc") {
		t.Errorf("a short password in its URL: %s", got)
	}
}

// Text that names ever new URL passwords (a page's, or results a client
// asks for) grows the lock to a bound, not without end: the first ones
// are hidden, the rest are not taken.
func TestURLPasswordsBounded(t *testing.T) {
	h := newHarness(t, config.Config{})
	in := h.srv.Default()
	var b strings.Builder
	for i := 0; i < 10*creds.MaxURLPasswords; i++ {
		fmt.Fprintf(&b, `"http://u:pass-%05d@a.example/" `, i)
	}
	creds.LearnURLPasswords(in, []byte(b.String()))
	if n := creds.InstanceOf(in).URLPasswords.Load(); n != creds.MaxURLPasswords+1 { // the bound, and the warning's mark
		t.Fatalf("URL passwords taken: %d", n)
	}
	if got := in.ScrubString("pass-00000"); strings.Contains(got, "pass-00000") {
		t.Errorf("the first was not hidden: %s", got)
	}
	if got := in.ScrubString("pass-00639"); got != "pass-00639" {
		t.Errorf("one past the bound was taken: %s", got)
	}
	// Past the bound, a password is still hidden where a URL names it:
	// made-up ones cannot use the bound up to let the person's through.
	if got := in.ScrubString(`{"url":"https://person:RealSecretPw@intranet.example/"}`); strings.Contains(got, "RealSecretPw") || !strings.Contains(got, "https://person:{{secret:url-password}}@intranet.example/") {
		t.Errorf("a URL's password past the bound: %s", got)
	}
}

// What the live view lists (a tab's title and URL, a dialog's message) is
// scrubbed as the client's messages are: a typed secret shows as its
// reference, a URL's password too.
func TestStatusScrubbed(t *testing.T) {
	h := newHarness(t, config.Config{})
	e := h.ext(fakeext.Options{Tabs: []fakeext.Tab{{ID: 1, URL: "https://person:UrlPassw0rd@a.example/inbox", Title: "Inbox"}}})
	c := h.client()
	h.autoAttach(c)
	in := h.srv.Default()
	if u := in.Status().Tabs[0].URL; strings.Contains(u, "UrlPassw0rd") || !strings.Contains(u, "{{secret:url-password}}") {
		t.Fatalf("the tab's URL in the live view: %s", u)
	}
	creds.LockSecret(in, "site", []byte("hunter2-typed-secret"))
	e.Navigate(1, "https://a.example/welcome?pw=hunter2-typed-secret", "Welcome hunter2-typed-secret")
	h.waitFor("the new title", func() bool { return strings.HasPrefix(in.Status().Tabs[0].Title, "Welcome") })
	e.Event(1, "", "Page.javascriptDialogOpening", map[string]any{"url": "https://a.example/", "message": "Your password is hunter2-typed-secret", "type": "alert", "hasBrowserHandler": false, "defaultPrompt": ""})
	h.waitFor("the dialog", func() bool { return in.Status().Tabs[0].Dialog != nil })
	st := in.Status()
	raw := fmt.Sprintf("%+v %+v", st.Tabs[0], *st.Tabs[0].Dialog)
	for _, leak := range []string{"hunter2", "UrlPassw0rd"} {
		if strings.Contains(raw, leak) {
			t.Fatalf("the live view's status shows %s: %s", leak, raw)
		}
	}
	if !strings.Contains(raw, "{{secret:site}}") {
		t.Fatalf("no reference in %s", raw)
	}
}
