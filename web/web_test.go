package web

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestHandler(t *testing.T) {
	h := Handler()
	for _, tc := range []struct {
		method, path string
		code         int
		ctype, body  string
	}{
		{"GET", "/", 200, "text/html", `<canvas id="screen"`},
		{"GET", "/app.js", 200, "javascript", "new WebSocket"},
		{"GET", "/style.css", 200, "text/css", ".screen-box"},
		{"GET", "/favicon.svg", 200, "image/svg+xml", "<svg"},
		{"HEAD", "/", 200, "text/html", ""},
		{"GET", "/nope.js", 404, "", ""},
		{"POST", "/", 405, "", ""},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(tc.method, tc.path, nil))
		if rec.Code != tc.code {
			t.Errorf("%s %s: %d, want %d", tc.method, tc.path, rec.Code, tc.code)
			continue
		}
		checkFramingHeaders(t, tc.method+" "+tc.path, rec.Header())
		if tc.code != http.StatusOK {
			continue
		}
		if ct := rec.Header().Get("Content-Type"); !strings.Contains(ct, tc.ctype) {
			t.Errorf("%s: Content-Type %q", tc.path, ct)
		}
		if !strings.Contains(rec.Body.String(), tc.body) {
			t.Errorf("%s: body lacks %q", tc.path, tc.body)
		}
	}
}

// checkFramingHeaders: the page is where the person acts; no other page
// may frame it, hold its window or run code in it, whatever the answer.
func checkFramingHeaders(t *testing.T, what string, h http.Header) {
	t.Helper()
	csp := map[string]string{}
	for d := range strings.SplitSeq(h.Get("Content-Security-Policy"), ";") {
		name, value, _ := strings.Cut(strings.TrimSpace(d), " ")
		if _, dup := csp[name]; dup {
			t.Errorf("%s: CSP directive %s twice", what, name)
		}
		csp[name] = value
	}
	want := map[string]string{
		"default-src": "'none'", "script-src": "'self'", "style-src": "'self'", "img-src": "'self'",
		"connect-src": "'self'", "object-src": "'none'", "frame-ancestors": "'none'", "base-uri": "'none'", "form-action": "'none'",
	}
	for name, v := range want {
		if csp[name] != v {
			t.Errorf("%s: CSP %s %q, want %q (CSP %q)", what, name, csp[name], v, h.Get("Content-Security-Policy"))
		}
	}
	if len(csp) != len(want) {
		t.Errorf("%s: CSP has other directives: %q", what, h.Get("Content-Security-Policy"))
	}
	for name, v := range map[string]string{"X-Frame-Options": "DENY", "Cross-Origin-Opener-Policy": "same-origin", "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer"} {
		if got := h.Get(name); got != v {
			t.Errorf("%s: %s %q, want %q", what, name, got, v)
		}
	}
}
