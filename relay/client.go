package relay

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/cdprelay/cdprelay/internal/wire"
)

// clientConn is one CDP client's WebSocket.
type clientConn struct {
	inst   *Instance          // static
	p      *peer              // static
	log    *slog.Logger       // static
	ctx    context.Context    // static: cancelled when the client goes
	cancel context.CancelFunc // static

	ext *extConn // owned by the read loop: set once the extension is ready

	// Guarded by inst.mu.
	autoAttach     bool
	discover       bool
	downloadEvents bool // Browser.setDownloadBehavior{eventsEnabled}

	emu clientEmu // see targets.go

	wg sync.WaitGroup // emulated commands still running

	inflight atomic.Int64 // forwarded commands waiting for the browser
	bucket   bucket       // owned by the read loop: the command rate limit
}

func newClientConn(inst *Instance, conn *websocket.Conn, log *slog.Logger) *clientConn {
	ctx, cancel := context.WithCancel(context.Background())
	return &clientConn{
		bucket: newBucket(inst.srv.cfg.CommandsPerSecond, inst.srv.cfg.CommandBurst),
		inst:   inst,
		p:      newPeer(conn, inst.srv.cfg.ClientQueue, inst.srv.cfg.ClientQueueBytes),
		log:    log,
		ctx:    ctx,
		cancel: cancel,
	}
}

// close ends the client's connection with a reason it can read.
func (c *clientConn) close(code int, reason string) {
	c.cancel()
	c.p.shutdown(code, reason)
}

// deliver queues one frame for the client. A client that does not read
// until its queue is full is closed: a CDP client is never silently
// dropped from, because a lost reply or event is a hang on its side.
func (c *clientConn) deliver(b *[]byte) {
	if !c.p.trySend(b) && !c.p.closed() {
		c.log.Warn("client is not reading; closing it", "queued", c.p.queued.Load())
		c.inst.srv.cfg.Metrics.limited[limitQueue].Inc()
		c.close(websocket.ClosePolicyViolation, "cdprelay: client is not reading its messages ("+strconv.Itoa(cap(c.p.out))+" queued)")
	}
}

// serve runs the client's read loop until the connection ends.
func (c *clientConn) serve() error {
	conn := c.p.conn
	conn.SetReadLimit(c.inst.srv.cfg.MaxMessageBytes)
	var buf []byte
	var env wire.Envelope
	idle := c.inst.srv.cfg.IdleClientTimeout
	for {
		if idle > 0 {
			_ = conn.SetReadDeadline(time.Now().Add(idle))
		}
		mt, frame, err := readFrame(conn, &buf)
		if err != nil {
			if ne, ok := err.(interface{ Timeout() bool }); ok && ne.Timeout() && idle > 0 {
				c.inst.srv.cfg.Metrics.limited[limitIdle].Inc()
				return errIdle
			}
			return err
		}
		if c.ext == nil {
			// Traffic is held until the extension's handshake ends, so that
			// nothing reaches a half-initialised extension.
			x, err := c.inst.waitReady(c.ctx)
			if err != nil {
				return errExtNotConnected
			}
			c.ext = x
		}
		if mt != websocket.TextMessage {
			c.replyNoID(codeParseError, "Message must be a JSON text frame")
			continue
		}
		if err := wire.DecodeCommand(frame, &env); err != nil {
			c.badCommand(&env, err)
			continue
		}
		cfg := &c.inst.srv.cfg
		cfg.Metrics.count(dirCommand, env.Method, len(frame))
		if !c.bucket.take(time.Now()) {
			cfg.Metrics.limited[limitRate].Inc()
			c.replyErrorRawSession(env.ID, env.SessionID, codeServerError, "cdprelay: rate limit: more than "+strconv.FormatFloat(cfg.CommandsPerSecond, 'f', -1, 64)+" commands per second")
			continue
		}
		if c.inflight.Load() >= int64(cfg.MaxInFlight) {
			cfg.Metrics.limited[limitInFlight].Inc()
			c.replyErrorRawSession(env.ID, env.SessionID, codeServerError, "cdprelay: "+strconv.Itoa(cfg.MaxInFlight)+" commands are already waiting for the browser; wait for replies")
			continue
		}
		c.handle(&env)
	}
}

