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

	"github.com/gorilla/websocket"

	"github.com/cdprelay/cdprelay/internal/routes"
	"github.com/cdprelay/cdprelay/relay/internal/browser"
	"github.com/cdprelay/cdprelay/relay/internal/cdp"
	"github.com/cdprelay/cdprelay/relay/internal/link"
	"github.com/cdprelay/cdprelay/relay/internal/rules"
)

// Server is the relay's HTTP handler: discovery, the CDP endpoints and the
// extension endpoint of every instance.
type Server struct {
	*Relay // static: what the instances share

	upgrader websocket.Upgrader          // static
	tenants  atomic.Pointer[TenantRules] // swapped by SetTenants; never nil
	public   publicBase                  // static: the capability URLs' base, or none

	saveMu sync.Mutex // serialises Config.Save

	mu     sync.Mutex
	byGUID map[string]*Instance // guarded by mu
	def    *Instance            // static after New
	closed bool                 // guarded by mu

	conns sync.WaitGroup // one per live WebSocket connection
}

// New validates cfg and returns a server with its default instance.
func New(cfg Config) (*Server, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("relay config: %w", err)
	}
	s := &Server{
		Relay:  &Relay{cfg: cfg},
		byGUID: make(map[string]*Instance),
		upgrader: websocket.Upgrader{
			HandshakeTimeout: 10 * time.Second,
			WriteBufferPool:  &sync.Pool{},
			// The checks that matter run before the upgrade (checkOrigin).
			CheckOrigin: func(*http.Request) bool { return true },
		},
	}
	if s.own, err = rules.NewOrigins(cfg.Listen, cfg.PublicURL); err != nil {
		return nil, fmt.Errorf("relay config: Listen %q: %w", cfg.Listen, err)
	}
	s.policy.store(cfg.Policy)
	s.SetRedactHeaders(cfg.RedactHeaders)
	s.SetSecrets(cfg.Secrets)
	s.SetTenants(TenantRules{})
	s.public = cfg.public
	s.Relay.instances = s.Instances
	cfg.Metrics.registerInstances(s.Instances)
	guid := cfg.DefaultGUID
	if guid == "" {
		guid = cdp.NewGUID()
	}
	s.def = newInstance(s.Relay, guid, true, cfg.DefaultProfile)
	if bi, err := browser.LoadRemembered(cfg.BrowserFile); err != nil {
		cfg.Logger.Warn("the remembered browser is ignored", "err", err)
	} else {
		s.def.st.remembered = bi
	}
	s.byGUID[guid] = s.def
	s.restore(cfg.Restore)
	return s, nil
}

// Default returns the instance that the root discovery endpoints answer
// for.
func (s *Server) Default() *Instance { return s.def }

// NewInstance mints an instance with a fresh guid. It is removed if no
// extension connects to it within the configured UnclaimedTTL.
func (s *Server) NewInstance() (*Instance, error) { return s.NewInstanceWithProfile("") }

// NewInstanceWithProfile mints an operator's instance whose commands are
// judged by the policy profile named profile ("" for the global policy).
func (s *Server) NewInstanceWithProfile(profile string) (*Instance, error) {
	return s.NewInstanceFor("", profile)
}

func (s *Server) removeInstance(in *Instance, reason string) {
	s.mu.Lock()
	removed := s.byGUID[in.guid] == in
	if removed {
		delete(s.byGUID, in.guid)
	}
	s.mu.Unlock()
	in.close(websocket.CloseGoingAway, reason)
	if removed {
		s.cfg.Logger.Info("instance removed", "instance", in.id, "reason", reason)
		s.changes.notify()
		s.save()
	}
}

// Instances returns every instance, the default first; not one a panic
// left unusable (tasks.go).
func (s *Server) Instances() []*Instance {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []*Instance{s.def}
	if s.def.wedged.Load() {
		out = out[:0]
	}
	for _, in := range s.byGUID {
		if in != s.def && !in.wedged.Load() {
			out = append(out, in)
		}
	}
	return out
}

func (s *Server) lookup(guid string) *Instance {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byGUID[guid]
}

