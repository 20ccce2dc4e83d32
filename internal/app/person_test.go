package app

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/cdprelay/cdprelay/extension"
	"github.com/cdprelay/cdprelay/internal/fakeext"
	"github.com/cdprelay/cdprelay/internal/ingress"
	"github.com/cdprelay/cdprelay/viewer"
)

// syncBuffer is a log destination tests read while the App writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// personRelay is a served zero-config App with a fake extension sharing
// one tab, its log kept.
type personRelay struct {
	*served
	t   *testing.T
	ctx context.Context
	log *syncBuffer
}

func newPersonRelay(t *testing.T, file File) *personRelay {
	t.Helper()
	logs := &syncBuffer{}
	s := serve(t, Config{Addr: "127.0.0.1:0", File: file, PersonKeyFile: "/state/person-key",
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	extURL := "ws://" + s.addr + "/extension/" + s.app.Relay().Default().GUID()
	if len(file.Tokens) > 0 {
		extURL += "?token=ext"
	}
	e, err := fakeext.Dial(ctx, extURL, fakeext.Options{
		Origin: "chrome-extension://" + extension.ID,
		Tabs:   []fakeext.Tab{{ID: 7, URL: "https://example.com/", Title: "Example", TargetID: "0000000000000000000000000000000A"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	if err := s.app.Relay().Default().WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	return &personRelay{served: s, t: t, ctx: ctx, log: logs}
}

// viewerConn is a viewer socket and what it was told.
type viewerConn struct {
	t     *testing.T
	c     *websocket.Conn
	hello struct {
		Viewer      string `json:"viewer"`
		Interactive bool   `json:"interactive"`
		Hint        string `json:"hint"`
		KeyRefused  bool   `json:"keyRefused"`
	}
	raw []string // every text message read
}

// dialViewer opens /viewer with the Origin and subprotocols given, as a
// page or a program would, and reads its hello; a refused handshake is
// returned as its status.
func (p *personRelay) dialViewer(origin string, protocols []string, hdr http.Header) (*viewerConn, int) {
	p.t.Helper()
	h := http.Header{}
	for k, v := range hdr {
		h[k] = v
	}
	if origin != "" {
		h.Set("Origin", origin)
	}
	d := websocket.Dialer{Subprotocols: protocols, HandshakeTimeout: 10 * time.Second}
	c, resp, err := d.DialContext(p.ctx, "ws://"+p.addr+"/viewer", h)
	if err != nil {
		if resp == nil {
			p.t.Fatalf("dial the viewer: %v", err)
		}
		return nil, resp.StatusCode
	}
	p.t.Cleanup(func() { c.Close() })
	if len(protocols) > 0 && c.Subprotocol() != viewer.Protocol {
		p.t.Errorf("offered %q, answered %q", protocols, c.Subprotocol())
	}
	v := &viewerConn{t: p.t, c: c}
	if err := json.Unmarshal([]byte(v.read("hello")), &v.hello); err != nil {
		p.t.Fatal(err)
	}
	return v, http.StatusSwitchingProtocols
}

// read returns the next message of type typ.
func (v *viewerConn) read(typ string) string {
	v.t.Helper()
	_ = v.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	for {
		mt, b, err := v.c.ReadMessage()
		if err != nil {
			v.t.Fatalf("waiting for %s: %v (read %q)", typ, err, v.raw)
		}
		if mt != websocket.TextMessage {
			continue
		}
		v.raw = append(v.raw, string(b))
		var m struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal(b, &m)
		if m.Type == typ {
			return string(b)
		}
	}
}

func (v *viewerConn) send(m map[string]any) {
	v.t.Helper()
	if err := v.c.WriteJSON(m); err != nil {
		v.t.Fatal(err)
	}
}

// TestPersonKeyZeroConfig is the default relay as the agent on the same
// machine meets it: it drives tabs and watches, but every way it has to
// act as the person (its own viewer socket with no Origin or a forged
// one, its own HTTP requests) is refused, and the person, with the key,
// acts. The audit log says who did what; the key is in nothing the relay
// serves or logs.
func TestPersonKeyZeroConfig(t *testing.T) {
	p := newPersonRelay(t, File{})
	key := p.app.PersonKey()
	inst := p.app.Relay().Default().ID()
	self := "http://" + p.addr

	// The agent's own sockets: view-only, told how the person acts.
	for _, origin := range []string{"", self} {
		v, code := p.dialViewer(origin, nil, nil)
		if code != http.StatusSwitchingProtocols {
			t.Fatalf("Origin %q: %d", origin, code)
		}
		if v.hello.Interactive || !strings.Contains(v.hello.Hint, "person key") || !strings.Contains(v.hello.Hint, "/state/person-key") {
			t.Fatalf("Origin %q: hello %+v", origin, v.hello)
		}
		for _, m := range []map[string]any{
			{"type": "stop", "instance": inst},
			{"type": "resume", "instance": inst},
			{"type": "approve", "instance": inst, "approval": 1},
			{"type": "answer-dialog", "instance": inst, "tab": 7, "accept": true},
			{"type": "take-control"},
		} {
			v.send(m)
			if e := v.read("error"); !strings.Contains(e, "only watch") {
				t.Errorf("Origin %q, %v: %s", origin, m["type"], e)
			}
		}
	}
	// A page on another port of this host is not the relay's page.
	if _, code := p.dialViewer("http://127.0.0.1:1", nil, nil); code != http.StatusForbidden {
		t.Errorf("another port's page: %d", code)
	}
	if _, code := p.dialViewer("http://127.0.0.1:1", []string{viewer.Protocol, ingress.PersonProtocolPrefix + key}, nil); code != http.StatusForbidden {
		t.Errorf("another port's page, even with the key: %d", code)
	}
	for _, h := range []http.Header{nil, {"Origin": {self}}, {"Origin": {self}, "Sec-Fetch-Site": {"same-origin"}}} {
		for _, req := range [][2]string{{"POST", "/v1/instances/" + inst + "/stop"}, {"DELETE", "/v1/instances/" + inst}} {
			if code, body, _ := getWith(t, req[0], self+req[1], h); code != http.StatusForbidden {
				t.Errorf("the agent's %s %s %v: %d %s", req[0], req[1], h, code, body)
			}
		}
	}
	if stopped, _ := p.app.Relay().Default().Stopped(); stopped {
		t.Fatal("the agent stopped the automation")
	}

	// The person: the page's socket offers the key as a subprotocol.
	pv, code := p.dialViewer(self, []string{viewer.Protocol, ingress.PersonProtocolPrefix + key}, http.Header{"Sec-Fetch-Site": {"same-origin"}})
	if code != http.StatusSwitchingProtocols || !pv.hello.Interactive || !strings.HasSuffix(pv.hello.Viewer, "(person key)") || pv.hello.Hint != "" {
		t.Fatalf("the person's socket: %d %+v", code, pv.hello)
	}
	pv.send(map[string]any{"type": "stop", "instance": inst})
	deadline := time.Now().Add(10 * time.Second)
	for stopped, _ := p.app.Relay().Default().Stopped(); !stopped; stopped, _ = p.app.Relay().Default().Stopped() {
		if time.Now().After(deadline) {
			t.Fatalf("the person's stop: %q", pv.raw)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The agent still cannot resume.
	if code, _, _ := get(t, "POST", self+"/v1/instances/"+inst+"/resume"); code != http.StatusForbidden {
		t.Errorf("the agent resumes: %d", code)
	}
	// A program of the person's, with the key as a token.
	person := http.Header{"Authorization": {"Bearer " + key}}
	if code, body, _ := getWith(t, "POST", self+"/v1/instances/"+inst+"/resume", person); code != 200 || !strings.Contains(body, `"by":"the person (person key)"`) {
		t.Errorf("the person resumes: %d %s", code, body)
	}
	// A page that kept a key of before: view-only, told so.
	stale, _ := p.dialViewer(self, []string{viewer.Protocol, ingress.PersonProtocolPrefix + ingress.GeneratePersonKey()}, nil)
	if stale.hello.Interactive || !stale.hello.KeyRefused || !strings.Contains(stale.hello.Hint, "not this relay's") {
		t.Errorf("a stale key: %+v", stale.hello)
	}

	// Who did what.
	var page struct {
		Records []struct {
			Kind, By, Detail string
		} `json:"records"`
	}
	_, body, _ := get(t, "GET", self+"/v1/audit?limit=1000")
	if err := json.Unmarshal([]byte(body), &page); err != nil {
		t.Fatal(err)
	}
	var who []string
	for _, r := range page.Records {
		if r.Kind == "stop" || r.Kind == "resume" {
			who = append(who, r.Kind+" by "+r.By)
		}
	}
	if len(who) != 2 || who[0] != "stop by "+pv.hello.Viewer || who[1] != "resume by the person (person key)" {
		t.Errorf("audit: %q", who)
	}

	// The key is in nothing served or logged.
	var seen []string
	for _, path := range []string{"/json/version", "/json/list", "/json/protocol", "/v1/instances", "/v1/instances/" + inst, "/v1/audit?limit=1000", "/metrics", "/", "/app.js"} {
		_, body, h := get(t, "GET", self+path)
		seen = append(seen, path+"\n"+body+"\n"+strings.Join(h.Values("Set-Cookie"), ";"))
	}
	seen = append(seen, pv.raw...)
	seen = append(seen, stale.raw...)
	seen = append(seen, p.log.String())
	for _, s := range seen {
		if strings.Contains(s, key) || strings.Contains(s, strings.TrimPrefix(key, ingress.PersonKeyPrefix)) {
			t.Errorf("the person key in:\n%.300s", s)
		}
	}
}

// TestPersonWithTokens: a token that carries cdp watches but never acts
// as the person, and its page says why; a token without cdp acts; the
// person key acts beside the tokens.
func TestPersonWithTokens(t *testing.T) {
	f := File{}
	for _, tok := range []ingress.Token{
		{Name: "agent-watch", Scopes: []string{"cdp", "viewer-interactive"}},
		{Name: "watch", Scopes: []string{"viewer-interactive"}},
		{Name: "ext", Scopes: []string{"extension"}},
	} {
		tok.SHA256 = ingress.HashToken(tok.Name)
		f.Tokens = append(f.Tokens, tok)
	}
	p := newPersonRelay(t, f)
	tok := func(name string) http.Header { return http.Header{"Authorization": {"Bearer " + name}} }
	agent, _ := p.dialViewer("", nil, tok("agent-watch"))
	if agent.hello.Interactive || !strings.Contains(agent.hello.Hint, "carries the cdp scope") {
		t.Errorf("a token with cdp: %+v", agent.hello)
	}
	watch, _ := p.dialViewer("", nil, tok("watch"))
	if !watch.hello.Interactive || !strings.HasSuffix(watch.hello.Viewer, "(token watch)") {
		t.Errorf("a token without cdp: %+v", watch.hello)
	}
	keyed, _ := p.dialViewer("http://"+p.addr, []string{viewer.Protocol, ingress.PersonProtocolPrefix + p.app.PersonKey()}, nil)
	if !keyed.hello.Interactive || !strings.HasSuffix(keyed.hello.Viewer, "(person key)") {
		t.Errorf("the person key beside tokens: %+v", keyed.hello)
	}
	inst := p.app.Relay().Default().ID()
	if code, _, _ := getWith(t, "POST", "http://"+p.addr+"/v1/instances/"+inst+"/stop", tok("agent-watch")); code != http.StatusForbidden {
		t.Errorf("a token with cdp stops: %d", code)
	}
	if code, body, _ := getWith(t, "POST", "http://"+p.addr+"/v1/instances/"+inst+"/stop", tok("watch")); code != 200 || !strings.Contains(body, "the person (token watch)") {
		t.Errorf("a token without cdp stops: %d %s", code, body)
	}
}