func (c *clientConn) badCommand(env *wire.Envelope, err error) {
	var se *wire.SyntaxError
	switch {
	case errors.As(err, &se):
		c.replyNoID(codeParseError, "Message must be a valid JSON object: "+se.Error())
	case !env.HasID:
		c.replyNoID(codeInvalidRequest, "Message must have integer 'id' property")
	default:
		c.replyErrorRawSession(env.ID, env.SessionID, codeInvalidRequest, capitalize(err.Error()))
	}
}

// handle routes one well-formed command.
func (c *clientConn) handle(env *wire.Envelope) {
	in := c.inst
	method := internMethod(env.Method)
	if d := in.srv.policy.load().Command(in.profile, method, env.Params); d.Verdict != Allow {
		c.refuse(env, method, d)
		return
	}
	var s *session
	if env.SessionID != nil || c.emu.page != nil {
		var controlled bool
		var screencast []*TabHandle
		var active bool
		in.mu.Lock()
		s = c.sessionLocked(env.SessionID)
		if s != nil && s.tab != nil {
			t := s.tab
			controlled = t.control != "" && controlRefused(env.Method)
			if !s.child && !controlled && bytesHasPrefix(env.Method, "Page.") {
				switch string(env.Method) {
				case "Page.startScreencast":
					t.clientScreencast, active, screencast = true, true, t.handles
				case "Page.stopScreencast":
					t.clientScreencast, active, screencast = false, false, t.handles
				}
			}
		}
		in.mu.Unlock()
		if s == nil {
			c.replyErrorRawSession(env.ID, env.SessionID, codeNoSession, "Session with given id not found.")
			return
		}
		if controlled {
			c.replyError(env.ID, s, codeServerError, msgControlled)
			return
		}
		if screencast != nil {
			notifyHandles(screencast, TabEvent{Method: EventClientScreencast, Params: jsonObj("active", active)})
		}
	}
	if s != nil && s.tab != nil && bytesHasPrefix(env.Method, "Fetch.") && c.fenceFetch(env, s, s) {
		// Before emulation: the tab's Fetch domain is shared with the
		// navigation backstop, whichever session asks.
		return
	}
	if h := emulated(env.Method, s); h != nil {
		c.runEmulated(h, env, s)
		return
	}
	// Everything else goes to a tab: the session's own, or, for the root
	// and browser sessions, the lowest attached tab answering for the
	// browser. The checks below run on the tab that will execute it.
	route, replyTo := s, s
	if env.SessionID == nil {
		replyTo = nil
	}
	if route == nil || route.tab == nil {
		if route = c.rootTarget(); route == nil {
			c.replyErrorRawSession(env.ID, env.SessionID, codeServerError, "cdprelay: "+string(env.Method)+" needs a page, and no tab is attached")
			return
		}
		if s == nil || s.tab == nil {
			in.mu.Lock()
			controlled := route.tab.control != "" && controlRefused(env.Method)
			in.mu.Unlock()
			if controlled {
				c.replyErrorRawSession(env.ID, env.SessionID, codeServerError, msgControlled)
				return
			}
		}
	}
	if (s == nil || s.tab == nil) && bytesHasPrefix(env.Method, "Fetch.") && c.fenceFetch(env, route, replyTo) {
		return
	}
	if method == "Page.navigate" {
		c.observeNavigate(route, env.Params)
	}
	if !c.ext.forwardAs(c, env, route, replyTo) {
		c.replyErrorRawSession(env.ID, env.SessionID, codeServerError, "Extension disconnected")
	}
}

// rootTarget picks the session that browser-wide commands without a
// browser-level equivalent (Storage.getCookies at the root, say) are sent
// to: the lowest-numbered attached tab. A tab-level session answers them
// for the whole profile.
func (c *clientConn) rootTarget() *session {
	in := c.inst
	in.mu.Lock()
	defer in.mu.Unlock()
	var best *session
	for _, t := range in.tabs {
		if t.session != nil && (best == nil || t.id < best.tab.id) {
			best = t.session
		}
	}
	return best
}

// command is a client command handed to an emulation handler. Unlike the
// envelope it owns its bytes: handlers may outlive the read buffer.
type command struct {
	id     int64
	method string
	sess   *session
	params []byte
}

func (c *clientConn) runEmulated(h *emulation, env *wire.Envelope, s *session) {
	cmd := command{id: env.ID, method: string(env.Method), sess: s}
	if env.Params != nil {
		cmd.params = append([]byte(nil), env.Params...)
	}
	if !h.blocking {
		h.fn(c, cmd)
		return
	}
	// Handlers that wait for the extension run beside the read loop, so a
	// slow attach does not hold up the client's other traffic.
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		h.fn(c, cmd)
	}()
}

