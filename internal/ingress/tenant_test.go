package ingress

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

var tenantNameTests = []struct {
	name string
	ok   bool
}{
	{"alice", true},
	{"a", true},
	{"0", true},
	{"team-7.eu_west", true},
	{strings.Repeat("a", maxTenantBytes), true},
	{strings.Repeat("a", maxTenantBytes+1), false},
	{"", false},
	{"Alice", false},
	{"-alice", false},
	{".alice", false},
	{"_alice", false},
	{"al ice", false},
	{"alice/bob", false},
	{"alice\n", false},
	{"élise", false},
	{"alice*", false},
}

func TestValidTenant(t *testing.T) {
	for _, tt := range tenantNameTests {
		if err := ValidTenant(tt.name); (err == nil) != tt.ok {
			t.Errorf("ValidTenant(%q) = %v, want ok %v", tt.name, err, tt.ok)
		}
	}
}

func FuzzValidTenant(f *testing.F) {
	for _, tt := range tenantNameTests {
		f.Add(tt.name)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if ValidTenant(name) != nil {
			return
		}
		// What is accepted needs no escaping anywhere it is written: a
		// metric label, a log line, a URL's query.
		if name == "" || len(name) > maxTenantBytes || strings.ToLower(name) != name {
			t.Fatalf("%q accepted", name)
		}
		for _, c := range []byte(name) {
			if !tokenChar(c) || c == '~' {
				t.Fatalf("%q accepted with %q", name, c)
			}
		}
	})
}

// TestCompileTokensTenants: the token list with tenants, as the config
// file gives it.
func TestCompileTokensTenants(t *testing.T) {
	h1, h2, h3 := HashToken("one"), HashToken("two"), HashToken("three")
	tests := []struct {
		name    string
		tokens  []Token
		tenants []string
		wantErr string
	}{
		{"no tenants", []Token{{"ops", h1, []string{"admin"}, ""}}, nil, ""},
		{"two tenants and the operator", []Token{
			{"alice-agent", h1, []string{"cdp"}, "alice"},
			{"bob-agent", h2, []string{"cdp"}, "bob"},
			{"alice-browser", h3, []string{"extension", "pair"}, "alice"},
		}, []string{"alice", "bob"}, ""},
		{"bad tenant", []Token{{"x", h1, []string{"cdp"}, "Alice"}}, nil, "tokens[0] (x): tenant \"Alice\""},
		{"tenant too long", []Token{{"x", h1, []string{"cdp"}, strings.Repeat("a", 64)}}, nil, "1 to 63 characters"},
		{"pair scope", []Token{{"x", h1, []string{"pair"}, "alice"}}, []string{"alice"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tab, err := compileTokens(tt.tokens)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := tab.tenants(); strings.Join(got, ",") != strings.Join(tt.tenants, ",") {
				t.Errorf("tenants %q, want %q", got, tt.tenants)
			}
			for i, tok := range tt.tokens {
				g, ok := tab.match([]string{"one", "two", "three"}[i])
				if !ok || g.Tenant != tok.Tenant || g.TokenName != tok.Name {
					t.Errorf("match %d = %+v %v, want tenant %q", i, g, ok, tok.Tenant)
				}
			}
		})
	}
}

