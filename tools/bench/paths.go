package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/cdprelay/cdprelay/internal/app"
	"github.com/cdprelay/cdprelay/internal/cdptest"
	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/relay"
)

// path is one way of reaching the benchmark tab. open attaches to the tab
// for one visit; release detaches, so that during a visit no other path
// holds a debugger session on the tab.
type path interface {
	name() string
	open(ctx context.Context) (route, error)
	release(ctx context.Context) error
}

// endpoint is what serves the extension's configured URL: the bare peer or
// a relay. The extension holds one connection, so only one of them serves
// at a time.
type endpoint interface {
	http.Handler
	// shutdown ends the endpoint's extension connection, if any; the
	// extension then reconnects to whatever serves the URL next.
	shutdown()
}

// host is the listener at the extension's configured URL.
type host struct {
	mu  sync.Mutex
	cur endpoint // guarded by mu; nil: 503
}

func (h *host) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	cur := h.cur
	h.mu.Unlock()
	if cur == nil {
		http.Error(w, "switching", http.StatusServiceUnavailable)
		return
	}
	cur.ServeHTTP(w, r)
}

// use makes next the endpoint and shuts the previous one down. The order
// matters: the extension's first retry (0.5 s later) must find next.
func (h *host) use(next endpoint) {
	h.mu.Lock()
	prev := h.cur
	h.cur = next
	h.mu.Unlock()
	if prev != nil && prev != next {
		prev.shutdown()
	}
}

func (h *host) serving(e endpoint) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.cur == e
}

// ---- (a) direct -------------------------------------------------------------

// directPath is Chromium's own debugging port: the floor.
type directPath struct {
	root     *cdptest.Conn // static: browser-level connection, open for the whole run
	targetID string        // static
	sess     string        // owned by the run loop
}

func (p *directPath) name() string { return "direct" }

func (p *directPath) open(ctx context.Context) (route, error) {
	res, err := p.root.Call(ctx, "", "Target.attachToTarget", jsonParams("targetId", p.targetID, "flatten", true))
	if err != nil {
		return route{}, err
	}
	p.sess = string(wire.StringField(res, "sessionId"))
	if p.sess == "" {
		return route{}, fmt.Errorf("Target.attachToTarget: no sessionId in %s", res)
	}
	return route{c: p.root, sess: p.sess}, nil
}

func (p *directPath) release(ctx context.Context) error {
	_, err := p.root.Call(ctx, "", "Target.detachFromTarget", jsonParams("sessionId", p.sess))
	return err
}

// ---- (b) the extension alone -----------------------------------------------

// extPeer is a minimal protocol-v2 peer for the extension: it accepts the
// connection, waits for the handshake and sends chrome.debugger commands,
// with no relay logic in between.
type extPeer struct {
	guid     string             // static
	targetID string             // the tab to use; set before the first open
	host     *host              // static
	upgrader websocket.Upgrader // static
	conns    chan *websocket.Conn

	mu  sync.Mutex
	cur *cdptest.Conn // guarded by mu
	tab int64         // owned by the run loop
}

func newExtPeer(h *host, guid string) *extPeer {
	return &extPeer{
		guid: guid,
		host: h,
		// Like the relay: no permessage-deflate, which costs Chrome's side
		// more than it saves on loopback.
		upgrader: websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }},
		conns:    make(chan *websocket.Conn, 1),
	}
}

func (p *extPeer) name() string { return "extension" }

func (p *extPeer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/extension/"+p.guid {
		http.NotFound(w, r)
		return
	}
	ws, err := p.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	select {
	case p.conns <- ws:
	default:
		ws.Close() // one extension at a time
	}
}

func (p *extPeer) shutdown() {
	p.mu.Lock()
	c := p.cur
	p.cur = nil
	p.mu.Unlock()
	if c != nil {
		c.Close()
	}
}

