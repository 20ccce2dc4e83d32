package relay

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/cdp"
	"github.com/cdprelay/cdprelay/relay/internal/config"
	"github.com/cdprelay/cdprelay/relay/internal/core"

	"github.com/gorilla/websocket"

	"github.com/cdprelay/cdprelay/internal/fakeext"
)

// tenantOf stands in for the ingress guard in these tests: the request's
// ?as= names its tenant.
func tenantOf(r *http.Request) string { return r.URL.Query().Get("as") }

func as(url, tenant string) string {
	if tenant == "" {
		return url
	}
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	return url + sep + "as=" + tenant
}

func newTenantHarness(t *testing.T, cfg config.Config) *harness {
	cfg.Tenant = tenantOf
	h := newHarness(t, cfg)
	h.srv.SetTenants(TenantRules{Known: []string{"alice", "bob", "carol"}})
	return h
}

// answer is what a request got, less what differs between any two
// answers (the date).
func answer(t *testing.T, h *harness, method, path string) string {
	t.Helper()
	req := httptest.NewRequest(method, "http://127.0.0.1"+path, nil)
	req.RemoteAddr = "127.0.0.1:5000"
	w := httptest.NewRecorder()
	h.srv.ServeHTTP(w, req)
	w.Result().Header.Del("Date")
	hdr, _ := json.Marshal(w.Result().Header)
	return w.Result().Status + " " + string(hdr) + " " + w.Body.String()
}

// TestTenantSeesOnlyItsInstances: to a tenant, another tenant's instance
// is an unknown one on every relay endpoint, byte for byte; its root
// discovery answers for its own instance, or 404 when it has none.
func TestTenantSeesOnlyItsInstances(t *testing.T) {
	t.Parallel()
	h := newTenantHarness(t, config.Config{})
	alice, err := h.srv.NewInstanceFor("alice", "")
	if err != nil {
		t.Fatal(err)
	}
	bob, _ := h.srv.NewInstanceFor("bob", "")
	h.extAt(as(h.extURL(alice), "alice"), fakeext.Options{Tabs: []fakeext.Tab{{ID: 1, URL: "https://alice.example/", TargetID: tid(1)}}})
	h.extAt(as(h.extURL(bob), "bob"), fakeext.Options{Tabs: []fakeext.Tab{{ID: 2, URL: "https://bob.example/", TargetID: tid(2)}}})
	h.waitFor("both tabs", func() bool { return len(alice.Status().Tabs) == 1 && len(bob.Status().Tabs) == 1 })

	unknown := cdp.NewGUID()
	for _, path := range []string{
		"/cdp/%s", "/devtools/browser/%s", "/cdp/%s/json/version", "/cdp/%s/json/list",
		"/cdp/%s/devtools/page/" + tid(2), "/extension/%s",
	} {
		theirs := answer(t, h, "GET", as(strings.Replace(path, "%s", bob.GUID(), 1), "alice"))
		none := answer(t, h, "GET", as(strings.Replace(path, "%s", unknown, 1), "alice"))
		if theirs != none || !strings.HasPrefix(none, "404 ") {
			t.Errorf("%s: another tenant's guid answers\n  %s\nan unknown one\n  %s", path, theirs, none)
		}
		// The owner gets through.
		if mine := answer(t, h, "GET", as(strings.Replace(path, "%s", bob.GUID(), 1), "bob")); strings.HasPrefix(mine, "404 ") {
			t.Errorf("%s: bob's own instance: %s", path, mine)
		}
	}
	// Root page endpoints answer for the tenant's own instance: bob's
	// target is an unknown one to alice.
	if a, b := answer(t, h, "GET", as("/devtools/page/"+tid(2), "alice")), answer(t, h, "GET", as("/devtools/page/"+tid(9), "alice")); a != b {
		t.Errorf("root page endpoint: another tenant's target %s, an unknown one %s", a, b)
	}

	version := func(tenant string) (int, string) {
		code, body := h.get(as("/json/version", tenant), "")
		var v struct{ WebSocketDebuggerURL string }
		json.Unmarshal([]byte(body), &v)
		return code, v.WebSocketDebuggerURL
	}
	if code, ws := version("alice"); code != 200 || !strings.HasSuffix(ws, "/devtools/browser/"+alice.GUID()) {
		t.Errorf("alice's /json/version: %d %s", code, ws)
	}
	if code, ws := version(""); code != 200 || !strings.HasSuffix(ws, "/devtools/browser/"+h.srv.Default().GUID()) {
		t.Errorf("the operator's /json/version: %d %s", code, ws)
	}
	if code, body := h.get(as("/json/version", "carol"), ""); code != 404 || body != "404 page not found\n" {
		t.Errorf("a tenant without an instance: %d %q", code, body)
	}
	if code, body := h.get(as("/json/list", "alice"), ""); code != 200 || !strings.Contains(body, "alice.example") || strings.Contains(body, "bob.example") {
		t.Errorf("alice's /json/list: %d %s", code, body)
	}
	if code, _ := h.get(as("/json/protocol", "carol"), ""); code != 200 {
		t.Errorf("/json/protocol needs no instance: %d", code)
	}

	// A client of alice's drives alice's tab; bob's socket is a 404 to it.
	c := h.clientAt(as(h.cdpURL(alice), "alice"))
	if got := h.autoAttach(c); len(got) != 1 {
		t.Fatalf("alice's client sees %v", got)
	}
	if code := dialStatus(h, as(h.cdpURL(bob), "alice")); code != http.StatusNotFound {
		t.Errorf("alice's client on bob's socket: %d", code)
	}

	if got := ids(h.srv.InstancesOf("alice")); got != alice.ID() {
		t.Errorf("InstancesOf(alice) = %s", got)
	}
	if got := len(h.srv.InstancesOf("")); got != 3 {
		t.Errorf("the operator sees %d instances", got)
	}
	if h.srv.LookupID("alice", bob.ID()) != nil || h.srv.LookupID("bob", bob.ID()) != bob || h.srv.LookupID("", bob.ID()) != bob {
		t.Error("LookupID lets a tenant find another's instance, or the owner not its own")
	}
}

