package relay

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/config"
	"github.com/cdprelay/cdprelay/relay/internal/core"
	"github.com/cdprelay/cdprelay/relay/internal/creds"
	"github.com/cdprelay/cdprelay/relay/internal/ext"
	"github.com/cdprelay/cdprelay/relay/internal/origins"

	"github.com/gorilla/websocket"

	"github.com/cdprelay/cdprelay/internal/routes"
	"github.com/cdprelay/cdprelay/relay/internal/cdp"
	"github.com/cdprelay/cdprelay/relay/internal/link"
)

// Server is the relay's HTTP handler: discovery, the CDP endpoints and the
// extension endpoint of every instance.
type Server struct {
	*core.Relay // static: what the instances share

	upgrader websocket.Upgrader          // static
	tenants  atomic.Pointer[TenantRules] // swapped by SetTenants; never nil
	public   config.PublicBase           // static: the capability URLs' base, or none

	saveMu sync.Mutex // serialises Config.Save

	mu     sync.Mutex
	byGUID map[string]*core.Instance // guarded by mu
	def    *core.Instance            // static after New
	closed bool                      // guarded by mu

	conns sync.WaitGroup // one per live WebSocket connection
}

// New validates cfg and returns a server with its default instance.
func New(cfg config.Config) (*Server, error) {
	cfg, err := cfg.WithDefaults()
	if err != nil {
		return nil, fmt.Errorf("relay config: %w", err)
	}
	s := &Server{
		Relay:  core.NewRelay(cfg),
		byGUID: make(map[string]*core.Instance),
		upgrader: websocket.Upgrader{
			HandshakeTimeout: 10 * time.Second,
			WriteBufferPool:  &sync.Pool{},
			// The checks that matter run before the upgrade (checkOrigin).
			CheckOrigin: func(*http.Request) bool { return true },
		},
	}
	if s.Own, err = origins.NewOrigins(cfg.Listen, cfg.PublicURL); err != nil {
		return nil, fmt.Errorf("relay config: Listen %q: %w", cfg.Listen, err)
	}
	s.PolicyBox.Store(cfg.Policy)
	s.SetRedactHeaders(cfg.RedactHeaders)
	s.SetSecrets(cfg.Secrets)
	s.SetTenants(TenantRules{})
	s.public = cfg.Public
	s.Relay.Instances = s.Instances
	cfg.Metrics.RegisterInstances(func() []string {
		var states []string
		for _, in := range s.Instances() {
			states = append(states, in.LifeState())
		}
		return states
	})
	guid := cfg.DefaultGUID
	if guid == "" {
		guid = cdp.NewGUID()
	}
	s.def = core.NewInstance(s.Relay, guid, true, cfg.DefaultProfile)
	if bi, err := cdp.LoadRemembered(cfg.BrowserFile); err != nil {
		cfg.Logger.Warn("the remembered browser is ignored", "err", err)
	} else {
		s.def.St.Remembered = bi
	}
	s.byGUID[guid] = s.def
	s.restore(cfg.Restore)
	return s, nil
}

// Default returns the instance that the root discovery endpoints answer
// for.
func (s *Server) Default() *core.Instance { return s.def }

// NewInstance mints an instance with a fresh guid. It is removed if no
// extension connects to it within the configured UnclaimedTTL.
func (s *Server) NewInstance() (*core.Instance, error) { return s.NewInstanceWithProfile("") }

// NewInstanceWithProfile mints an operator's instance whose commands are
// judged by the policy profile named profile ("" for the global policy).
func (s *Server) NewInstanceWithProfile(profile string) (*core.Instance, error) {
	return s.NewInstanceFor("", profile)
}

func (s *Server) removeInstance(in *core.Instance, reason string) {
	s.mu.Lock()
	removed := s.byGUID[in.Guid] == in
	if removed {
		delete(s.byGUID, in.Guid)
	}
	s.mu.Unlock()
	in.Close(websocket.CloseGoingAway, reason)
	if removed {
		s.Cfg.Logger.Info("instance removed", "instance", in.Id, "reason", reason)
		s.Changes.Notify()
		s.save()
	}
}

