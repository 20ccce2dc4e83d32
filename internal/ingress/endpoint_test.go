package ingress

import (
	"net/http"
	"testing"

	"github.com/cdprelay/cdprelay/internal/routes"
)

// TestClassify: the guard judges every request by its area in the route
// table (internal/routes tests the table itself).
func TestClassify(t *testing.T) {
	rs, err := compile(Config{PagePaths: []string{"/", "/app.js"}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		method, path string
		want         endpoint
	}{
		{"GET", "/json/version", epDiscovery},
		{"PUT", "/json/new", epDiscovery},
		{"GET", "/cdp/0123/json/version", epCapability},
		{"GET", "/cdp/", epCapability},
		{"GET", "/devtools/browser/0123", epCapability},
		{"GET", "/devtools/page/ABCDEF", epDevtools},
		{"GET", "/extension/0123", epExtension},
		{"GET", "/viewer", epViewer},
		{"POST", "/v1/instances", epAdmin},
		{"GET", "/metrics", epAdmin},
		{"GET", "/", epPage},
		{"HEAD", "/app.js", epPage},
		{"GET", "/style.css", epOther},
		{"GET", "/cdp/x/../../v1/audit", epBadPath},
	}
	for _, tt := range tests {
		if got := rs.routes.Classify(tt.method, tt.path).Area; got != tt.want {
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
	f.Fuzz(func(t *testing.T, method, p string) {
		rt := routes.Classify(method, p)
		e := rt.Area
		if e >= numEndpoints {
			t.Fatalf("classify(%q) = %d", p, e)
		}
		r := ruleFor(rt)
		// Only the page shell is public.
		if r.scopes == 0 && e != epPage && e != epBadPath {
			t.Fatalf("%q (%v) needs no scope", p, e)
		}
		// A tenant's token reaches the operator's area only where a
		// handler scopes the answer to the tenant.
		if (e == epAdmin || e == epOther) && !r.operatorOnly {
			switch rt.Kind {
			case routes.KindMint, routes.KindInstance, routes.KindInstances, routes.KindAudit:
			default:
				t.Fatalf("%s %q (%v) is open to tenants", method, p, rt.Kind)
			}
		}
	})
}