func ids(ins []*core.Instance) string {
	var out []string
	for _, in := range ins {
		out = append(out, in.ID())
	}
	return strings.Join(out, ",")
}

func dialStatus(h *harness, url string) int {
	c, resp, err := websocket.DefaultDialer.DialContext(h.ctx, url, nil)
	if err == nil {
		c.Close()
		return http.StatusSwitchingProtocols
	}
	if resp == nil {
		return 0
	}
	return resp.StatusCode
}

// TestTenantPairing: who may pair which instance, and who owns it after.
func TestTenantPairing(t *testing.T) {
	t.Parallel()
	h := newTenantHarness(t, config.Config{})
	for _, tt := range []struct {
		name    string
		mintFor string // the instance's tenant when minted
		pairs   []string
		ok      []bool
		owner   string
	}{
		{"the operator's, paired by a tenant, is the tenant's", "", []string{"bob", "alice", "", "bob"}, []bool{true, false, true, true}, "bob"},
		{"the operator's, paired by the operator, stays the operator's", "", []string{"", "alice"}, []bool{true, false}, ""},
		{"a tenant's is paired by that tenant and the operator", "alice", []string{"bob", "alice", ""}, []bool{false, true, true}, "alice"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in, err := h.srv.NewInstanceFor(tt.mintFor, "")
			if err != nil {
				t.Fatal(err)
			}
			for i, tenant := range tt.pairs {
				e, err := fakeext.Dial(h.ctx, as(h.extURL(in), tenant), fakeext.Options{})
				if ok := err == nil; ok != tt.ok[i] {
					t.Fatalf("pairing %d as %q: %v, want ok %v", i, tenant, err, tt.ok[i])
				}
				if e != nil {
					e.Close()
				}
			}
			if in.Tenant() != tt.owner {
				t.Errorf("owner %q, want %q", in.Tenant(), tt.owner)
			}
		})
	}
	// The default instance is the operator's: no tenant pairs it, nor
	// claims it by asking without an upgrade.
	if code, _ := h.get(as("/extension/"+h.srv.Default().GUID(), "alice"), ""); code != 404 {
		t.Errorf("a tenant on the default instance's extension endpoint: %d", code)
	}
	in, _ := h.srv.NewInstanceFor("", "")
	h.get(as("/extension/"+in.GUID(), "alice"), "")
	if in.Tenant() != "" {
		t.Errorf("a plain GET claimed the instance for %q", in.Tenant())
	}
	if _, err := fakeext.Dial(h.ctx, as(h.extURL(h.srv.Default()), "alice"), fakeext.Options{}); err == nil {
		t.Error("a tenant's extension paired the default instance")
	}
}