// connect takes the extension's URL over and waits for the extension to
// connect and finish its handshake.
func (p *extPeer) connect(ctx context.Context) (*cdptest.Conn, error) {
	if !p.host.serving(p) {
		for drained := false; !drained; {
			select {
			case ws := <-p.conns:
				ws.Close() // from before the last shutdown
			default:
				drained = true
			}
		}
		p.host.use(p)
	}
	var ws *websocket.Conn
	select {
	case ws = <-p.conns:
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for the extension to connect: %w", ctx.Err())
	}
	c := cdptest.NewConn(ws)
	p.mu.Lock()
	p.cur = c
	p.mu.Unlock()
	p.tab = 0
	var m wire.ExtMessage
	_, err := c.WaitEvent(ctx, "extension.initialized", func(f []byte) bool {
		if wire.DecodeExt(f, &m) != nil {
			return false
		}
		switch string(m.Method) {
		case "chrome.tabs.onCreated":
			var tabs []struct {
				ID       int64  `json:"id"`
				TargetID string `json:"targetId"`
			}
			if json.Unmarshal(m.Params, &tabs) == nil && len(tabs) == 1 && tabs[0].TargetID == p.targetID {
				p.tab = tabs[0].ID
			}
		case "extension.initialized":
			return true
		}
		return false
	})
	if err != nil {
		return nil, err
	}
	if p.tab == 0 {
		return nil, errors.New("the extension did not offer the benchmark tab")
	}
	return c, nil
}

func (p *extPeer) open(ctx context.Context) (route, error) {
	p.mu.Lock()
	c := p.cur
	p.mu.Unlock()
	if c == nil {
		var err error
		if c, err = p.connect(ctx); err != nil {
			return route{}, err
		}
	}
	args := []byte(`[{"tabId":` + strconv.FormatInt(p.tab, 10) + `},"1.3"]`)
	if _, err := c.Call(ctx, "", "chrome.debugger.attach", args); err != nil {
		return route{}, err
	}
	return route{c: c, tabID: p.tab}, nil
}

func (p *extPeer) release(ctx context.Context) error {
	p.mu.Lock()
	c := p.cur
	p.mu.Unlock()
	if c == nil {
		return nil
	}
	_, err := c.Call(ctx, "", "chrome.debugger.detach", []byte(`[{"tabId":`+strconv.FormatInt(p.tab, 10)+`}]`))
	return err
}

// ---- (c) through cdprelay ----------------------------------------------------

// relayPath is cdprelay in this process, on the extension's URL, with a
// CDP client connected over loopback: the whole product as cdprelay serve
// assembles it (internal/app), or with bare the relay alone.
type relayPath struct {
	guid, addr, targetID string // static
	host                 *host  // static
	bare                 bool   // static

	srv    *relayEndpoint // owned by the run loop
	client *cdptest.Conn  // owned by the run loop
}

func (p *relayPath) name() string { return "cdprelay" }

// relayEndpoint is what serves the relay path, and lets the host shut it
// down when the peer takes over.
type relayEndpoint struct {
	http.Handler
	relay *relay.Server
	close func(context.Context) error
}

func (r *relayEndpoint) shutdown() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = r.close(ctx)
}

// newRelay builds what serves the relay path.
func (p *relayPath) newRelay() (*relayEndpoint, error) {
	// The rate limit is off, so that on a machine fast enough to pass it
	// the figures stay the relay's, not its policy's.
	rc := relay.Config{DefaultGUID: p.guid, Version: "bench", CommandsPerSecond: -1}
	if p.bare {
		srv, err := relay.New(rc)
		if err != nil {
			return nil, err
		}
		return &relayEndpoint{Handler: srv, relay: srv, close: srv.Close}, nil
	}
	a, err := app.New(app.Config{Addr: p.addr, Relay: rc})
	if err != nil {
		return nil, err
	}
	return &relayEndpoint{Handler: a, relay: a.Relay(), close: a.Close}, nil
}

func (p *relayPath) open(ctx context.Context) (route, error) {
	if p.srv == nil || !p.host.serving(p.srv) {
		srv, err := p.newRelay()
		if err != nil {
			return route{}, err
		}
		p.srv = srv
		p.host.use(srv)
	}
	if err := p.srv.relay.Default().WaitReady(ctx); err != nil {
		return route{}, fmt.Errorf("waiting for the extension to connect to the relay: %w", err)
	}
	c, err := cdptest.DialConn(ctx, nil, "ws://"+p.addr+"/devtools/browser/"+p.guid, nil)
	if err != nil {
		return route{}, err
	}
	p.client = c
	sess, err := c.AutoAttach(ctx, p.targetID)
	if err != nil {
		return route{}, err
	}
	return route{c: p.client, sess: sess}, nil
}

// release disconnects the client; the relay then detaches the tab. The
// relay itself stays, idle, until the peer takes the extension back.
func (p *relayPath) release(context.Context) error {
	if p.client != nil {
		p.client.Close()
		p.client = nil
	}
	return nil
}

// jsonParams encodes key/value pairs as a JSON object.
func jsonParams(kv ...any) []byte {
	m := make(map[string]any, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err) // only called with literal keys and plain values
	}
	return b
}
