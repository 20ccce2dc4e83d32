package ingress

import (
	"net/http"
	"testing"
)

func TestClassify(t *testing.T) {
	pages := map[string]bool{"/": true, "/app.js": true}
	tests := []struct {
		method, path string
		want         endpoint
	}{
		{"GET", "/json/version", epDiscovery},
		{"GET", "/json/version/", epDiscovery},
		{"GET", "/json", epDiscovery},
		{"GET", "/json/list", epDiscovery},
		{"PUT", "/json/new", epDiscovery},
		{"GET", "/cdp/0123", epCapability},
		{"GET", "/cdp/0123/json/version", epCapability},
		{"GET", "/cdp/", epCapability},
		{"GET", "/devtools/browser/0123", epCapability},
		{"GET", "/devtools/browser/", epCapability},
		{"GET", "/devtools/page/ABCDEF", epDevtools},
		{"GET", "/devtools/", epDevtools},
		{"GET", "/extension/0123", epExtension},
		{"GET", "/extension/", epExtension},
		{"GET", "/viewer", epViewer},
		{"GET", "/viewer/", epViewer},
		{"GET", "/v1/instances", epAdmin},
		{"GET", "/v1/audit/follow", epAdmin},
		{"POST", "/v1/instances", epAdmin},
		{"GET", "/metrics", epAdmin},
		{"GET", "/debug/pprof/", epAdmin},
		{"GET", "/", epPage},
		{"HEAD", "/app.js", epPage},
		{"POST", "/", epOther},
		{"GET", "/style.css", epOther},
		{"GET", "/cdp", epOther},
		{"GET", "/extension", epOther},
		{"GET", "/jsonx", epOther},
		{"GET", "/viewerx", epOther},
		{"GET", "/metricsx", epOther},
		{"GET", "", epBadPath},
		{"GET", "*", epBadPath},
		{"GET", "/cdp/x/../../v1/audit", epBadPath},
		{"GET", "/./json/version", epBadPath},
		{"GET", "//v1/audit", epBadPath},
		{"GET", "/v1//audit", epBadPath},
		{"GET", "/json/version//", epBadPath},
	}
	for _, tt := range tests {
		if got := classify(tt.method, tt.path, pages); got != tt.want {
			t.Errorf("classify(%s %q) = %v, want %v", tt.method, tt.path, got, tt.want)
		}
	}
}

func TestNormaliseOrigin(t *testing.T) {
	tests := map[string]string{
		"https://Relay.Example.com":      "https://relay.example.com",
		"https://relay.example.com:443":  "https://relay.example.com",
		"http://127.0.0.1:80":            "http://127.0.0.1",
		"http://127.0.0.1:9222":          "http://127.0.0.1:9222",
		"https://127.0.0.1:80":           "https://127.0.0.1:80",
		"http://[::1]:9222":              "http://[::1]:9222",
		"chrome-extension://abc":         "chrome-extension://abc",
		"https://relay.example.com/":     "https://relay.example.com",
		"null":                           "",
		"":                               "",
		"https://relay.example.com/path": "",
		"https://u:p@relay.example.com":  "",
		"https://relay.example.com?x":    "",
		"https:relay.example.com":        "",
		"relay.example.com":              "",
	}
	for in, want := range tests {
		if got := normaliseOrigin(in); got != want {
			t.Errorf("normaliseOrigin(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFetchSite(t *testing.T) {
	tests := []struct {
		policy    originPolicy
		navigable bool
		site      string
		mode      string
		dest      string
		want      bool
	}{
		{originCDP, false, "", "", "", true},
		{originCDP, false, "none", "", "", true},
		{originCDP, false, "same-origin", "", "", true},
		{originCDP, false, "same-site", "", "", true},
		{originCDP, false, "cross-site", "", "", false},
		{originCDP, false, "cross-site", "navigate", "document", false},
		{originSelf, false, "cross-site", "websocket", "websocket", false},
		{originSelf, false, "cross-site", "navigate", "document", false},
		{originSelf, true, "cross-site", "navigate", "document", true},
		{originSelf, true, "cross-site", "navigate", "iframe", false},
		{originSelf, true, "cross-site", "no-cors", "script", false},
		{originSelf, true, "cross-site", "cors", "empty", false},
		{originExtension, false, "cross-site", "websocket", "websocket", true},
	}
	for _, tt := range tests {
		r, _ := http.NewRequest("GET", "http://127.0.0.1/", nil)
		for k, v := range map[string]string{"Sec-Fetch-Site": tt.site, "Sec-Fetch-Mode": tt.mode, "Sec-Fetch-Dest": tt.dest} {
			if v != "" {
				r.Header.Set(k, v)
			}
		}
		if got := fetchSiteAllowed(tt.policy, tt.navigable, r); got != tt.want {
			t.Errorf("fetchSiteAllowed(%d, nav %v, %s/%s/%s) = %v", tt.policy, tt.navigable, tt.site, tt.mode, tt.dest, got)
		}
	}
}

func FuzzClassify(f *testing.F) {
	for _, p := range []string{"/json/version", "/cdp/x/json/list", "/devtools/browser/x", "/extension/x", "/viewer", "/v1/audit", "/", "/a/../b", "//x"} {
		f.Add("GET", p)
	}
	pages := map[string]bool{"/": true}
	f.Fuzz(func(t *testing.T, method, p string) {
		e := classify(method, p, pages)
		if e >= numEndpoints {
			t.Fatalf("classify(%q) = %d", p, e)
		}
		// Only a clean path is routed, and only the page shell is public.
		if e != epBadPath && !cleanPath(p) {
			t.Fatalf("unclean %q classified %v", p, e)
		}
		if e.rule().scope == 0 && e != epPage && e != epBadPath {
			t.Fatalf("%q (%v) needs no scope", p, e)
		}
	})
}
