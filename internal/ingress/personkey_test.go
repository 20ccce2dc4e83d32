package ingress

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestGeneratePersonKey(t *testing.T) {
	a, b := GeneratePersonKey(), GeneratePersonKey()
	if a == b {
		t.Fatal("two keys alike")
	}
	for _, k := range []string{a, b} {
		if err := CheckPersonKey(k); err != nil {
			t.Errorf("%q: %v", k, err)
		}
		if CheckTokenText(k) != "" {
			t.Errorf("%q: not usable as a token: %s", k, CheckTokenText(k))
		}
	}
	for _, bad := range []string{"", "cdpp_", a[:len(a)-1], a + "A", "cdpr_" + a[5:], "cdpp_" + strings.Repeat("!", 43), " " + a[1:]} {
		if CheckPersonKey(bad) == nil {
			t.Errorf("CheckPersonKey(%q) = nil", bad)
		}
	}
}

var personProtocolTests = []struct {
	name   string
	header []string
	key    string
	cred   credential
	rest   []string
}{
	{"none", nil, "", credNone, nil},
	{"others only", []string{"cdprelay-viewer, chat"}, "", credNone, []string{"cdprelay-viewer", "chat"}},
	{"key and viewer", []string{"cdprelay-viewer, cdprelay-person.cdpp_abc"}, "cdpp_abc", credToken, []string{"cdprelay-viewer"}},
	{"key first", []string{"cdprelay-person.k1 ,cdprelay-viewer"}, "k1", credToken, []string{"cdprelay-viewer"}},
	{"key alone", []string{"cdprelay-person.k1"}, "k1", credToken, nil},
	{"two lines", []string{"cdprelay-viewer", "cdprelay-person.k1"}, "k1", credToken, []string{"cdprelay-viewer"}},
	{"twice", []string{"cdprelay-person.k1, cdprelay-person.k1"}, "", credMalformed, nil},
	{"twice over two lines", []string{"cdprelay-person.k1", "cdprelay-person.k2"}, "", credMalformed, nil},
	{"empty key", []string{"cdprelay-person."}, "", credMalformed, nil},
	{"too long", []string{"cdprelay-person." + strings.Repeat("a", maxTokenBytes+1)}, "", credMalformed, nil},
	{"prefix is exact", []string{"Cdprelay-Person.k1, cdprelay-personx.k2"}, "", credNone, []string{"Cdprelay-Person.k1", "cdprelay-personx.k2"}},
	{"blank elements", []string{" , ,cdprelay-viewer,"}, "", credNone, []string{"cdprelay-viewer"}},
}

func TestPresentedPersonKey(t *testing.T) {
	for _, tt := range personProtocolTests {
		key, cred, rest := presentedPersonKey(tt.header)
		if key != tt.key || cred != tt.cred || !slices.Equal(rest, tt.rest) {
			t.Errorf("%s: presentedPersonKey(%q) = %q, %d, %q; want %q, %d, %q", tt.name, tt.header, key, cred, rest, tt.key, tt.cred, tt.rest)
		}
	}
}

func FuzzPresentedPersonKey(f *testing.F) {
	for _, tt := range personProtocolTests {
		f.Add(strings.Join(tt.header, "\n"))
	}
	f.Fuzz(func(t *testing.T, s string) {
		lines := strings.Split(s, "\n")
		key, cred, rest := presentedPersonKey(lines)
		for _, p := range rest {
			if strings.HasPrefix(p, PersonProtocolPrefix) || strings.Contains(p, ",") || p != strings.TrimSpace(p) || p == "" {
				t.Fatalf("rest %q of %q", rest, lines)
			}
		}
		if (cred == credToken) != (key != "") || (cred == credNone && strings.Contains(s, PersonProtocolPrefix) && slices.ContainsFunc(lines, func(l string) bool {
			for p := range strings.SplitSeq(l, ",") {
				if strings.HasPrefix(strings.TrimSpace(p), PersonProtocolPrefix) {
					return true
				}
			}
			return false
		})) {
			t.Fatalf("%q: key %q cred %d", lines, key, cred)
		}
	})
}