// reply sends a result for cmd. v is marshalled with encoding/json; the
// emulated paths are not hot.
func (c *clientConn) reply(cmd command, v any) {
	res, err := json.Marshal(v)
	if err != nil {
		c.replyError(cmd.id, cmd.sess, codeServerError, err.Error())
		return
	}
	buf := getBuf()
	b := append(*buf, `{"id":`...)
	b = wire.AppendInt(b, cmd.id)
	if cmd.sess != nil && cmd.sess.idJSON != nil {
		b = append(b, `,"sessionId":`...)
		b = append(b, cmd.sess.idJSON...)
	}
	b = append(b, `,"result":`...)
	b = append(b, res...)
	b = append(b, '}')
	*buf = b
	c.deliver(buf)
}

func (c *clientConn) fail(cmd command, code int64, msg string) {
	c.replyError(cmd.id, cmd.sess, code, msg)
}

func (c *clientConn) replyError(id int64, s *session, code int64, msg string) {
	var sid []byte
	if s != nil && s.idJSON != nil {
		sid = []byte(s.id)
	}
	c.replyErrorRawSession(id, sid, code, msg)
}

func (c *clientConn) replyErrorRawSession(id int64, sessionID []byte, code int64, msg string) {
	buf := getBuf()
	b := append(*buf, `{"id":`...)
	b = wire.AppendInt(b, id)
	if sessionID != nil {
		b = append(b, `,"sessionId":`...)
		b = wire.AppendBytesString(b, sessionID)
	}
	b = appendErrorObject(b, code, msg)
	b = append(b, '}')
	*buf = b
	c.deliver(buf)
}

// replyNoID answers a message that has no usable id, as Chrome does.
func (c *clientConn) replyNoID(code int64, msg string) {
	buf := getBuf()
	b := append(*buf, `{"id":null`...)
	b = appendErrorObject(b, code, msg)
	b = append(b, '}')
	*buf = b
	c.deliver(buf)
}

// event sends a CDP event; s nil means the root session.
func (c *clientConn) event(method string, s *session, params any) {
	p, err := json.Marshal(params)
	if err != nil {
		c.log.Error("marshal event", "method", method, "err", err)
		return
	}
	buf := getBuf()
	b := append(*buf, `{"method":`...)
	b = wire.AppendString(b, method)
	if s != nil && s.idJSON != nil {
		b = append(b, `,"sessionId":`...)
		b = append(b, s.idJSON...)
	}
	b = append(b, `,"params":`...)
	b = append(b, p...)
	b = append(b, '}')
	*buf = b
	c.deliver(buf)
}

func capitalize(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

// refuse answers a command the policy does not let through: a CDP error
// for a denial, an empty result for ack-and-drop. Either way the command
// never reaches the tab.
func (c *clientConn) refuse(env *wire.Envelope, method string, d Decision) {
	c.inst.srv.cfg.Metrics.countRefusal(d)
	if d.Verdict == AckAndDrop {
		c.inst.observe(Event{Actor: ActorClient, Kind: KindDropped, Method: method, Rule: d.Rule, Outcome: OutcomeDropped})
		if method == "Browser.setDownloadBehavior" {
			c.noteDownloadBehavior(env.Params)
		}
		buf := getBuf()
		b := append(*buf, `{"id":`...)
		b = wire.AppendInt(b, env.ID)
		if env.SessionID != nil {
			b = append(b, `,"sessionId":`...)
			b = wire.AppendBytesString(b, env.SessionID)
		}
		b = append(b, `,"result":{}}`...)
		*buf = b
		c.deliver(buf)
		return
	}
	c.inst.observe(Event{Actor: ActorClient, Kind: KindDenied, Method: method, Rule: d.Rule, Outcome: OutcomeDenied, Detail: d.Message})
	c.replyErrorRawSession(env.ID, env.SessionID, codeServerError, d.Message)
}

// observeNavigate records a client's navigation. The observer redacts the
// URL (no query, no fragment) before it is kept.
func (c *clientConn) observeNavigate(s *session, params []byte) {
	url := ""
	if params != nil {
		url = string(wire.StringField(params, "url"))
	}
	c.inst.mu.Lock()
	target := s.tab.targetID
	c.inst.mu.Unlock()
	c.inst.observe(Event{Actor: ActorClient, Kind: KindNavigate, Method: "Page.navigate", Target: target, Outcome: OutcomeOK, Detail: url})
}
