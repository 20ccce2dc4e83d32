package ingress

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/cdprelay/cdprelay/extension"
)

// The tokens of the matrix: one per scope.
var matrixTokens = map[string]Scope{
	"t-cdp":         ScopeCDP,
	"t-viewer":      ScopeViewer,
	"t-interactive": ScopeViewerInteractive,
	"t-admin":       ScopeAdmin,
	"t-extension":   ScopeExtension,
}

func matrixConfig() Config {
	cfg := Config{
		Hosts:      []string{"relay.example.com"},
		CDPOrigins: []string{"https://devtools.example.com"},
	}
	for tok, sc := range matrixTokens {
		cfg.Tokens = append(cfg.Tokens, Token{Name: "name-" + tok, SHA256: HashToken(tok), Scopes: []string{sc.String()}})
	}
	return cfg
}

// echo is the handler behind the guard: it answers 200 with what it was
// granted, and fails the test if the token got through.
func echo(t *testing.T) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := r.Header["Authorization"]; ok {
			t.Errorf("%s: Authorization passed on", r.URL)
		}
		if r.URL.Query().Has("token") || strings.Contains(r.RequestURI, "token=") {
			t.Errorf("%s: token parameter passed on (RequestURI %s)", r.URL, r.RequestURI)
		}
		g, ok := GrantFrom(r.Context())
		if !ok {
			t.Errorf("%s: no grant in the context", r.URL)
		}
		fmt.Fprintf(w, "next %s %s", g.TokenName, Scopes(r.Context()))
	})
}