// Instances returns every instance, the default first; not one a panic
// left unusable (tasks.go).
func (s *Server) Instances() []*core.Instance {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []*core.Instance{s.def}
	if s.def.Wedged.Load() {
		out = out[:0]
	}
	for _, in := range s.byGUID {
		if in != s.def && !in.Wedged.Load() {
			out = append(out, in)
		}
	}
	return out
}

func (s *Server) lookup(guid string) *core.Instance {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byGUID[guid]
}

// Close closes every connection with 1001 and a reason and waits for them
// to end, or for ctx.
func (s *Server) Close(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	ins := make([]*core.Instance, 0, len(s.byGUID))
	for _, in := range s.byGUID {
		if !in.Wedged.Load() {
			ins = append(ins, in)
		}
	}
	s.mu.Unlock()
	for _, in := range ins {
		in.Close(websocket.CloseGoingAway, core.ReasonShutdown)
	}
	done := make(chan struct{})
	go func() {
		s.conns.Wait()
		for _, in := range ins {
			in.Tasks.Wait()
		}
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ServeHTTP routes a request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.hostOK(r.Host) {
		// DNS rebinding: a web page whose name resolves to loopback must
		// not reach the endpoint. Chrome's own port applies the same rule.
		http.Error(w, "Host header is not an IP address or localhost", http.StatusForbidden)
		return
	}
	s.LearnFrom(r)
	rt := routes.Classify(r.Method, r.URL.Path)
	switch {
	case rt.Kind == routes.KindMint:
		// Minting is the relay's; the status listing (GET) is the
		// operator's, who knows the live view too.
		s.serveInstances(w, r)
	case rt.Relay():
		// The relay's own areas: what it does not serve there is a 404
		// from here, the same for an unknown guid as for an unknown path.
		if !s.serveRoute(w, r, rt) {
			http.NotFound(w, r)
		}
	case s.Cfg.Fallback != nil:
		s.Cfg.Fallback.ServeHTTP(w, r)
	case r.URL.Path == "/":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintf(w, "cdprelay %s: a Chrome DevTools Protocol endpoint for tabs shared by the cdprelay extension.\nConnect a client to http://%s\n", s.Cfg.Version, r.Host)
	default:
		http.NotFound(w, r)
	}
}

// serveRoute serves a discovery, CDP or extension endpoint of the
// instance the route names, and reports false when there is none.
//
// What a request may reach is decided here, first, for every kind: an
// instance of another tenant is nil, exactly as an unknown guid.
func (s *Server) serveRoute(w http.ResponseWriter, r *http.Request, rt routes.Route) bool {
	tenant := s.requestTenant(r)
	var in *core.Instance
	switch {
	case rt.GUID == "" && rt.Kind == routes.KindDiscovery && rt.Doc == routes.DocProtocol:
		// The protocol's names are no instance's: a tenant without one
		// gets them too.
		in = s.def
	case rt.GUID == "":
		in = s.DefaultFor(tenant)
	case rt.Kind == routes.KindExtension:
		// Only an upgrade pairs, and so claims an instance for a tenant.
		if in = s.lookup(rt.GUID); in != nil && !s.pairable(tenant, in, websocket.IsWebSocketUpgrade(r)) {
			in = nil
		}
	default:
		if in = s.lookup(rt.GUID); !Visible(tenant, in) {
			in = nil
		}
	}
	switch {
	case in == nil:
		return false
	case in.Wedged.Load():
		http.Error(w, "cdprelay: "+api.ErrWedged.Error(), http.StatusServiceUnavailable)
	case rt.Kind == routes.KindDiscovery:
		s.serveDiscovery(w, r, in, rt)
	case rt.Kind == routes.KindCDP:
		s.serveClient(w, r, in)
	case rt.Kind == routes.KindPage && in.HasTarget(rt.TargetID):
		s.servePage(w, r, in, rt.TargetID)
	case rt.Kind == routes.KindExtension:
		s.serveExtension(w, r, in)
	default:
		return false
	}
	return true
}

// hostAllowed accepts what Chrome's debugging port accepts: an IP literal
// or localhost, with any port.
func hostAllowed(host string) bool {
	if host == "" {
		return true // HTTP/1.0 clients send none
	}
	h, _, err := net.SplitHostPort(host)
	if err != nil {
		h = host
	}
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	if strings.EqualFold(h, "localhost") || strings.EqualFold(h, "localhost.") {
		return true
	}
	return net.ParseIP(h) != nil
}

func (s *Server) serveClient(w http.ResponseWriter, r *http.Request, in *core.Instance) {
	s.serveCDP(w, r, in, "")
}

// servePage serves a page endpoint (see page.go).
func (s *Server) servePage(w http.ResponseWriter, r *http.Request, in *core.Instance, targetID string) {
	s.serveCDP(w, r, in, targetID)
}

// serveCDP serves a CDP client of in: browser-level, or for one page when
// pageTarget is set.
func (s *Server) serveCDP(w http.ResponseWriter, r *http.Request, in *core.Instance, pageTarget string) {
	if o := r.Header.Get("Origin"); o != "" && (s.Cfg.AllowClientOrigin == nil || !s.Cfg.AllowClientOrigin(o)) {
		// A web page in the person's own browser could otherwise open this
		// socket. CDP clients outside browsers send no Origin; Chrome's own
		// port refuses one unless told otherwise.
		http.Error(w, "CDP connections from web pages are refused (Origin "+o+")", http.StatusForbidden)
		return
	}
	if !s.track(w) {
		return
	}
	defer s.conns.Done()
	rod := isRodKey(r)
	cw := link.WithCork(lenientKey(w, r))
	conn, err := s.upgrader.Upgrade(cw, r, nil)
	if err != nil {
		return // the upgrader has answered
	}
	log := s.Cfg.Logger.With("instance", in.Id, "peer", "cdp-client", "remote", r.RemoteAddr)
	c := core.NewClientConn(in, conn, log)
	c.P.Discarded = s.Cfg.Metrics.Discarded[api.ActorClient]
	c.P.Cork = cw.Conn()
	if rod {
		// go-rod's reader panics on a close frame: it gets none, not even
		// in answer to its own.
		c.P.NoCloseFrame = true
		conn.SetCloseHandler(func(int, string) error { return nil })
	}
	go c.P.WriteLoop(0, in.Panicked)
	if !in.AttachClient(c) {
		c.Close(websocket.ClosePolicyViolation, core.ReasonSecondClient)
		log.Info("second CDP client refused")
		in.Observe(core.Event{Actor: api.ActorClient, Kind: api.KindConnect, Outcome: api.OutcomeDenied, Detail: core.ReasonSecondClient})
		drainUntilClosed(conn)
		<-c.P.WriterDone()
		return
	}
	log.Info("client connected")
	conns := s.Cfg.Metrics.Connections.WithLabelValues(api.ActorClient)
	conns.Inc()
	defer conns.Dec()
	in.Observe(core.Event{Actor: api.ActorClient, Kind: api.KindConnect, Outcome: api.OutcomeOK})
	err = c.Run(pageTarget)
	reason := link.CloseReasonOf(err)
	c.Cancel()
	if in.Wedged.Load() {
		// Nothing may take the instance's lock again: the connection
		// ends without its bookkeeping.
		<-c.P.WriterDone()
		return
	}
	in.ClientGone(c)
	c.Wg.Wait()
	if errors.Is(err, core.ErrIdle) {
		c.P.Shutdown(websocket.CloseGoingAway, core.ErrIdle.Error())
	} else if errors.Is(err, core.ErrExtNotConnected) {
		c.P.Shutdown(websocket.CloseTryAgainLater, core.ReasonExtNotConnected)
	} else {
		c.P.Shutdown(websocket.CloseNormalClosure, "")
	}
	<-c.P.WriterDone()
	conn.Close()
	if c.P.CloseReason() != "" {
		reason = c.P.CloseReason()
	}
	log.Info("client disconnected", "reason", reason)
	in.Observe(core.Event{Actor: api.ActorClient, Kind: api.KindDisconnect, Outcome: api.OutcomeOK, Detail: reason})
}

func (s *Server) serveExtension(w http.ResponseWriter, r *http.Request, in *core.Instance) {
	if o := r.Header.Get("Origin"); o != "" && !strings.HasPrefix(o, "chrome-extension://") {
		http.Error(w, "extension connections must come from an extension (Origin "+o+")", http.StatusForbidden)
		return
	}
	if !s.track(w) {
		return
	}
	defer s.conns.Done()
	cw := link.WithCork(w)
	conn, err := s.upgrader.Upgrade(cw, r, nil)
	if err != nil {
		return
	}
	log := s.Cfg.Logger.With("instance", in.Id, "peer", "extension", "remote", r.RemoteAddr)
	x := ext.New(in, conn, log)
	x.P.Discarded = s.Cfg.Metrics.Discarded[api.ActorExtension]
	x.P.Batches = s.Cfg.Metrics.BatchesOut
	x.P.Cork = cw.Conn()
	go x.P.WriteLoop(ext.PingPeriod, in.Panicked)
	if !in.AcceptExtension(x) {
		x.P.Shutdown(websocket.CloseGoingAway, core.ReasonShutdown)
		<-x.P.WriterDone()
		conn.Close()
		return
	}
	in.Tasks.Spawn("extension keepalive", x.Keepalive)
	log.Info("extension connected", "origin", r.Header.Get("Origin"))
	s.Cfg.Metrics.ExtConnects.Inc()
	econns := s.Cfg.Metrics.Connections.WithLabelValues(api.ActorExtension)
	econns.Inc()
	defer econns.Dec()
	in.Observe(core.Event{Actor: api.ActorExtension, Kind: api.KindConnect, Outcome: api.OutcomeOK})
	err = x.Run(s.Cfg.MaxMessageBytes)
	reason := link.CloseReasonOf(err)
	if !in.Wedged.Load() {
		in.ExtensionGone(x, reason, link.CloseCodeOf(err))
	}
	x.P.Shutdown(websocket.CloseNormalClosure, "")
	<-x.P.WriterDone()
	conn.Close()
	log.Info("extension disconnected", "reason", reason)
	in.Observe(core.Event{Actor: api.ActorExtension, Kind: api.KindDisconnect, Outcome: api.OutcomeOK, Detail: reason})
}

// track counts a connection about to be upgraded, or answers 503 once
// Close has begun. Counting under mu, before the upgrade, orders every Add
// before Close's Wait: a connection accepted during Close is waited for,
// never missed (and the WaitGroup is never reused while waited on).
func (s *Server) track(w http.ResponseWriter) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		http.Error(w, core.ReasonShutdown, http.StatusServiceUnavailable)
		return false
	}
	s.conns.Add(1)
	return true
}

// drainUntilClosed reads until the peer closes, so that a close frame we
// sent gets its reply.
func drainUntilClosed(conn *websocket.Conn) {
	_ = conn.SetReadDeadline(time.Now().Add(link.CloseWait))
	for {
		if _, _, err := conn.NextReader(); err != nil {
			return
		}
	}
}

// hostOK applies the configured Host rule, or Chrome's own.
func (s *Server) hostOK(host string) bool {
	if s.Cfg.CheckHost != nil {
		return s.Cfg.CheckHost(host)
	}
	return hostAllowed(host)
}

// SetRedactHeaders sets the header names redacted besides the defaults
// (Config.RedactHeaders): a config reload's, in force for every message
// from then on.
func (s *Server) SetRedactHeaders(extra []string) { creds.SetRedactHeaders(s.Relay, extra) }