// grantEcho answers with what the guard granted and what reached it of
// the handshake, and fails the test if any credential got through.
func grantEcho(t *testing.T, key string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for name, vals := range r.Header {
			for _, v := range vals {
				if strings.Contains(v, key) || strings.Contains(v, PersonProtocolPrefix) {
					t.Errorf("%s: %s passed on: %q", r.URL, name, v)
				}
			}
		}
		if strings.Contains(r.RequestURI, key) {
			t.Errorf("%s: the key passed on in the URL", r.RequestURI)
		}
		g, _ := GrantFrom(r.Context())
		fmt.Fprintf(w, "person=%v key=%v refused=%v who=%q scopes=%s protocols=%q", g.Person, g.PersonKey, g.KeyRefused, g.Who(), g.Scopes, r.Header.Get("Sec-WebSocket-Protocol"))
	})
}

type personCase struct {
	name         string
	method, path string
	remote       string // default loopback
	origin       string
	auth         string // the Authorization header
	protocols    string // Sec-WebSocket-Protocol
	fetchSite    string
	want         int
	body         string // a part the answer must hold
}

func runPersonCases(t *testing.T, g *Guard, key string, cases []personCase) {
	t.Helper()
	for _, tt := range cases {
		r := httptest.NewRequest(tt.method, "http://127.0.0.1:9222"+tt.path, nil)
		r.RemoteAddr = "127.0.0.1:5000"
		if tt.remote != "" {
			r.RemoteAddr = tt.remote
		}
		for h, v := range map[string]string{"Origin": tt.origin, "Authorization": tt.auth, "Sec-WebSocket-Protocol": tt.protocols, "Sec-Fetch-Site": tt.fetchSite} {
			if v != "" {
				r.Header.Set(h, v)
			}
		}
		w := httptest.NewRecorder()
		g.ServeHTTP(w, r)
		if w.Code != tt.want || !strings.Contains(w.Body.String(), tt.body) {
			t.Errorf("%s: %s %s: %d %q, want %d with %q", tt.name, tt.method, tt.path, w.Code, w.Body, tt.want, tt.body)
		}
		if strings.Contains(w.Body.String(), key) || strings.Contains(fmt.Sprint(w.Header()), key) {
			t.Errorf("%s: the answer holds the key", tt.name)
		}
	}
}

