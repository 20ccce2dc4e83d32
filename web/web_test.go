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
		if tc.code != http.StatusOK {
			continue
		}
		if ct := rec.Header().Get("Content-Type"); !strings.Contains(ct, tc.ctype) {
			t.Errorf("%s: Content-Type %q", tc.path, ct)
		}
		if !strings.Contains(rec.Body.String(), tc.body) {
			t.Errorf("%s: body lacks %q", tc.path, tc.body)
		}
		// The page can drive a logged-in tab: no framing, no foreign code.
		if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") || !strings.Contains(csp, "default-src 'self'") {
			t.Errorf("%s: CSP %q", tc.path, csp)
		}
		if rec.Header().Get("X-Frame-Options") != "DENY" {
			t.Errorf("%s: framing allowed", tc.path)
		}
	}
}
