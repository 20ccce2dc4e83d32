package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/cdprelay/cdprelay/extension"
	"github.com/cdprelay/cdprelay/internal/cdptest"
	"github.com/cdprelay/cdprelay/internal/fakeext"
	"github.com/cdprelay/cdprelay/internal/ingress"
	"github.com/cdprelay/cdprelay/relay"
)

// teamTokens: the operator, and alice and bob with an agent's, a
// browser's and a watcher's token each. The token is its name.
var teamTokens = []ingress.Token{
	{Name: "ops", Scopes: []string{"admin", "cdp", "viewer", "extension"}},
	{Name: "alice-cdp", Scopes: []string{"cdp"}, Tenant: "alice"},
	{Name: "alice-browser", Scopes: []string{"extension", "pair"}, Tenant: "alice"},
	{Name: "alice-watch", Scopes: []string{"admin", "viewer-interactive"}, Tenant: "alice"},
	{Name: "bob-cdp", Scopes: []string{"cdp"}, Tenant: "bob"},
	{Name: "bob-browser", Scopes: []string{"extension", "pair"}, Tenant: "bob"},
	{Name: "bob-watch", Scopes: []string{"admin", "viewer"}, Tenant: "bob"},
	{Name: "carol-cdp", Scopes: []string{"cdp"}, Tenant: "carol"},
}

func teamFile() File {
	f := File{Tenants: TenantsConfig{InstancesGauge: true}}
	for _, t := range teamTokens {
		t.SHA256 = ingress.HashToken(t.Name)
		f.Tokens = append(f.Tokens, t)
	}
	return f
}

// team is a served App with an instance each for alice and bob, minted
// and paired through the front door with their own tokens, each sharing
// one tab.
type team struct {
	*served
	t          *testing.T
	ctx        context.Context
	alice, bob relay.NewInstanceInfo
}

func newTeam(t *testing.T) *team {
	s := serve(t, Config{Addr: "127.0.0.1:0", File: teamFile()})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	tm := &team{served: s, t: t, ctx: ctx}
	for i, who := range []string{"alice", "bob"} {
		code, body, _ := tm.do("POST", "/v1/instances", who+"-browser", nil)
		var info relay.NewInstanceInfo
		if code != http.StatusCreated || json.Unmarshal([]byte(body), &info) != nil || info.Tenant != who {
			t.Fatalf("%s mints: %d %s", who, code, body)
		}
		e, err := fakeext.Dial(ctx, info.ExtensionURL+"?token="+who+"-browser", fakeext.Options{
			Origin: "chrome-extension://" + extension.ID,
			Tabs:   []fakeext.Tab{{ID: 10 + i, URL: "https://" + who + ".example/", Title: who + "'s tab", TargetID: fmt.Sprintf("%032X", 10+i)}},
		})
		if err != nil {
			t.Fatalf("%s's extension: %v", who, err)
		}
		t.Cleanup(e.Close)
		if err := s.app.Relay().LookupID("", info.InstanceID).WaitReady(ctx); err != nil {
			t.Fatalf("%s's extension: %v", who, err)
		}
		if who == "alice" {
			tm.alice = info
		} else {
			tm.bob = info
		}
	}
	return tm
}