// TestTenantMint: POST /v1/instances for a tenant and for the operator.
func TestTenantMint(t *testing.T) {
	t.Parallel()
	h := newTenantHarness(t, config.Config{PublicURL: "https://relay.example.com/relay-1/", ValidProfile: func(p string) bool { return p == "strict" || p == "loose" }})
	h.srv.SetTenants(TenantRules{Known: []string{"alice", "bob"}, MaxInstances: 2, Profiles: map[string]string{"alice": "strict"}})
	post := func(query string) (int, NewInstanceInfo, string) {
		resp, err := http.Post(h.hs.URL+"/v1/instances"+query, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b strings.Builder
		var info NewInstanceInfo
		dec := json.NewDecoder(resp.Body)
		if resp.StatusCode == http.StatusCreated {
			dec.Decode(&info)
		} else {
			buf := make([]byte, 512)
			n, _ := resp.Body.Read(buf)
			b.Write(buf[:n])
		}
		return resp.StatusCode, info, b.String()
	}
	code, info, _ := post("?as=alice")
	if code != 201 || info.Tenant != "alice" || !strings.HasPrefix(info.ExtensionURL, "wss://relay.example.com/relay-1/extension/") ||
		!strings.HasPrefix(info.CDPURL, "wss://relay.example.com/relay-1/devtools/browser/") || !strings.HasPrefix(info.HTTPURL, "https://relay.example.com/relay-1/cdp/") {
		t.Fatalf("alice mints: %d %+v", code, info)
	}
	if in := h.srv.LookupID("alice", info.InstanceID); in == nil || in.Profile() != "strict" {
		t.Errorf("alice's instance has profile %q, want the tenant's", in.Profile())
	}
	for _, tt := range []struct {
		query string
		code  int
		body  string
	}{
		{"?as=alice&profile=loose", 403, "the operator set for the tenant"},
		{"?as=alice&tenant=bob", 403, "its own tenant only"},
		{"?as=alice&tenant=alice", 201, ""},
		{"?as=alice", 409, "tenant alice already keeps 2 instances"},
		{"?tenant=nobody", 400, `no token names the tenant "nobody"`},
		{"?tenant=bob&profile=loose", 201, ""},
		{"?tenant=bob&tenant=alice", 400, "once each"},
		{"?profile=nope", 503, `no policy profile "nope"`},
	} {
		code, _, body := post(tt.query)
		if code != tt.code || !strings.Contains(body, tt.body) {
			t.Errorf("POST %s: %d %q, want %d %q", tt.query, code, body, tt.code, tt.body)
		}
	}
	if got := h.srv.InstancesOf("bob"); len(got) != 1 || got[0].Profile() != "loose" {
		t.Errorf("bob's instances %v", ids(got))
	}
	// Discovery names the public URL too.
	if _, body := h.get(as("/json/version", "bob"), ""); !strings.Contains(body, `"webSocketDebuggerUrl": "wss://relay.example.com/relay-1/devtools/browser/`) {
		t.Errorf("bob's /json/version: %s", body)
	}
}

// TestSaveRestore: a relay restarted with what it saved keeps every
// minted instance's guid, id, tenant and profile; one never paired
// expires as before, one paired does not.
func TestSaveRestore(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var saved []config.SavedInstance
	save := func(list []config.SavedInstance) error {
		mu.Lock()
		defer mu.Unlock()
		saved = list
		return nil
	}
	last := func() []config.SavedInstance {
		mu.Lock()
		defer mu.Unlock()
		return saved
	}
	h := newTenantHarness(t, config.Config{Save: save})
	paired, _ := h.srv.NewInstanceFor("", "")
	unpaired, _ := h.srv.NewInstanceFor("alice", "")
	if n := len(last()); n != 2 {
		t.Fatalf("%d saved after two mints", n)
	}
	e := h.extAt(as(h.extURL(paired), "bob"), fakeext.Options{})
	if got := last(); len(got) != 2 || got[0].Tenant != "bob" || !got[0].Paired || got[1].Paired {
		t.Fatalf("after bob pairs: %+v", got)
	}
	e.Close()

	h2 := newTenantHarness(t, config.Config{Restore: last(), UnclaimedTTL: 300 * time.Millisecond, Save: func([]config.SavedInstance) error { return errors.New("disk full") }})
	r := h2.srv.LookupID("", paired.ID())
	if r == nil || r.GUID() != paired.GUID() || r.Tenant() != "bob" || !r.Created().Equal(paired.Created()) {
		t.Fatalf("restored %+v", r)
	}
	h2.extAt(as(h2.extURL(r), "bob"), fakeext.Options{})
	if u := h2.srv.LookupID("alice", unpaired.ID()); u == nil || u.GUID() != unpaired.GUID() {
		t.Fatal("the unpaired instance was not restored")
	}
	h2.waitFor("the unpaired instance expires", func() bool { return h2.srv.LookupID("", unpaired.ID()) == nil })
	time.Sleep(100 * time.Millisecond)
	if h2.srv.LookupID("", paired.ID()) == nil {
		t.Error("the paired instance expired")
	}

	// What makes no sense is skipped, not fatal.
	h3 := newTenantHarness(t, config.Config{Restore: []config.SavedInstance{
		{ID: "zz", GUID: cdp.NewGUID()},
		{ID: "0123456789ab", GUID: "not-a-guid"},
		{ID: "0123456789ab", GUID: paired.GUID(), Paired: true},
		{ID: "0123456789ab", GUID: cdp.NewGUID(), Paired: true},
	}})
	if n := len(h3.srv.Instances()); n != 2 {
		t.Errorf("%d instances restored from one good entry (and the default)", n)
	}
}

func FuzzParsePublicURL(f *testing.F) {
	for _, tt := range publicURLTests {
		f.Add(tt.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := config.ParsePublicURL(s)
		if err != nil {
			return
		}
		if (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil || strings.HasSuffix(u.Path, "/") {
			t.Fatalf("%q accepted as %#v", s, u)
		}
		// What is accepted is a base the relay can append paths to.
		again, err := config.ParsePublicURL(u.String())
		if err != nil || again.String() != u.String() {
			t.Fatalf("%q: %q does not parse back (%v)", s, u, err)
		}
	})
}

var publicURLTests = []struct {
	in, want string // want "" for an error
}{
	{"https://relay.example.com", "https://relay.example.com"},
	{"https://relay.example.com/", "https://relay.example.com"},
	{"https://relay.example.com/relay-1", "https://relay.example.com/relay-1"},
	{"https://relay.example.com/relay-1/", "https://relay.example.com/relay-1"},
	{"http://127.0.0.1:8080/a/b", "http://127.0.0.1:8080/a/b"},
	{"https://[::1]:8443/n2", "https://[::1]:8443/n2"},
	{"ftp://relay.example.com", ""},
	{"relay.example.com/n1", ""},
	{"https://", ""},
	{"https://:443/x", ""},
	{"https://user@relay.example.com", ""},
	{"https://relay.example.com/n1?x=1", ""},
	{"https://relay.example.com/n1#x", ""},
	{"https://relay.example.com/n%2F1", ""},
	{"https://relay.example.com/a/../b", ""},
	{"https://relay.example.com//n1", ""},
}

func TestParsePublicURL(t *testing.T) {
	for _, tt := range publicURLTests {
		u, err := config.ParsePublicURL(tt.in)
		switch {
		case tt.want == "" && err == nil:
			t.Errorf("ParsePublicURL(%q) = %s, want an error", tt.in, u)
		case tt.want != "" && (err != nil || u.String() != tt.want):
			t.Errorf("ParsePublicURL(%q) = %v, %v; want %s", tt.in, u, err, tt.want)
		}
	}
}

// FuzzTenantRoute: whatever path a tenant's request takes, bob's guid or
// target in it answers exactly as one nobody has.
func FuzzTenantRoute(f *testing.F) {
	for _, p := range []string{
		"/cdp/%G", "/devtools/browser/%G", "/cdp/%G/json/version", "/cdp/%G/json/list/", "/cdp/%G/json",
		"/cdp/%G/devtools/page/%T", "/devtools/page/%T", "/extension/%G", "/json/version", "/json/protocol",
		"/cdp/%G/json/protocol", "/cdp/%G/other", "/cdp/%G/devtools/page/", "/v1/instances", "/%G",
	} {
		f.Add(p, "alice")
		f.Add(p, "carol")
	}
	srv, err := New(config.Config{Tenant: tenantOf})
	if err != nil {
		f.Fatal(err)
	}
	srv.SetTenants(TenantRules{Known: []string{"alice", "bob", "carol"}})
	hs := httptest.NewServer(srv)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	f.Cleanup(func() {
		cancel()
		cctx, ccancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer ccancel()
		srv.Close(cctx)
		hs.Close()
	})
	h := &harness{srv: srv, hs: hs, ctx: ctx}
	bob, _ := srv.NewInstanceFor("bob", "")
	e, err := fakeext.Dial(ctx, as(h.extURL(bob), "bob"), fakeext.Options{Tabs: []fakeext.Tab{{ID: 2, URL: "https://bob.example/", TargetID: tid(2)}}})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(e.Close)
	for len(bob.Status().Tabs) == 0 {
		if ctx.Err() != nil {
			f.Fatal("bob's tab never came")
		}
		time.Sleep(time.Millisecond)
	}
	unknownGUID, unknownTarget := cdp.NewGUID(), tid(99)
	f.Fuzz(func(t *testing.T, tmpl, tenant string) {
		if tenant == "bob" || tenant == "" || strings.ContainsAny(tmpl, "?#") || !strings.HasPrefix(tmpl, "/") {
			return
		}
		fill := func(g, tg string) string {
			return strings.ReplaceAll(strings.ReplaceAll(tmpl, "%G", g), "%T", tg)
		}
		// POST and GET: minting must not be reached either way by a path
		// with bob's guid in it.
		for _, method := range []string{"GET", "POST"} {
			theirs := answerTo(h, method, fill(bob.GUID(), tid(2)), tenant)
			none := answerTo(h, method, fill(unknownGUID, unknownTarget), tenant)
			if strings.Contains(theirs, bob.GUID()) || theirs != strings.ReplaceAll(strings.ReplaceAll(none, unknownGUID, bob.GUID()), unknownTarget, tid(2)) {
				t.Fatalf("%s %s as %s: bob's\n  %s\nnobody's\n  %s", method, tmpl, tenant, theirs, none)
			}
		}
	})
}

// answerTo is answer for a request acting for tenant, with what varies
// between any two answers (a minted instance's id and guid) left out.
func answerTo(h *harness, method, path, tenant string) string {
	u, err := url.Parse("http://127.0.0.1" + path)
	if err != nil || u.Path != path {
		return "unparsable"
	}
	q := u.Query()
	q.Set("as", tenant)
	req := httptest.NewRequest(method, "http://127.0.0.1"+u.EscapedPath()+"?"+q.Encode(), nil)
	req.RemoteAddr = "127.0.0.1:5000"
	w := httptest.NewRecorder()
	h.srv.ServeHTTP(w, req)
	if w.Code == http.StatusCreated {
		return "201" // a fresh instance of the tenant's: nobody's to compare
	}
	w.Result().Header.Del("Date")
	hdr, _ := json.Marshal(w.Result().Header)
	return w.Result().Status + " " + string(hdr) + " " + w.Body.String()
}