// TestPersonKeyZeroConfig is the default relay (loopback, no tokens): a
// peer on this machine drives tabs, watches and reads status as before,
// but the person's actions need the person key, whatever the Origin it
// claims. The agent runs on this machine: loopback is no credential.
func TestPersonKeyZeroConfig(t *testing.T) {
	key := GeneratePersonKey()
	g, err := New(grantEcho(t, key), Config{PersonKey: key}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	const self = "http://127.0.0.1:9222"
	keyProto := "cdprelay-viewer, " + PersonProtocolPrefix + key
	wrong := GeneratePersonKey()
	personOnly := "this is the person's action"
	runPersonCases(t, g, key, []personCase{
		// What the agent holding the CDP URL may still do.
		{name: "discovery", method: "GET", path: "/json/version", want: 200, body: "person=false key=false"},
		{name: "status", method: "GET", path: "/v1/instances", want: 200, body: "person=false"},
		{name: "watching", method: "GET", path: "/viewer", want: 200, body: "person=false key=false refused=false who=\"\" scopes=cdp,viewer,viewer-interactive,admin,extension,pair"},
		{name: "watching from the page", method: "GET", path: "/viewer", origin: self, fetchSite: "same-origin", want: 200, body: "person=false"},
		// The agent's own requests for the person's actions: refused.
		{name: "stop, no Origin", method: "POST", path: "/v1/instances/abc/stop", want: 403, body: personOnly},
		{name: "resume, no Origin", method: "POST", path: "/v1/instances/abc/resume", want: 403, body: personOnly},
		{name: "resume, forged Origin", method: "POST", path: "/v1/instances/abc/resume", origin: self, fetchSite: "same-origin", want: 403, body: personOnly},
		{name: "remove", method: "DELETE", path: "/v1/instances/abc", want: 403, body: personOnly},
		{name: "remove, forged Origin", method: "DELETE", path: "/v1/instances/abc", origin: self, want: 403, body: personOnly},
		{name: "resume, a wrong key as a token", method: "POST", path: "/v1/instances/abc/resume", auth: "Bearer " + wrong, want: 403, body: personOnly},
		{name: "resume, a wrong key offered", method: "POST", path: "/v1/instances/abc/resume", protocols: PersonProtocolPrefix + wrong, want: 403, body: personOnly},
		// A page of another port of the same host: not the relay's.
		{name: "resume from a same-site page", method: "POST", path: "/v1/instances/abc/resume", origin: "http://127.0.0.1:8080", fetchSite: "same-site", want: 403},
		{name: "viewer from a same-site page", method: "GET", path: "/viewer", origin: "http://127.0.0.1:8080", fetchSite: "same-site", want: 403},
		{name: "viewer, forged Origin, same-site", method: "GET", path: "/viewer", origin: self, fetchSite: "same-site", want: 403},
		{name: "resume with the key, but same-site", method: "POST", path: "/v1/instances/abc/resume", auth: "Bearer " + key, fetchSite: "same-site", want: 403},
		// The person.
		{name: "resume with the key as a token", method: "POST", path: "/v1/instances/abc/resume", auth: "Bearer " + key, want: 200, body: "person=true key=true refused=false who=\"person key\" scopes=cdp,viewer,viewer-interactive,admin,extension,pair"},
		{name: "resume with the key in the query", method: "POST", path: "/v1/instances/abc/resume?token=" + key, want: 200, body: "person=true key=true"},
		{name: "remove with the key", method: "DELETE", path: "/v1/instances/abc", auth: "Bearer " + key, want: 200, body: "person=true"},
		{name: "the page's socket with the key", method: "GET", path: "/viewer", origin: self, fetchSite: "same-origin", protocols: keyProto, want: 200, body: "person=true key=true refused=false who=\"person key\" scopes=cdp,viewer,viewer-interactive,admin,extension,pair protocols=\"cdprelay-viewer\""},
		{name: "a program's socket with the key", method: "GET", path: "/viewer", protocols: PersonProtocolPrefix + key, want: 200, body: "person=true key=true refused=false who=\"person key\" scopes=cdp,viewer,viewer-interactive,admin,extension,pair protocols=\"\""},
		{name: "the page's socket with a stale key", method: "GET", path: "/viewer", origin: self, protocols: "cdprelay-viewer, " + PersonProtocolPrefix + wrong, want: 200, body: "person=false key=false refused=true who=\"\""},
		{name: "the key offered twice", method: "GET", path: "/viewer", protocols: keyProto + ", " + PersonProtocolPrefix + key, want: 401},
		{name: "the key and a token at once", method: "GET", path: "/viewer", auth: "Bearer " + key, protocols: keyProto, want: 401},
		// Another site: refused before any credential counts.
		{name: "the key from another site's page", method: "GET", path: "/viewer", origin: "https://evil.example", protocols: keyProto, want: 403},
		// Off this machine, the key is no more than the person's: no cdp.
		{name: "the key from afar, CDP", method: "GET", path: "/json/version", remote: "192.0.2.1:5000", auth: "Bearer " + key, want: 403},
		{name: "the key from afar, viewer", method: "GET", path: "/viewer", remote: "192.0.2.1:5000", protocols: keyProto, want: 200, body: "person=true key=true refused=false who=\"person key\" scopes=viewer,viewer-interactive"},
	})
}

// TestPersonKeyWithTokens: with tokens, the scopes are as they were, but
// a token that carries cdp never acts as the person, whatever else it
// grants; the person key acts as the person beside the tokens, and drives
// nothing.
func TestPersonKeyWithTokens(t *testing.T) {
	key := GeneratePersonKey()
	cfg := matrixConfig()
	cfg.PersonKey = key
	cfg.Tokens = append(cfg.Tokens,
		Token{Name: "agent-and-watch", SHA256: HashToken("t-cdp-interactive"), Scopes: []string{"cdp", "viewer-interactive"}},
		Token{Name: "agent-and-admin", SHA256: HashToken("t-cdp-admin"), Scopes: []string{"cdp", "admin"}},
		Token{Name: "pair", SHA256: HashToken("t-pair"), Scopes: []string{"pair"}, Tenant: "alice"},
	)
	g, err := New(grantEcho(t, key), cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	personOnly := "this is the person's action"
	runPersonCases(t, g, key, []personCase{
		{name: "interactive token", method: "POST", path: "/v1/instances/abc/stop", auth: "Bearer t-interactive", want: 200, body: "person=true key=false refused=false who=\"token name-t-interactive\""},
		{name: "admin token", method: "POST", path: "/v1/instances/abc/resume", auth: "Bearer t-admin", want: 200, body: "person=true"},
		{name: "cdp and viewer-interactive", method: "POST", path: "/v1/instances/abc/resume", auth: "Bearer t-cdp-interactive", want: 403, body: personOnly},
		{name: "cdp and admin", method: "POST", path: "/v1/instances/abc/resume", auth: "Bearer t-cdp-admin", want: 403, body: personOnly},
		{name: "cdp and admin, remove", method: "DELETE", path: "/v1/instances/abc", auth: "Bearer t-cdp-admin", want: 403, body: personOnly},
		{name: "cdp and admin, still reads status", method: "GET", path: "/v1/instances", auth: "Bearer t-cdp-admin", want: 200, body: "person=false"},
		{name: "cdp and viewer-interactive, still watches", method: "GET", path: "/viewer", auth: "Bearer t-cdp-interactive", want: 200, body: "person=false key=false refused=false who=\"token agent-and-watch\" scopes=cdp,viewer,viewer-interactive"},
		{name: "cdp token", method: "POST", path: "/v1/instances/abc/stop", auth: "Bearer t-cdp", want: 403, body: "does not grant"},
		{name: "a tenant's pair token removes", method: "DELETE", path: "/v1/instances/abc", auth: "Bearer t-pair", want: 200, body: "person=true"},
		{name: "a viewer token cannot remove", method: "DELETE", path: "/v1/instances/abc", auth: "Bearer t-viewer", want: 403, body: "does not grant the admin or pair scope"},
		{name: "no token", method: "POST", path: "/v1/instances/abc/stop", want: 401},
		{name: "the key stops", method: "POST", path: "/v1/instances/abc/stop", auth: "Bearer " + key, want: 200, body: "person=true key=true refused=false who=\"person key\" scopes=viewer,viewer-interactive"},
		{name: "the key removes", method: "DELETE", path: "/v1/instances/abc", auth: "Bearer " + key, want: 200, body: "person=true key=true"},
		{name: "the key on the page's socket", method: "GET", path: "/viewer", origin: "http://127.0.0.1:9222", protocols: "cdprelay-viewer, " + PersonProtocolPrefix + key, want: 200, body: "person=true key=true"},
		{name: "the key drives nothing", method: "GET", path: "/json/version", auth: "Bearer " + key, want: 403},
		{name: "the key on a capability URL", method: "GET", path: "/devtools/browser/0123456789abcdef0123456789abcdef", auth: "Bearer " + key, want: 404},
		{name: "the key reads no audit", method: "GET", path: "/v1/audit", auth: "Bearer " + key, want: 403},
		{name: "a stale key beside no token", method: "GET", path: "/viewer", protocols: PersonProtocolPrefix + GeneratePersonKey(), want: 401},
		{name: "a stale key beside a token", method: "GET", path: "/viewer?token=t-viewer", protocols: PersonProtocolPrefix + GeneratePersonKey(), want: 401},
	})
}

// TestPersonRefusalsCounted: a person's action refused for want of the
// person's credential has its own outcome.
func TestPersonRefusalsCounted(t *testing.T) {
	m := NewMetrics(nil)
	g, err := New(grantEcho(t, "\x00none"), Config{PersonKey: GeneratePersonKey()}, Options{Metrics: m})
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest("POST", "http://127.0.0.1:9222/v1/instances/abc/resume", nil)
	r.RemoteAddr = "127.0.0.1:5000"
	g.ServeHTTP(httptest.NewRecorder(), r)
	if got := testutil.ToFloat64(m.requests[epPerson][outcomePerson]); got != 1 {
		t.Errorf("person refusals = %v", got)
	}
}

func TestPersonKeyConfig(t *testing.T) {
	if err := (Config{PersonKey: "not-a-key"}).Validate(); err == nil || !strings.Contains(err.Error(), "person key") {
		t.Errorf("a bad key: %v", err)
	}
	// Without a key nobody is the person on the zero-config relay.
	g, err := New(grantEcho(t, "\x00none"), Config{}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	runPersonCases(t, g, "\x00none", []personCase{
		{name: "no key configured", method: "POST", path: "/v1/instances/abc/stop", auth: "Bearer " + GeneratePersonKey(), want: 403},
		{name: "no key, the page", method: "GET", path: "/viewer", protocols: PersonProtocolPrefix + GeneratePersonKey(), want: 200, body: "person=false key=false refused=true"},
	})
}