func (tm *team) do(method, path, token string, hdr http.Header) (int, string, http.Header) {
	tm.t.Helper()
	req, _ := http.NewRequestWithContext(tm.ctx, method, "http://"+tm.addr+path, nil)
	for k, v := range hdr {
		req.Header[k] = v
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tm.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

// answer is a whole answer less its date, for comparing byte for byte.
func answer(code int, body string, h http.Header) string {
	h = h.Clone()
	h.Del("Date")
	hb, _ := json.Marshal(h)
	return fmt.Sprintf("%d %s %q", code, hb, body)
}

func (tm *team) get(path, token string) string {
	tm.t.Helper()
	return answer(tm.do("GET", path, token, nil))
}

// dial is a WebSocket handshake's answer, whole, less its date.
func (tm *team) dial(path, token string, origin string) string {
	tm.t.Helper()
	h := http.Header{"Authorization": {"Bearer " + token}}
	if origin != "" {
		h.Set("Origin", origin)
	}
	c, resp, err := websocket.DefaultDialer.DialContext(tm.ctx, "ws://"+tm.addr+path, h)
	if err == nil {
		c.Close()
		return "101"
	}
	if resp == nil {
		tm.t.Fatalf("dial %s: %v", path, err)
	}
	b, _ := io.ReadAll(resp.Body)
	return answer(resp.StatusCode, string(b), resp.Header)
}

func guidOf(u string) string { return u[strings.LastIndex(u, "/")+1:] }

// TestTenantsAnswerAsUnknown: to alice's tokens, bob's instance is an
// unknown one on every kind of endpoint: the same answer, status,
// headers and body, byte for byte. Bob's own tokens get through, and so
// do the operator's.
func TestTenantsAnswerAsUnknown(t *testing.T) {
	tm := newTeam(t)
	bobGUID, unknownGUID := guidOf(tm.bob.CDPURL), relay.NewGUID()
	bobTarget, unknownTarget := fmt.Sprintf("%032X", 11), fmt.Sprintf("%032X", 99)
	ext := "chrome-extension://" + extension.ID

	type probe struct {
		name     string
		answer   func(guid, target, id string) string
		owner    string // bob's token that gets through
		ownerGot func(string) bool
	}
	ok := func(a string) bool { return a == "101" || strings.HasPrefix(a, "200 ") }
	probes := []probe{
		{"CDP socket /devtools/browser", func(g, _, _ string) string { return tm.dial("/devtools/browser/"+g, "alice-cdp", "") }, "bob-cdp", ok},
		{"CDP socket /cdp", func(g, _, _ string) string { return tm.dial("/cdp/"+g, "alice-cdp", "") }, "bob-cdp", ok},
		{"page socket /cdp/<guid>/devtools/page", func(g, tg, _ string) string {
			return tm.dial("/cdp/"+g+"/devtools/page/"+tg, "alice-cdp", "")
		}, "bob-cdp", ok},
		{"root page socket /devtools/page", func(_, tg, _ string) string { return tm.dial("/devtools/page/"+tg, "alice-cdp", "") }, "bob-cdp", ok},
		{"extension socket", func(g, _, _ string) string { return tm.dial("/extension/"+g, "alice-browser", ext) }, "bob-browser", ok},
		{"/cdp/<guid>/json/version", func(g, _, _ string) string { return tm.get("/cdp/"+g+"/json/version", "alice-cdp") }, "bob-cdp", ok},
		{"/cdp/<guid>/json/list", func(g, _, _ string) string { return tm.get("/cdp/"+g+"/json/list", "alice-cdp") }, "bob-cdp", ok},
		{"/v1/instances/<id>", func(_, _, id string) string { return tm.get("/v1/instances/"+id, "alice-watch") }, "bob-watch", ok},
		{"DELETE /v1/instances/<id>", func(_, _, id string) string {
			return answer(tm.do("DELETE", "/v1/instances/"+id, "alice-browser", nil))
		}, "", nil},
		{"/v1/audit?instance=", func(_, _, id string) string { return tm.get("/v1/audit?instance="+id, "alice-watch") }, "bob-watch", ok},
		{"/v1/audit/follow?instance=", func(_, _, id string) string {
			return tm.get("/v1/audit/follow?instance="+id, "alice-watch")
		}, "", nil},
		{"/viewer subscribe", func(_, _, id string) string { return tm.subscribe("alice-watch", id) }, "bob-watch", func(a string) bool { return !strings.Contains(a, "error") }},
		{"POST /v1/instances/<id>/stop", func(_, _, id string) string {
			return answer(tm.do("POST", "/v1/instances/"+id+"/stop", "alice-watch", nil))
		}, "", nil},
	}
	for _, p := range probes {
		theirs := p.answer(bobGUID, bobTarget, tm.bob.InstanceID)
		none := p.answer(unknownGUID, unknownTarget, "0123456789ab")
		if theirs != none {
			t.Errorf("%s: bob's instance\n  %s\nan unknown one\n  %s", p.name, theirs, none)
		}
		if strings.Contains(theirs, bobGUID) || strings.Contains(theirs, tm.bob.InstanceID) {
			t.Errorf("%s: the answer names bob's instance: %s", p.name, theirs)
		}
		if p.name != "/viewer subscribe" && !strings.HasPrefix(none, "404 ") {
			t.Errorf("%s: %s, want a 404", p.name, none)
		}
	}
	// Bob's own tokens reach his instance where alice's got a 404.
	if a := tm.dial("/devtools/browser/"+bobGUID, "bob-cdp", ""); a != "101" {
		t.Errorf("bob's CDP socket, bob's token: %s", a)
	}
	if a := tm.get("/v1/instances/"+tm.bob.InstanceID, "bob-watch"); !strings.HasPrefix(a, "200 ") {
		t.Errorf("bob's instance, bob's token: %s", a)
	}
	if a := tm.subscribe("bob-watch", tm.bob.InstanceID); strings.Contains(a, "error") {
		t.Errorf("bob subscribes to his own tab: %s", a)
	}
}

// subscribe connects a viewer with token, subscribes to the instance's
// tab (the team's tabs are 10 and 11) and returns the first answer that
// is not a list or hello.
func (tm *team) subscribe(token, instance string) string {
	tm.t.Helper()
	c, _, err := websocket.DefaultDialer.DialContext(tm.ctx, "ws://"+tm.addr+"/viewer?token="+token, nil)
	if err != nil {
		tm.t.Fatalf("viewer: %v", err)
	}
	defer c.Close()
	tab := 10
	if instance == tm.bob.InstanceID {
		tab = 11
	}
	c.WriteJSON(map[string]any{"type": "subscribe", "id": 1, "instance": instance, "tab": tab})
	for {
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		mt, b, err := c.ReadMessage()
		if err != nil {
			tm.t.Fatalf("viewer read: %v", err)
		}
		var m struct{ Type string }
		json.Unmarshal(b, &m)
		if mt == websocket.TextMessage && (m.Type == "error" || m.Type == "status") {
			return string(b)
		}
	}
}

// TestTenantsSeeTheirOwn: discovery, the instance list, the audit log,
// the viewer's list and metrics, for a tenant and for the operator.
func TestTenantsSeeTheirOwn(t *testing.T) {
	tm := newTeam(t)
	version := func(token string) (int, string) {
		code, body, _ := tm.do("GET", "/json/version", token, nil)
		var v struct{ WebSocketDebuggerURL string }
		json.Unmarshal([]byte(body), &v)
		return code, v.WebSocketDebuggerURL
	}
	if code, ws := version("alice-cdp"); code != 200 || ws != tm.alice.CDPURL {
		t.Errorf("alice's discovery: %d %s, want %s", code, ws, tm.alice.CDPURL)
	}
	if code, ws := version("ops"); code != 200 || !strings.HasSuffix(ws, tm.app.Relay().Default().GUID()) {
		t.Errorf("the operator's discovery: %d %s", code, ws)
	}
	if code, body, _ := tm.do("GET", "/json/version", "carol-cdp", nil); code != 404 || body != "404 page not found\n" {
		t.Errorf("carol, who has no instance: %d %q", code, body)
	}
	if _, body, _ := tm.do("GET", "/json/list", "alice-cdp", nil); !strings.Contains(body, "alice.example") || strings.Contains(body, "bob.example") {
		t.Errorf("alice's /json/list: %s", body)
	}

	list := func(token string) []string {
		_, body, _ := tm.do("GET", "/v1/instances", token, nil)
		var v struct{ Instances []relay.Status }
		json.Unmarshal([]byte(body), &v)
		var ids []string
		for _, in := range v.Instances {
			ids = append(ids, in.ID)
		}
		slices.Sort(ids)
		return ids
	}
	if got := list("alice-watch"); !slices.Equal(got, []string{tm.alice.InstanceID}) {
		t.Errorf("alice's /v1/instances: %v", got)
	}
	if got := list("ops"); len(got) != 3 {
		t.Errorf("the operator's /v1/instances: %v", got)
	}

	// The audit log: alice reads her records only, the operator all.
	waitAudit := func(token, instance string) []string {
		t.Helper()
		var tenants []string
		for range 200 {
			_, body, _ := tm.do("GET", "/v1/audit", token, nil)
			var v struct {
				Records []struct{ Instance, Tenant string }
			}
			json.Unmarshal([]byte(body), &v)
			tenants = tenants[:0]
			seen := false
			for _, r := range v.Records {
				tenants = append(tenants, r.Tenant)
				seen = seen || r.Instance == instance
			}
			if seen {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		return tenants
	}
	for _, tn := range waitAudit("alice-watch", tm.alice.InstanceID) {
		if tn != "alice" {
			t.Fatalf("alice's audit holds a record of %q", tn)
		}
	}
	if got := waitAudit("ops", tm.bob.InstanceID); !slices.Contains(got, "alice") || !slices.Contains(got, "bob") {
		t.Errorf("the operator's audit: tenants %v", got)
	}

	// A tenant's admin token is not the operator's: no metrics.
	if code, body, _ := tm.do("GET", "/metrics", "alice-watch", nil); code != 403 || !strings.Contains(body, "operator's") {
		t.Errorf("alice's /metrics: %d %q", code, body)
	}
	if n := testutil.CollectAndCount(tm.app.Registry(), "cdprelay_tenant_instances"); n != 3 {
		t.Errorf("%d tenant gauge series, want one per tenant the tokens name", n)
	}
	_, body, _ := tm.do("GET", "/metrics", "ops", nil)
	if !strings.Contains(body, `cdprelay_tenant_instances{tenant="alice"} 1`) || !strings.Contains(body, `cdprelay_tenant_instances{tenant="carol"} 0`) {
		t.Errorf("the tenant gauge: %s", grepLines(body, "cdprelay_tenant_instances"))
	}

	// Removing: alice's browser token removes her instance; then it is
	// gone for her discovery too.
	if code, _, _ := tm.do("DELETE", "/v1/instances/"+tm.alice.InstanceID, "alice-browser", nil); code != http.StatusNoContent {
		t.Errorf("alice removes her instance: %d", code)
	}
	if code, _ := version("alice-cdp"); code != 404 {
		t.Errorf("alice's discovery after the removal: %d", code)
	}
	// The operator's token carries cdp: what drives tabs never acts as
	// the person, removing an instance included. The person key does.
	if code, body, _ := tm.do("DELETE", "/v1/instances/"+tm.bob.InstanceID, "ops", nil); code != http.StatusForbidden || !strings.Contains(body, "person's action") {
		t.Errorf("a token with cdp removes an instance: %d %s", code, body)
	}
	if code, body, _ := tm.do("DELETE", "/v1/instances/"+tm.app.Relay().Default().ID(), tm.app.PersonKey(), nil); code != http.StatusConflict {
		t.Errorf("removing the default instance: %d %s", code, body)
	}
	if code, body, _ := tm.do("GET", "/v1/instances/"+tm.bob.InstanceID, "bob-browser", nil); code != 403 || !strings.Contains(body, "admin scope") {
		t.Errorf("a pair token reads an instance: %d %s", code, body)
	}
}

func grepLines(s, word string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, word) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestPublicURL: behind a front door that routes /relay-2/ here, every
// capability URL names the front door and the prefix, a request with the
// prefix is served as one without, and the front door's host and origin
// are the relay's own.
func TestPublicURL(t *testing.T) {
	f := teamFile()
	s := serve(t, Config{Addr: "127.0.0.1:0", File: f, PublicURL: "https://relay.example.com/relay-2"})
	tm := &team{served: s, t: t, ctx: context.Background()}
	for _, path := range []string{"/json/version", "/relay-2/json/version"} {
		code, body, _ := tm.do("GET", path, "ops", http.Header{"Host": {"relay.example.com"}})
		if code != 200 || !strings.Contains(body, `"webSocketDebuggerUrl": "wss://relay.example.com/relay-2/devtools/browser/`) {
			t.Errorf("%s: %d %s", path, code, body)
		}
	}
	req, _ := http.NewRequest("POST", "http://"+s.addr+"/relay-2/v1/instances", nil)
	req.Host = "relay.example.com"
	req.Header.Set("Authorization", "Bearer alice-browser")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var info relay.NewInstanceInfo
	json.NewDecoder(resp.Body).Decode(&info)
	resp.Body.Close()
	if !strings.HasPrefix(info.ExtensionURL, "wss://relay.example.com/relay-2/extension/") || !strings.HasPrefix(info.HTTPURL, "https://relay.example.com/relay-2/cdp/") {
		t.Errorf("minted behind the front door: %+v", info)
	}
	for _, tt := range []struct {
		path, host string
		code       int
	}{
		{"/relay-2/", "relay.example.com", 200},
		{"/relay-2", "relay.example.com", 200},
		{"/relay-2/app.js", "relay.example.com", 200},
		{"/relay-2x/app.js", "relay.example.com", 403}, // not the prefix: an operator's path
		{"/relay-2/../v1/audit", "relay.example.com", 404},
		{"/relay-2/app.js", "evil.example", 403},
	} {
		req, _ := http.NewRequest("GET", "http://"+s.addr+tt.path, nil)
		req.URL.Opaque = tt.path // sent as it is, dot segments included
		req.Host = tt.host
		req.Header.Set("Authorization", "Bearer alice-watch")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.code {
			t.Errorf("GET %s (Host %s): %d, want %d", tt.path, tt.host, resp.StatusCode, tt.code)
		}
	}
	// The live view's socket from the page the front door serves over
	// https, while the relay sees plain http.
	h := http.Header{"Origin": {"https://relay.example.com"}}
	c, resp, err := (&websocket.Dialer{}).Dial("ws://"+s.addr+"/relay-2/viewer?token=alice-watch", withHost(h, "relay.example.com"))
	if err != nil {
		code := 0
		if resp != nil {
			code = resp.StatusCode
		}
		t.Fatalf("viewer behind the front door: %v %d", err, code)
	}
	c.Close()

	if _, err := New(Config{Addr: "127.0.0.1:0", PublicURL: "https://relay.example.com/x"}); err == nil || !strings.Contains(err.Error(), "configure tokens") {
		t.Errorf("a public URL off loopback without tokens: %v", err)
	}
	if _, err := New(Config{Addr: "127.0.0.1:0", PublicURL: "https://relay.example.com/x?y"}); err == nil || !strings.Contains(err.Error(), "--public-url") {
		t.Errorf("a bad public URL: %v", err)
	}
	if a, err := New(Config{Addr: "127.0.0.1:0", PublicURL: "http://127.0.0.1:8080/n1"}); err != nil {
		t.Errorf("a loopback front door without tokens: %v", err)
	} else {
		a.Close(context.Background())
	}
	for _, prefix := range []string{"/json", "/cdp", "/v1", "/viewer", "/index.html", "/metrics"} {
		if _, err := New(Config{Addr: "127.0.0.1:0", PublicURL: "http://127.0.0.1:8080" + prefix}); err == nil || !strings.Contains(err.Error(), "path of the relay's own") {
			t.Errorf("the prefix %s: %v", prefix, err)
		}
	}
	_ = cdptest.Dial // the CDP client is exercised end to end
}

func withHost(h http.Header, host string) http.Header {
	h.Set("Host", host)
	return h
}
