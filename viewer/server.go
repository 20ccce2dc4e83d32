package viewer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/gorilla/websocket"

	"github.com/cdprelay/cdprelay/screencast"
)

// Server is the live view: the page and the viewer WebSocket at /viewer.
type Server struct {
	cfg      Config             // static
	log      *slog.Logger       // static
	upgrader websocket.Upgrader // static

	mu      sync.Mutex
	watches map[tabKey]*watch // guarded by mu: tabs with a tap
	conns   map[*conn]bool    // guarded by mu: live viewer connections
	closed  bool              // guarded by mu

	wg sync.WaitGroup // connections and watch cleanups
}

// tabKey names a tab across instances.
type tabKey struct {
	instance string
	tab      int64
}

// watch is one watched tab: its handle and its tap.
type watch struct {
	key  tabKey   // static
	inst Instance // static

	// ready is closed when opening ends; tab, tap and err are set before
	// and read-only after.
	ready chan struct{}
	tab   Tab
	tap   *screencast.Tap
	err   error

	// done is closed once the tap has ended, the override is cleared, the
	// handle is closed and the watch has left the map.
	done chan struct{}

	mu      sync.Mutex
	resized bool // guarded by mu: a viewer set a device metrics override
}

// Call lets the tap use the tab: it runs only after ready is closed.
func (w *watch) Call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	return w.tab.Call(ctx, method, params)
}

// New validates cfg and returns a server.
func New(cfg Config) (*Server, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	s := &Server{
		cfg:     cfg,
		log:     cfg.Logger,
		watches: make(map[tabKey]*watch),
		conns:   make(map[*conn]bool),
	}
	s.upgrader = websocket.Upgrader{
		HandshakeTimeout: 10 * time.Second,
		WriteBufferPool:  &sync.Pool{},
		// checkOrigin has run before the upgrade.
		CheckOrigin:  func(*http.Request) bool { return true },
		Subprotocols: []string{Protocol},
	}
	return s, nil
}

// ServeHTTP serves the page and the viewer socket.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/viewer" {
		s.cfg.Page.ServeHTTP(w, r)
		return
	}
	if !websocket.IsWebSocketUpgrade(r) {
		http.Error(w, "the viewer endpoint speaks WebSocket", http.StatusBadRequest)
		return
	}
	if ok, why := checkOrigin(r); !ok {
		http.Error(w, why, http.StatusForbidden)
		return
	}
	interactive := s.cfg.Interactive(r)
	cred := s.cfg.Credential(r)
	tenant := s.cfg.Tenant(r)
	ws, err := s.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return // the upgrader has answered
	}
	c := newConn(s, ws, interactive, cred, tenant, r.RemoteAddr)
	if !s.addConn(c) {
		c.closeWith(websocket.CloseGoingAway, "cdprelay is shutting down")
		ws.Close()
		return
	}
	defer s.removeConn(c)
	c.serve()
}

// checkOrigin accepts a socket from the live-view page itself (Origin is
// this server) or from a program outside any browser (no Origin). Any
// other page could otherwise watch, or drive, the person's tab.
func checkOrigin(r *http.Request) (bool, string) {
	o := r.Header.Get("Origin")
	if o == "" {
		return true, ""
	}
	u, err := url.Parse(o)
	if err == nil && (u.Scheme == "http" || u.Scheme == "https") && strings.EqualFold(u.Host, r.Host) {
		return true, ""
	}
	return false, "viewer connections are accepted from the live-view page only (Origin " + o + ")"
}

func (s *Server) addConn(c *conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.conns[c] = true
	s.wg.Add(1)
	return true
}

func (s *Server) removeConn(c *conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	s.wg.Done()
}

// Close closes every viewer with 1001 and stops every tap, then waits
// for them, or for ctx.
func (s *Server) Close(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	var taps []*screencast.Tap
	for _, w := range s.watches {
		select {
		case <-w.ready:
			if w.tap != nil {
				taps = append(taps, w.tap)
			}
		default:
		}
	}
	s.mu.Unlock()
	for _, c := range conns {
		// A viewer that has stopped reading holds its close up for a
		// moment; the others need not wait for it.
		go c.closeWith(websocket.CloseGoingAway, "cdprelay is shutting down")
	}
	for _, t := range taps {
		t.Close()
	}
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// changes is a channel closed at the next change of the source's
// instances, or nil when the source does not say (the list then waits for
// its next refresh).
func (s *Server) changes() <-chan struct{} {
	if ch, ok := s.cfg.Source.(Changer); ok {
		return ch.Changed()
	}
	return nil
}

// errNoInstance answers a subscribe to an instance that does not exist,
// and to another tenant's alike: it names neither.
var errNoInstance = errors.New("no such instance")

// sees reports whether a viewer acting for tenant sees in.
func sees(tenant string, in Instance) bool { return tenant == "" || in.Tenant() == tenant }

// instance finds an instance by id among those tenant sees.
func (s *Server) instance(tenant, id string) Instance {
	for _, in := range s.cfg.Source.Instances() {
		if in.ID() == id {
			if !sees(tenant, in) {
				return nil
			}
			return in
		}
	}
	return nil
}

// subscribe adds a subscriber to the tap of key, opening the tab first if
// nobody watches it yet.
func (s *Server) subscribe(ctx context.Context, tenant string, key tabKey) (*watch, *screencast.Subscriber, error) {
	// Who may watch is decided first, and the same way whether a tab is
	// watched already or not.
	if s.instance(tenant, key.instance) == nil {
		return nil, nil, errNoInstance
	}
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return nil, nil, errors.New("cdprelay is shutting down")
		}
		w := s.watches[key]
		if w == nil {
			in := s.instance(tenant, key.instance)
			if in == nil {
				s.mu.Unlock()
				return nil, nil, errNoInstance
			}
			w = &watch{key: key, inst: in, ready: make(chan struct{}), done: make(chan struct{})}
			s.watches[key] = w
			s.wg.Add(1)
			s.mu.Unlock()
			go s.open(w)
		} else {
			s.mu.Unlock()
		}
		select {
		case <-w.ready:
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
		if w.err != nil {
			return nil, nil, w.err
		}
		sub, err := w.tap.Subscribe()
		if errors.Is(err, screencast.ErrClosed) {
			// The last viewer just left; its cleanup ends soon.
			select {
			case <-w.done:
				continue
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
		}
		if err != nil {
			return nil, nil, err
		}
		return w, sub, nil
	}
}

// open attaches to w's tab and starts its tap; once the tap ends, it
// releases what the watch held.
func (s *Server) open(w *watch) {
	defer s.wg.Done()
	tap, err := screencast.New(w, s.cfg.Screencast)
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), openTimeout)
		w.tab, err = w.inst.OpenTab(ctx, w.key.tab, tap.HandleEvent)
		cancel()
		if err != nil {
			tap.Close()
			<-tap.Done()
			err = fmt.Errorf("open tab %d: %w", w.key.tab, err)
		}
	}
	if err != nil {
		w.err = err
		s.forget(w)
		close(w.ready)
		close(w.done)
		return
	}
	w.tap = tap
	close(w.ready)
	s.log.Debug("watching tab", "instance", w.key.instance, "tab", w.key.tab)

	<-tap.Done()
	w.mu.Lock()
	resized := w.resized
	w.mu.Unlock()
	if resized && tap.Status() != screencast.StatusDetached {
		ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
		if _, err := w.tab.Call(ctx, emulation.CommandClearDeviceMetricsOverride, nil); err != nil {
			s.log.Debug("clear the viewport override", "tab", w.key.tab, "err", err)
		}
		cancel()
	}
	w.tab.Close()
	s.forget(w)
	close(w.done)
	s.log.Debug("stopped watching tab", "instance", w.key.instance, "tab", w.key.tab, "status", tap.Status())
}