// Close closes every connection with 1001 and a reason and waits for them
// to end, or for ctx.
func (s *Server) Close(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	ins := make([]*Instance, 0, len(s.byGUID))
	for _, in := range s.byGUID {
		if !in.wedged.Load() {
			ins = append(ins, in)
		}
	}
	s.mu.Unlock()
	for _, in := range ins {
		in.close(websocket.CloseGoingAway, reasonShutdown)
	}
	done := make(chan struct{})
	go func() {
		s.conns.Wait()
		for _, in := range ins {
			in.tasks.wait()
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
	s.learnFrom(r)
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
	case s.cfg.Fallback != nil:
		s.cfg.Fallback.ServeHTTP(w, r)
	case r.URL.Path == "/":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintf(w, "cdprelay %s: a Chrome DevTools Protocol endpoint for tabs shared by the cdprelay extension.\nConnect a client to http://%s\n", s.cfg.Version, r.Host)
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
	var in *Instance
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
	case in.wedged.Load():
		http.Error(w, "cdprelay: "+ErrWedged.Error(), http.StatusServiceUnavailable)
	case rt.Kind == routes.KindDiscovery:
		s.serveDiscovery(w, r, in, rt)
	case rt.Kind == routes.KindCDP:
		s.serveClient(w, r, in)
	case rt.Kind == routes.KindPage && in.hasTarget(rt.TargetID):
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

func (s *Server) serveClient(w http.ResponseWriter, r *http.Request, in *Instance) {
	s.serveCDP(w, r, in, "")
}

// servePage serves a page endpoint (see page.go).
func (s *Server) servePage(w http.ResponseWriter, r *http.Request, in *Instance, targetID string) {
	s.serveCDP(w, r, in, targetID)
}

// serveCDP serves a CDP client of in: browser-level, or for one page when
// pageTarget is set.
func (s *Server) serveCDP(w http.ResponseWriter, r *http.Request, in *Instance, pageTarget string) {
	if o := r.Header.Get("Origin"); o != "" && (s.cfg.AllowClientOrigin == nil || !s.cfg.AllowClientOrigin(o)) {
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
	log := s.cfg.Logger.With("instance", in.id, "peer", "cdp-client", "remote", r.RemoteAddr)
	c := newClientConn(in, conn, log)
	c.p.Discarded = s.cfg.Metrics.discarded[ActorClient]
	c.p.Cork = cw.Conn()
	if rod {
		// go-rod's reader panics on a close frame: it gets none, not even
		// in answer to its own.
		c.p.NoCloseFrame = true
		conn.SetCloseHandler(func(int, string) error { return nil })
	}
	go c.p.WriteLoop(0, in.panicked)
	if !in.attachClient(c) {
		c.close(websocket.ClosePolicyViolation, reasonSecondClient)
		log.Info("second CDP client refused")
		in.observe(Event{Actor: ActorClient, Kind: KindConnect, Outcome: OutcomeDenied, Detail: reasonSecondClient})
		drainUntilClosed(conn)
		<-c.p.WriterDone()
		return
	}
	log.Info("client connected")
	conns := s.cfg.Metrics.connections.WithLabelValues(ActorClient)
	conns.Inc()
	defer conns.Dec()
	in.observe(Event{Actor: ActorClient, Kind: KindConnect, Outcome: OutcomeOK})
	err = c.run(pageTarget)
	reason := link.CloseReasonOf(err)
	c.cancel()
	if in.wedged.Load() {
		// Nothing may take the instance's lock again: the connection
		// ends without its bookkeeping.
		<-c.p.WriterDone()
		return
	}
	in.clientGone(c)
	c.wg.Wait()
	if errors.Is(err, errIdle) {
		c.p.Shutdown(websocket.CloseGoingAway, errIdle.Error())
	} else if errors.Is(err, errExtNotConnected) {
		c.p.Shutdown(websocket.CloseTryAgainLater, reasonExtNotConnected)
	} else {
		c.p.Shutdown(websocket.CloseNormalClosure, "")
	}
	<-c.p.WriterDone()
	conn.Close()
	if c.p.CloseReason() != "" {
		reason = c.p.CloseReason()
	}
	log.Info("client disconnected", "reason", reason)
	in.observe(Event{Actor: ActorClient, Kind: KindDisconnect, Outcome: OutcomeOK, Detail: reason})
}

func (s *Server) serveExtension(w http.ResponseWriter, r *http.Request, in *Instance) {
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
	log := s.cfg.Logger.With("instance", in.id, "peer", "extension", "remote", r.RemoteAddr)
	x := newExtConn(in, conn, log)
	x.p.Discarded = s.cfg.Metrics.discarded[ActorExtension]
	x.p.Batches = s.cfg.Metrics.batchesOut
	x.p.Cork = cw.Conn()
	go x.p.WriteLoop(extPingPeriod, in.panicked)
	if !in.acceptExtension(x) {
		x.p.Shutdown(websocket.CloseGoingAway, reasonShutdown)
		<-x.p.WriterDone()
		conn.Close()
		return
	}
	in.tasks.spawn("extension keepalive", x.keepalive)
	log.Info("extension connected", "origin", r.Header.Get("Origin"))
	s.cfg.Metrics.extConnects.Inc()
	econns := s.cfg.Metrics.connections.WithLabelValues(ActorExtension)
	econns.Inc()
	defer econns.Dec()
	in.observe(Event{Actor: ActorExtension, Kind: KindConnect, Outcome: OutcomeOK})
	err = x.run(s.cfg.MaxMessageBytes)
	reason := link.CloseReasonOf(err)
	if !in.wedged.Load() {
		in.extensionGone(x, reason, closeCodeOf(err))
	}
	x.p.Shutdown(websocket.CloseNormalClosure, "")
	<-x.p.WriterDone()
	conn.Close()
	log.Info("extension disconnected", "reason", reason)
	in.observe(Event{Actor: ActorExtension, Kind: KindDisconnect, Outcome: OutcomeOK, Detail: reason})
}

// track counts a connection about to be upgraded, or answers 503 once
// Close has begun. Counting under mu, before the upgrade, orders every Add
// before Close's Wait: a connection accepted during Close is waited for,
// never missed (and the WaitGroup is never reused while waited on).
func (s *Server) track(w http.ResponseWriter) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		http.Error(w, reasonShutdown, http.StatusServiceUnavailable)
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
	if s.cfg.CheckHost != nil {
		return s.cfg.CheckHost(host)
	}
	return hostAllowed(host)
}