func newGuard(t *testing.T, cfg Config) *Guard {
	t.Helper()
	g, err := New(echo(t), cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

type matrixEndpoint struct {
	method, path string
	scope        Scope // 0: the public page shell
	capability   bool
	origins      []string // the origin cases allowed, besides none
}

var (
	cdpOrigins  = []string{"listed"}
	extOrigins  = []string{"ours", "playwright"}
	selfOrigins = []string{"self"}
)

var matrixEndpoints = []matrixEndpoint{
	{"GET", "/json/version", ScopeCDP, false, cdpOrigins},
	{"GET", "/json/list", ScopeCDP, false, cdpOrigins},
	{"GET", "/json", ScopeCDP, false, cdpOrigins},
	{"GET", "/cdp/0123456789abcdef0123456789abcdef", ScopeCDP, true, cdpOrigins},
	{"GET", "/cdp/0123456789abcdef0123456789abcdef/json/version", ScopeCDP, true, cdpOrigins},
	{"GET", "/devtools/browser/0123456789abcdef0123456789abcdef", ScopeCDP, true, cdpOrigins},
	{"GET", "/devtools/page/6A1B2C3D4E5F", ScopeCDP, false, cdpOrigins},
	{"GET", "/extension/0123456789abcdef0123456789abcdef", ScopeExtension, true, extOrigins},
	{"GET", "/viewer", ScopeViewer, false, selfOrigins},
	{"GET", "/v1/instances", ScopeAdmin, false, selfOrigins},
	{"GET", "/v1/audit", ScopeAdmin, false, selfOrigins},
	{"GET", "/v1/audit/follow", ScopeAdmin, false, selfOrigins},
	{"GET", "/metrics", ScopeAdmin, false, selfOrigins},
	{"GET", "/", 0, false, selfOrigins},
	{"GET", "/app.js", 0, false, selfOrigins},
	{"HEAD", "/style.css", 0, false, selfOrigins},
	{"GET", "/unknown", ScopeAdmin, false, selfOrigins},
	{"POST", "/", ScopeAdmin, false, selfOrigins},
}

func originCase(name, host string) string {
	switch name {
	case "none":
		return ""
	case "self":
		return "http://" + host
	case "self-https":
		return "https://" + host
	case "listed":
		return "https://devtools.example.com"
	case "ours":
		return "chrome-extension://" + extension.ID
	case "playwright":
		return "chrome-extension://" + PlaywrightExtensionID
	case "other-extension":
		return "chrome-extension://" + strings.Repeat("a", 32)
	case "evil":
		return "https://evil.example"
	case "null":
		return "null"
	}
	panic(name)
}

var originCases = []string{"none", "self", "self-https", "listed", "ours", "playwright", "other-extension", "evil", "null"}

// tokenCase picks the token for a case: "none", "wrong", "wrong-scope"
// (valid, without the endpoint's scope) or "right".
func tokenCase(c string, need Scope) (string, bool) {
	switch c {
	case "none":
		return "", true
	case "wrong":
		return "t-nope", true
	case "wrong-scope":
		for tok, sc := range matrixTokens {
			if !ScopeSet(sc).Has(need) && !(need == ScopeViewer && sc == ScopeViewerInteractive) {
				return tok, true
			}
		}
	case "right":
		for tok, sc := range matrixTokens {
			if sc == need {
				return tok, true
			}
		}
		if need == 0 {
			return "t-viewer", true
		}
	case "right-implied":
		if need == ScopeViewer {
			return "t-interactive", true
		}
	}
	return "", false
}

// TestGuardMatrix runs every endpoint with every token case, Host and
// Origin, and checks the answer against the rules as documented.
func TestGuardMatrix(t *testing.T) {
	g := newGuard(t, matrixConfig())
	hosts := map[string]bool{
		"127.0.0.1:9222": true, "localhost:9222": true, "[::1]:9222": true, "relay.example.com": true,
		"evil.example": false, "127.0.0.1.evil.example:9222": false, "relay.example.com.evil.example": false,
	}
	n := 0
	for _, ep := range matrixEndpoints {
		for host, hostOK := range hosts {
			for _, oc := range originCases {
				for i, tc := range []string{"none", "wrong", "wrong-scope", "right", "right-implied"} {
					tok, ok := tokenCase(tc, ep.scope)
					if !ok {
						continue
					}
					origin := originCase(oc, host)
					r := httptest.NewRequest(ep.method, "http://"+host+ep.path, nil)
					r.Host = host
					if origin != "" {
						r.Header.Set("Origin", origin)
					}
					if tok != "" {
						// Alternate the two ways to present a token.
						if i%2 == 0 {
							r.Header.Set("Authorization", "Bearer "+tok)
						} else {
							r.URL.RawQuery = "token=" + url.QueryEscape(tok)
						}
					}
					w := httptest.NewRecorder()
					g.ServeHTTP(w, r)
					n++

					originOK := oc == "none"
					for _, a := range ep.origins {
						originOK = originOK || a == oc
					}
					want := http.StatusOK
					switch {
					case !hostOK, !originOK:
						want = http.StatusForbidden
					case ep.scope == 0 && tc == "wrong":
						want = http.StatusUnauthorized
					case ep.scope == 0:
					case tc == "none", tc == "wrong":
						want = http.StatusUnauthorized
						if ep.capability {
							want = http.StatusNotFound
						}
					case tc == "wrong-scope":
						want = http.StatusForbidden
						if ep.capability {
							want = http.StatusNotFound
						}
					}
					if w.Code != want {
						t.Errorf("%s %s Host %s Origin %q token %s (%s): %d %q, want %d", ep.method, ep.path, host, origin, tc, tok, w.Code, w.Body.String(), want)
						continue
					}
					switch want {
					case http.StatusOK:
						if !strings.HasPrefix(w.Body.String(), "next ") {
							t.Errorf("%s %s: body %q", ep.method, ep.path, w.Body.String())
						}
					case http.StatusNotFound:
						if w.Body.String() != "404 page not found\n" {
							t.Errorf("%s %s: 404 body %q, want http.NotFound's", ep.method, ep.path, w.Body.String())
						}
					case http.StatusUnauthorized:
						if w.Header().Get("WWW-Authenticate") == "" {
							t.Errorf("%s %s: 401 without WWW-Authenticate", ep.method, ep.path)
						}
					}
				}
			}
		}
	}
	t.Logf("%d requests", n)
}

func TestGrantInContext(t *testing.T) {
	g := newGuard(t, matrixConfig())
	tests := []struct {
		path, token, want string
	}{
		{"/viewer", "t-interactive", "next name-t-interactive viewer,viewer-interactive"},
		{"/viewer", "t-viewer", "next name-t-viewer viewer"},
		{"/json/version", "t-cdp", "next name-t-cdp cdp"},
		{"/", "t-admin", "next name-t-admin admin"},
		{"/", "", "next  "},
	}
	for _, tt := range tests {
		r := httptest.NewRequest("GET", "http://127.0.0.1:9222"+tt.path, nil)
		if tt.token != "" {
			r.Header.Set("Authorization", "Bearer "+tt.token)
		}
		w := httptest.NewRecorder()
		g.ServeHTTP(w, r)
		if got := w.Body.String(); got != tt.want {
			t.Errorf("%s with %q: %q, want %q", tt.path, tt.token, got, tt.want)
		}
	}
}

// TestZeroConfig is the relay without tokens: this machine gets every
// scope, as with Chrome's own port; any other peer gets the page shell
// only. Host and Origin rules hold all the same.
func TestZeroConfig(t *testing.T) {
	g := newGuard(t, Config{})
	tests := []struct {
		remote, path, origin, host string
		want                       int
		body                       string
	}{
		{"127.0.0.1:5000", "/json/version", "", "", 200, "next  cdp,viewer,viewer-interactive,admin,extension,pair"},
		{"[::1]:5000", "/devtools/browser/0123", "", "", 200, ""},
		{"127.0.0.1:5000", "/extension/0123", "chrome-extension://" + extension.ID, "", 200, ""},
		{"127.0.0.1:5000", "/extension/0123", "chrome-extension://" + strings.Repeat("b", 32), "", 403, ""},
		{"127.0.0.1:5000", "/v1/audit", "", "", 200, ""},
		{"127.0.0.1:5000", "/json/version", "https://evil.example", "", 403, ""},
		{"127.0.0.1:5000", "/json/version", "", "evil.example", 403, ""},
		{"127.0.0.1:5000", "/viewer", "http://127.0.0.1:9222", "", 200, ""},
		{"192.0.2.1:5000", "/json/version", "", "", 401, ""},
		{"192.0.2.1:5000", "/devtools/browser/0123", "", "", 404, ""},
		{"192.0.2.1:5000", "/extension/0123", "", "", 404, ""},
		{"192.0.2.1:5000", "/v1/audit", "", "", 401, ""},
		{"192.0.2.1:5000", "/", "", "", 200, "next  "},
		{"[::ffff:127.0.0.1]:5000", "/metrics", "", "", 200, ""},
		{"garbage", "/metrics", "", "", 401, ""},
	}
	for _, tt := range tests {
		r := httptest.NewRequest("GET", "http://127.0.0.1:9222"+tt.path+"?token=ignored", nil)
		r.RemoteAddr = tt.remote
		if tt.origin != "" {
			r.Header.Set("Origin", tt.origin)
		}
		if tt.host != "" {
			r.Host = tt.host
		}
		w := httptest.NewRecorder()
		g.ServeHTTP(w, r)
		if w.Code != tt.want || (tt.body != "" && w.Body.String() != tt.body) {
			t.Errorf("%s %s Origin %q Host %q: %d %q, want %d %q", tt.remote, tt.path, tt.origin, tt.host, w.Code, w.Body.String(), tt.want, tt.body)
		}
	}
	if g.TokensConfigured() {
		t.Error("TokensConfigured with none")
	}
}

func TestFetchMetadataThroughGuard(t *testing.T) {
	g := newGuard(t, matrixConfig())
	tests := []struct {
		path, token, origin, site, mode, dest string
		want                                  int
	}{
		{"/json/version", "t-cdp", "", "cross-site", "no-cors", "script", 403},
		{"/json/version", "t-cdp", "https://devtools.example.com", "cross-site", "cors", "empty", 200},
		{"/json/version", "t-cdp", "", "same-origin", "", "", 200},
		{"/devtools/browser/x", "t-cdp", "", "cross-site", "websocket", "websocket", 403},
		{"/extension/x", "t-extension", "chrome-extension://" + extension.ID, "cross-site", "websocket", "websocket", 200},
		{"/extension/x", "t-extension", "", "none", "websocket", "websocket", 200},
		{"/viewer", "t-viewer", "", "cross-site", "websocket", "websocket", 403},
		{"/viewer", "t-viewer", "http://127.0.0.1:9222", "same-origin", "websocket", "websocket", 200},
		{"/v1/audit/follow", "t-admin", "", "cross-site", "cors", "empty", 403},
		{"/", "", "", "cross-site", "navigate", "document", 200},
		{"/", "", "", "cross-site", "navigate", "iframe", 403},
		{"/app.js", "", "", "cross-site", "no-cors", "script", 403},
		{"/", "", "", "none", "navigate", "document", 200},
	}
	for _, tt := range tests {
		r := httptest.NewRequest("GET", "http://127.0.0.1:9222"+tt.path, nil)
		if tt.token != "" {
			r.Header.Set("Authorization", "Bearer "+tt.token)
		}
		for k, v := range map[string]string{"Origin": tt.origin, "Sec-Fetch-Site": tt.site, "Sec-Fetch-Mode": tt.mode, "Sec-Fetch-Dest": tt.dest} {
			if v != "" {
				r.Header.Set(k, v)
			}
		}
		w := httptest.NewRecorder()
		g.ServeHTTP(w, r)
		if w.Code != tt.want {
			t.Errorf("%s %s/%s/%s Origin %q: %d %q, want %d", tt.path, tt.site, tt.mode, tt.dest, tt.origin, w.Code, w.Body.String(), tt.want)
		}
	}
}

func TestOriginEdgeCases(t *testing.T) {
	g := newGuard(t, matrixConfig())
	tests := []struct {
		path, host string
		tls        bool
		origins    []string
		want       int
	}{
		{"/viewer", "127.0.0.1:9222", false, []string{"http://127.0.0.1:9222"}, 200},
		{"/viewer", "127.0.0.1:9222", false, []string{"HTTP://127.0.0.1:9222"}, 200},
		{"/viewer", "127.0.0.1:9222", false, []string{"http://127.0.0.1:9223"}, 403},
		{"/viewer", "127.0.0.1:9222", false, []string{"http://localhost:9222"}, 403},
		{"/viewer", "127.0.0.1:9222", true, []string{"http://127.0.0.1:9222"}, 403},
		{"/viewer", "127.0.0.1:9222", true, []string{"https://127.0.0.1:9222"}, 200},
		{"/viewer", "relay.example.com:443", true, []string{"https://relay.example.com"}, 200},
		{"/viewer", "relay.example.com", true, []string{"https://relay.example.com:443"}, 200},
		{"/viewer", "127.0.0.1:9222", false, []string{"http://127.0.0.1:9222", "http://127.0.0.1:9222"}, 403},
		{"/json/version", "127.0.0.1:9222", false, []string{"https://DEVTOOLS.example.com:443"}, 200},
		{"/json/version", "127.0.0.1:9222", false, []string{"http://devtools.example.com"}, 403},
		{"/json/version", "127.0.0.1:9222", false, []string{"https://devtools.example.com/x"}, 403},
		{"/extension/x", "127.0.0.1:9222", false, []string{"chrome-extension://" + extension.ID + "/"}, 403},
		{"/extension/x", "127.0.0.1:9222", false, []string{"CHROME-EXTENSION://" + extension.ID}, 403},
	}
	for _, tt := range tests {
		r := httptest.NewRequest("GET", "http://"+tt.host+tt.path, nil)
		r.Host = tt.host
		if tt.tls {
			r = httptest.NewRequest("GET", "https://"+tt.host+tt.path, nil)
			r.Host = tt.host
		}
		tok := map[string]string{"/viewer": "t-viewer", "/json/version": "t-cdp", "/extension/x": "t-extension"}[tt.path]
		r.Header.Set("Authorization", "Bearer "+tok)
		r.Header["Origin"] = tt.origins
		w := httptest.NewRecorder()
		g.ServeHTTP(w, r)
		if w.Code != tt.want {
			t.Errorf("%s Host %s tls %v Origin %q: %d, want %d", tt.path, tt.host, tt.tls, tt.origins, w.Code, tt.want)
		}
	}
}

func TestForwardKeepsTheRest(t *testing.T) {
	var seen *http.Request
	g, err := New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen = r }), matrixConfig(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest("GET", "http://127.0.0.1:9222/v1/audit?kind=cdp&token=t-admin&since=3", nil)
	r.Header.Set("X-Other", "kept")
	g.ServeHTTP(httptest.NewRecorder(), r)
	if seen == nil {
		t.Fatal("not forwarded")
	}
	if seen.URL.RawQuery != "kind=cdp&since=3" || seen.RequestURI != "/v1/audit?kind=cdp&since=3" || seen.Header.Get("X-Other") != "kept" {
		t.Errorf("forwarded %q %q %v", seen.URL.RawQuery, seen.RequestURI, seen.Header)
	}
	if r.URL.RawQuery != "kind=cdp&token=t-admin&since=3" {
		t.Errorf("the caller's request was changed: %q", r.URL.RawQuery)
	}

	r = httptest.NewRequest("GET", "http://127.0.0.1:9222/v1/audit", nil)
	r.Header.Set("Authorization", "Bearer t-admin")
	g.ServeHTTP(httptest.NewRecorder(), r)
	if seen.Header.Get("Authorization") != "" || r.Header.Get("Authorization") == "" {
		t.Errorf("Authorization: forwarded %q, caller's %q", seen.Header.Get("Authorization"), r.Header.Get("Authorization"))
	}
}

func TestBadPathIsNotFound(t *testing.T) {
	g := newGuard(t, Config{})
	for _, p := range []string{"/cdp/x/../../v1/audit", "//v1/audit", "/./json/version"} {
		r := httptest.NewRequest("GET", "http://127.0.0.1:9222/", nil)
		r.URL.Path = p
		r.RemoteAddr = "127.0.0.1:1"
		w := httptest.NewRecorder()
		g.ServeHTTP(w, r)
		if w.Code != http.StatusNotFound {
			t.Errorf("%s: %d", p, w.Code)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"host with port", Config{Hosts: []string{"relay.example.com:443"}}, `hosts[0] "relay.example.com:443"`},
		{"origin with path", Config{CDPOrigins: []string{"https://x.example/app"}}, `origins.cdp[0]`},
		{"origin not http", Config{CDPOrigins: []string{"chrome-extension://" + extension.ID}}, `origins.cdp[0]`},
		{"null origin", Config{CDPOrigins: []string{"null"}}, `origins.cdp[0]`},
		{"bad extension id", Config{ExtensionIDs: []string{"not-an-id"}}, `origins.extension_ids[0]`},
		{"bad page path", Config{PagePaths: []string{"app.js"}}, `page path [0]`},
		{"bad token", Config{Tokens: []Token{{Name: "x", SHA256: "00", Scopes: []string{"cdp"}}}}, `tokens[0] (x)`},
	}
	for _, tt := range tests {
		err := tt.cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
		if _, err := New(http.NotFoundHandler(), tt.cfg, Options{}); err == nil {
			t.Errorf("%s: New accepted it", tt.name)
		}
	}
	if err := (Config{ExtensionIDs: []string{}}).Validate(); err != nil {
		t.Errorf("an empty extension list: %v", err)
	}
}

func TestExtensionIDsReplaceDefaults(t *testing.T) {
	other := strings.Repeat("c", 32)
	g := newGuard(t, Config{ExtensionIDs: []string{other}})
	for origin, want := range map[string]int{
		"chrome-extension://" + other:                 200,
		"chrome-extension://" + extension.ID:          403,
		"chrome-extension://" + PlaywrightExtensionID: 403,
		"": 200,
	} {
		r := httptest.NewRequest("GET", "http://127.0.0.1:9222/extension/x", nil)
		r.RemoteAddr = "127.0.0.1:1"
		if origin != "" {
			r.Header.Set("Origin", origin)
		}
		w := httptest.NewRecorder()
		g.ServeHTTP(w, r)
		if w.Code != want {
			t.Errorf("Origin %q: %d, want %d", origin, w.Code, want)
		}
	}
}

// TestReload swaps the rules under load: every request sees the old rules
// or the new ones, never a mix, and a bad config leaves the rules alone.
func TestReload(t *testing.T) {
	cfgA := Config{Tokens: []Token{{Name: "a", SHA256: HashToken("token-a"), Scopes: []string{"cdp"}}}}
	cfgB := Config{Tokens: []Token{{Name: "b", SHA256: HashToken("token-b"), Scopes: []string{"cdp"}}}}
	g := newGuard(t, cfgA)
	code := func(tok string) int {
		r := httptest.NewRequest("GET", "http://127.0.0.1:9222/json/version", nil)
		r.Header.Set("Authorization", "Bearer "+tok)
		w := httptest.NewRecorder()
		g.ServeHTTP(w, r)
		return w.Code
	}
	if code("token-a") != 200 || code("token-b") != 401 {
		t.Fatal("before reload")
	}

	var stop atomic.Bool
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for !stop.Load() {
				a, b := code("token-a"), code("token-b")
				if a != 200 && a != 401 || b != 200 && b != 401 {
					t.Errorf("codes %d %d", a, b)
					return
				}
			}
		})
	}
	for i := range 200 {
		cfg := cfgA
		if i%2 == 0 {
			cfg = cfgB
		}
		if err := g.Reload(cfg); err != nil {
			t.Fatal(err)
		}
	}
	stop.Store(true)
	wg.Wait()

	if err := g.Reload(cfgB); err != nil {
		t.Fatal(err)
	}
	if code("token-a") != 401 || code("token-b") != 200 {
		t.Error("after reload: the old token works or the new one does not")
	}
	bad := Config{Tokens: []Token{{Name: "c", SHA256: "nothex", Scopes: []string{"cdp"}}}}
	if err := g.Reload(bad); err == nil {
		t.Fatal("a bad config was accepted")
	}
	if code("token-b") != 200 {
		t.Error("a failed reload changed the rules")
	}
	if err := g.Reload(Config{}); err != nil || g.TokensConfigured() {
		t.Errorf("reload to no tokens: %v", err)
	}
}