func (s *Server) forget(w *watch) {
	s.mu.Lock()
	if s.watches[w.key] == w {
		delete(s.watches, w.key)
	}
	s.mu.Unlock()
}

// snapshot is the instance list as a viewer acting for tenant sees it.
func (s *Server) snapshot(tenant string) instancesMsg {
	s.mu.Lock()
	taps := make(map[tabKey]*screencast.Tap, len(s.watches))
	for k, w := range s.watches {
		select {
		case <-w.ready:
			if w.tap != nil {
				taps[k] = w.tap
			}
		default:
		}
	}
	s.mu.Unlock()
	msg := instancesMsg{Type: msgInstances, Instances: []instanceView{}}
	for _, in := range s.cfg.Source.Instances() {
		if !sees(tenant, in) {
			continue
		}
		st := in.Status()
		iv := instanceView{
			ID: st.ID, Default: st.Default, Extension: st.Extension, Ready: st.Ready,
			Client: st.Client, Browser: st.Browser.Product, Tabs: []tabView{},
			Stopped: st.Stopped, StoppedBy: st.StoppedBy, Approvals: []approvalView{},
		}
		for _, r := range st.Refused {
			iv.Refused = append(iv.Refused, refusedView{Tab: r.TabID, Origin: r.Origin, Policy: r.Policy, Reason: r.Reason})
		}
		for _, a := range st.Approvals {
			iv.Approvals = append(iv.Approvals, approvalView{ID: a.ID, Tab: a.TabID, What: a.What, Method: a.Method, AskedAt: a.AskedAt, ExpiresAt: a.ExpiresAt})
		}
		for _, t := range st.Tabs {
			tv := tabView{ID: t.TabID, URL: t.URL, Title: t.Title, Attached: t.Attached, Status: statusIdle, Access: t.Access}
			if !t.Attached {
				tv.Detached = t.Detached
			}
			if d := t.Dialog; d != nil {
				tv.Dialog = &dialogView{ID: d.ID, Type: d.Type, Message: d.Message, DefaultPrompt: d.DefaultPrompt, AnsweredBy: d.AnsweredBy}
			}
			if tap := taps[tabKey{st.ID, t.TabID}]; tap != nil {
				tv.Status = string(tap.Status())
				tv.Viewers = tap.Subscribers()
			}
			tv.ControlledBy = in.Controller(t.TabID)
			iv.Tabs = append(iv.Tabs, tv)
		}
		msg.Instances = append(msg.Instances, iv)
	}
	return msg
}

// broadcast queues msg, which is about in, for every viewer that sees in.
func (s *Server) broadcast(in Instance, msg []byte) {
	s.mu.Lock()
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		if sees(c.tenant, in) {
			conns = append(conns, c)
		}
	}
	s.mu.Unlock()
	for _, c := range conns {
		c.send(msg)
	}
}

// Watch is how the live view sees one tab.
type Watch struct {
	Status       string `json:"liveView"`               // live, no-frames, detached, idle, ...
	Viewers      int    `json:"viewers"`                // viewers subscribed to the tab
	ControlledBy string `json:"controlledBy,omitempty"` // who took control, if anyone
}

// Watches reports the live view's state of every shared tab, by instance
// id and tab id, for status endpoints.
func (s *Server) Watches() map[string]map[int64]Watch {
	out := map[string]map[int64]Watch{}
	for _, iv := range s.snapshot("").Instances {
		m := make(map[int64]Watch, len(iv.Tabs))
		for _, t := range iv.Tabs {
			m[t.ID] = Watch{Status: t.Status, Viewers: t.Viewers, ControlledBy: t.ControlledBy}
		}
		out[iv.ID] = m
	}
	return out
}