// TestTenantGuard: what a tenant's tokens may reach in the operator's
// area, and what the grant says of them. Which instances a tenant then
// sees is the handlers' (internal/app, relay, viewer).
func TestTenantGuard(t *testing.T) {
	cfg := Config{Tokens: []Token{
		{"ops", HashToken("t-ops"), []string{"admin"}, ""},
		{"alice-admin", HashToken("t-alice-admin"), []string{"admin"}, "alice"},
		{"alice-pair", HashToken("t-alice-pair"), []string{"pair"}, "alice"},
		{"alice-cdp", HashToken("t-alice-cdp"), []string{"cdp"}, "alice"},
	}}
	g := newGuard(t, cfg)
	tests := []struct {
		method, path, token string
		code                int
		body                string
	}{
		{"GET", "/metrics", "t-ops", 200, "next ops admin"},
		{"GET", "/metrics", "t-alice-admin", 403, "the operator's"},
		{"GET", "/debug/pprof/", "t-alice-admin", 403, "the operator's"},
		{"GET", "/v1/other", "t-alice-admin", 403, "the operator's"},
		{"GET", "/v1/instances/abc/pause", "t-alice-admin", 403, "the operator's"},
		{"POST", "/v1/instances/abc/stop", "t-alice-admin", 200, "next alice-admin"}, // the handler finds only her own
		{"GET", "/nothing-here", "t-alice-admin", 403, "the operator's"},
		{"GET", "/v1/instances", "t-alice-admin", 200, "next alice-admin admin"},
		{"GET", "/v1/audit", "t-alice-admin", 200, "next alice-admin admin"},
		{"GET", "/v1/audit/follow", "t-alice-admin", 200, "next alice-admin admin"},
		{"GET", "/v1/instances/abc", "t-alice-admin", 200, "next alice-admin admin"},
		{"DELETE", "/v1/instances/abc", "t-alice-pair", 200, "next alice-pair pair"},
		{"POST", "/v1/instances", "t-alice-pair", 200, "next alice-pair pair"},
		{"POST", "/v1/instances", "t-alice-admin", 200, "next alice-admin admin"},
		{"POST", "/v1/instances", "t-ops", 200, "next ops admin"},
		{"POST", "/v1/instances", "t-alice-cdp", 403, "admin or pair scope"},
		{"GET", "/v1/instances", "t-alice-pair", 403, "admin scope"},
		{"GET", "/v1/audit", "t-alice-pair", 403, "admin scope"},
		{"GET", "/metrics", "t-alice-pair", 403, "admin scope"},
		// A capability endpoint says nothing more for a tenant than for
		// anyone: the same 404.
		{"GET", "/extension/0123", "t-alice-pair", 404, "404 page not found"},
	}
	for _, tt := range tests {
		r := httptest.NewRequest(tt.method, "http://127.0.0.1"+tt.path, nil)
		r.RemoteAddr = "127.0.0.1:5000"
		r.Header.Set("Authorization", "Bearer "+tt.token)
		w := httptest.NewRecorder()
		g.ServeHTTP(w, r)
		if w.Code != tt.code || !strings.Contains(w.Body.String(), tt.body) {
			t.Errorf("%s %s with %s: %d %q, want %d with %q", tt.method, tt.path, tt.token, w.Code, w.Body, tt.code, tt.body)
		}
	}

	// The grant carries the tenant, and the operator's none.
	var got []string
	g2, err := New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, Tenant(r.Context()))
	}), cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range []string{"t-alice-admin", "t-ops"} {
		r := httptest.NewRequest("GET", "http://127.0.0.1/v1/instances", nil)
		r.Header.Set("Authorization", "Bearer "+tok)
		g2.ServeHTTP(httptest.NewRecorder(), r)
	}
	if strings.Join(got, ",") != "alice," {
		t.Errorf("tenants granted %q, want alice then the operator's", got)
	}
}

// TestSelfOrigins: the public URL's origin counts as the relay's own, so
// that the live view works behind a front door that terminates TLS.
func TestSelfOrigins(t *testing.T) {
	g := newGuard(t, Config{Hosts: []string{"relay.example.com"}, SelfOrigins: []string{"https://relay.example.com"}})
	for _, tt := range []struct {
		origin string
		code   int
	}{
		{"https://relay.example.com", 200},
		{"http://relay.example.com", 200}, // the request's own, as the relay sees it
		{"https://evil.example", 403},
		{"https://relay.example.com:8443", 403},
	} {
		r := httptest.NewRequest("GET", "http://relay.example.com/viewer", nil)
		r.RemoteAddr = "127.0.0.1:5000"
		r.Header.Set("Origin", tt.origin)
		w := httptest.NewRecorder()
		g.ServeHTTP(w, r)
		if w.Code != tt.code {
			t.Errorf("Origin %s: %d, want %d", tt.origin, w.Code, tt.code)
		}
	}
	if err := (Config{SelfOrigins: []string{"relay.example.com"}}).Validate(); err == nil || !strings.Contains(err.Error(), "public URL") {
		t.Errorf("a self origin without a scheme: %v", err)
	}
}

// FuzzCompileTokensTenant: whatever a config's token says, a token that
// compiles grants exactly its own tenant, which is a valid name or none.
func FuzzCompileTokensTenant(f *testing.F) {
	for _, tt := range tenantNameTests {
		f.Add("a", "cdp", tt.name)
	}
	f.Add("ops", "admin,pair", "")
	f.Add("x", "pair,extension", "team-7")
	f.Fuzz(func(t *testing.T, name, scopes, tenant string) {
		tab, err := compileTokens([]Token{
			{Name: name, SHA256: HashToken("presented"), Scopes: strings.Split(scopes, ","), Tenant: tenant},
			{Name: name + "-other", SHA256: HashToken("other"), Scopes: []string{"cdp"}, Tenant: "other"},
		})
		if err != nil {
			return
		}
		if tenant != "" && ValidTenant(tenant) != nil {
			t.Fatalf("tenant %q compiled", tenant)
		}
		g, ok := tab.match("presented")
		if !ok || g.Tenant != tenant || g.TokenName != name {
			t.Fatalf("match = %+v %v, want tenant %q", g, ok, tenant)
		}
		if g, _ := tab.match("other"); g.Tenant != "other" {
			t.Fatalf("the other token's tenant: %q", g.Tenant)
		}
	})
}