func TestMetrics(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := NewMetrics(reg)
	g, err := New(echo(t), matrixConfig(), Options{Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range []string{"t-cdp", "t-viewer", "", "t-cdp"} {
		r := httptest.NewRequest("GET", "http://127.0.0.1:9222/json/version", nil)
		if tok != "" {
			r.Header.Set("Authorization", "Bearer "+tok)
		}
		g.ServeHTTP(httptest.NewRecorder(), r)
	}
	if got := testutil.ToFloat64(m.requests[epDiscovery][outcomeAllowed]); got != 2 {
		t.Errorf("allowed = %v", got)
	}
	if got := testutil.ToFloat64(m.requests[epDiscovery][outcomeScope]); got != 1 {
		t.Errorf("scope = %v", got)
	}
	if got := testutil.ToFloat64(m.requests[epDiscovery][outcomeToken]); got != 1 {
		t.Errorf("token = %v", got)
	}
	if n := testutil.CollectAndCount(reg, "cdprelay_ingress_requests_total"); n != int(numEndpoints)*int(numOutcomes) {
		t.Errorf("%d series, want every combination from the start", n)
	}
	problems, err := testutil.GatherAndLint(reg)
	if err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %v", err, problems)
	}
}

// TestPersonEndpoint: stopping and resuming an instance's automation is
// for a viewer that may take control, or the operator; not for a viewer
// that only watches, nor a CDP client.
func TestPersonEndpoint(t *testing.T) {
	g := newGuard(t, matrixConfig())
	for tok, sc := range matrixTokens {
		for _, path := range []string{"/v1/instances/abc/stop", "/v1/instances/abc/resume"} {
			r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:9222"+path, nil)
			r.Host = "127.0.0.1:9222"
			r.Header.Set("Authorization", "Bearer "+tok)
			w := httptest.NewRecorder()
			g.ServeHTTP(w, r)
			want := http.StatusForbidden
			if sc == ScopeViewerInteractive || sc == ScopeAdmin {
				want = http.StatusOK
			}
			if w.Code != want {
				t.Errorf("%s with a %s token: %d %s, want %d", path, sc, w.Code, w.Body, want)
			}
			if want == http.StatusForbidden && !strings.Contains(w.Body.String(), "does not grant the viewer-interactive or admin scope") {
				t.Errorf("%s with a %s token: %s", path, sc, w.Body)
			}
		}
	}
	// From another site's page: refused, as every operator endpoint is.
	r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:9222/v1/instances/abc/stop", nil)
	r.Host = "127.0.0.1:9222"
	r.Header.Set("Origin", "https://evil.example")
	w := httptest.NewRecorder()
	g.ServeHTTP(w, r)
	if w.Code != http.StatusForbidden {
		t.Errorf("a cross-site stop: %d", w.Code)
	}
}
