package core

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
	"github.com/cdprelay/cdprelay/internal/wslimit"
	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/cdp"
	"github.com/cdprelay/cdprelay/relay/internal/link"
	"github.com/cdprelay/cdprelay/relay/internal/metrics"
)

// ClientConn is one CDP client's WebSocket. The fields declared here are
// the core's own; what a stage package keeps of a client is in slots
// (slots.go).
type ClientConn struct {
	Inst   *Instance          // static
	P      *link.Peer         // static
	Log    *slog.Logger       // static
	Ctx    context.Context    // static: cancelled when the client goes
	Cancel context.CancelFunc // static

	// page is the session of a client that connected to a page endpoint
	// (/devtools/page/<targetId>): its commands without a sessionId are the
	// page's, and nothing it receives carries one. Set before the read loop
	// runs; nil for a browser-level client.
	Page *Session

	// up is the upstream the client's commands go to: set by the read
	// loop once the extension is ready, and again when a restarted
	// extension is back (instance.go). Read anywhere, with Ext.
	up atomic.Pointer[upstreamRef]

	// Guarded by the instance's mutex.
	AutoAttach bool // Target.setAutoAttach at the root
	Discover   bool // Target.setDiscoverTargets at the root

	Wg sync.WaitGroup // emulated commands still running

	Inflight atomic.Int64 // forwarded commands waiting for the browser
	rate     link.Rate    // owned by the read loop: the command rate limit
	Cmd      Cmd          // owned by the read loop: the command in the pipeline

	// The concerns' slots.
	LineCount atomic.Int32 // lines of held commands it has (package lines)

	slots []any // the stages' own (slots.go); static after NewClientConn
}

func NewClientConn(inst *Instance, conn *websocket.Conn, log *slog.Logger) *ClientConn {
	ctx, cancel := context.WithCancel(context.Background())
	return &ClientConn{
		rate:   link.NewRate(inst.Srv.Cfg.CommandsPerSecond, inst.Srv.Cfg.CommandBurst),
		Inst:   inst,
		P:      link.NewPeer(conn, inst.Srv.Cfg.ClientQueue, inst.Srv.Cfg.ClientQueueBytes),
		Log:    log,
		Ctx:    ctx,
		Cancel: cancel,
		slots:  clientSlots.make(),
	}
}

// Ext is the extension connection the client's commands go to; nil until
// the extension is first ready.
func (c *ClientConn) Ext() Upstream {
	if r := c.up.Load(); r != nil {
		return r.Upstream
	}
	return nil
}

// SetExt sets the upstream the client's commands go to.
func (c *ClientConn) SetExt(x Upstream) {
	if c.Ext() != x {
		c.up.Store(&upstreamRef{x})
	}
}

// upstreamRef holds an Upstream where an atomic pointer is needed.
type upstreamRef struct{ Upstream }

// Close ends the client's connection with a reason it can read.
func (c *ClientConn) Close(code int, reason string) {
	c.Cancel()
	c.P.Shutdown(code, reason)
}

// Deliver queues one frame for the client. A client that does not read
// until its queue is full is closed: a CDP client is never silently
// dropped from, because a lost reply or event is a hang on its side.
func (c *ClientConn) Deliver(b *[]byte) {
	if scrubber.Frame != nil {
		b = scrubber.Frame(c.Inst, b)
	}
	if !c.P.TrySend(b) && !c.P.Closed() {
		c.Log.Warn("client is not reading; closing it", "queued", c.P.Queued())
		c.Inst.Srv.Cfg.Metrics.Limited[metrics.LimitQueue].Inc()
		c.Close(websocket.ClosePolicyViolation, "cdprelay: client is not reading its messages ("+strconv.Itoa(c.P.QueueCap())+" queued)")
	}
}

// Run opens the client's page (for a page endpoint) and runs its read loop
// until the connection ends. A panic in it ends this instance's sockets,
// not the relay.
func (c *ClientConn) Run(pageTarget string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			c.Inst.Panicked("client read loop", r)
			err = ErrPanicked
		}
	}()
	if err := c.openPage(pageTarget); err != nil {
		return err
	}
	return c.serve()
}

var ErrPanicked = errors.New(msgInternal)

// serve runs the client's read loop until the connection ends.
func (c *ClientConn) serve() error {
	conn := c.P.Conn()
	limit := c.Inst.Srv.Cfg.MaxMessageBytes
	var buf []byte
	idle := c.Inst.Srv.Cfg.IdleClientTimeout
	for {
		if idle > 0 {
			_ = conn.SetReadDeadline(time.Now().Add(idle))
		}
		mt, frame, err := link.ReadFrame(conn, &buf, limit)
		if err != nil {
			if wslimit.IsTooBig(err) {
				c.Inst.Srv.Cfg.Metrics.Limited[metrics.LimitSize].Inc()
				c.Cancel()
				c.P.CloseTooBig(limit)
				return err
			}
			if ne, ok := err.(interface{ Timeout() bool }); ok && ne.Timeout() && idle > 0 {
				c.Inst.Srv.Cfg.Metrics.Limited[metrics.LimitIdle].Inc()
				return ErrIdle
			}
			return err
		}
		if x := c.Ext(); x == nil || x.Ended() {
			// Traffic is held until the extension's handshake ends, so that
			// nothing reaches a half-initialised extension; and while a
			// restarted extension comes back.
			x, err := c.Inst.waitReady(c.Ctx)
			if err != nil {
				return ErrExtNotConnected
			}
			c.SetExt(x)
		}
		if mt != websocket.TextMessage {
			c.replyNoID(codeParseError, "Message must be a JSON text frame")
			continue
		}
		k := &c.Cmd
		if err := wire.DecodeCommand(frame, &k.Env); err != nil {
			c.BadCommand(&k.Env, err)
			continue
		}
		c.Handle(k)
	}
}

func (c *ClientConn) BadCommand(env *wire.Envelope, err error) {
	var se *wire.SyntaxError
	switch {
	case errors.As(err, &se):
		c.replyNoID(codeParseError, "Message must be a valid JSON object: "+se.Error())
	case !env.HasID:
		c.replyNoID(codeInvalidRequest, "Message must have integer 'id' property")
	default:
		c.ReplyErrorRaw(env.ID, env.SessionID, codeInvalidRequest, capitalize(err.Error()))
	}
}

// Call is a command handed to an emulation handler. Unlike cmd it owns its
// bytes: handlers may outlive the read buffer and run beside the read loop.
type Call struct {
	Id     int64
	Method string
	Sess   *Session // the session the command named; its reply names it too
	Params []byte
	Args   cdp.Args  // the decoded params, as the stages judged them
	Acc    TabAccess // the access of the tab the command's session is on
	// via and replyTo are the command's route (pipeline.go): for a task
	// that forwards the command itself.
	Via, ReplyTo *Session
	// stop is the instance's stop epoch when the command arrived: a
	// command a Stop caught is answered msgStopped, whatever it came to.
	Stop uint32
	// Approved: a person approved the command (the person's asking.go).
	Approved bool
}

// StoppedSince reports whether a person stopped the automation since k
// arrived.
func (c *ClientConn) StoppedSince(k Call) bool {
	return k.Stop != 0 && k.Stop != c.Inst.StopMark()
}

// StopMark is what call.stop records: never 0, which stands for a call
// made without one.
func (in *Instance) StopMark() uint32 { return in.StopEpoch.Load() + 1 }

// Reply sends a result for k. v is marshalled with encoding/json; the
// emulated paths are not hot.
func (c *ClientConn) Reply(k Call, v any) {
	if c.StoppedSince(k) {
		c.ReplyError(k.Id, k.Sess, CodeServerError, api.MsgStopped)
		return
	}
	res, err := json.Marshal(v)
	if err != nil {
		c.Fail(k, CodeServerError, err.Error())
		return
	}
	buf := link.GetBuf()
	*buf = wire.AppendResult(*buf, k.Id, SessionToken(k.Sess), res)
	c.Deliver(buf)
}

func (c *ClientConn) Fail(k Call, code int64, msg string) {
	if c.StoppedSince(k) {
		msg, code = api.MsgStopped, CodeServerError
	}
	c.ReplyError(k.Id, k.Sess, code, msg)
}

func SessionToken(s *Session) []byte {
	if s == nil {
		return nil
	}
	return s.idJSON
}

func (c *ClientConn) ReplyError(id int64, s *Session, code int64, msg string) {
	buf := link.GetBuf()
	*buf = wire.AppendError(*buf, id, SessionToken(s), code, msg)
	c.Deliver(buf)
}

// quoted is a sessionId as the client sent it (unquoted; nil for none),
// quoted for a reply.
func quoted(sessionID []byte) []byte {
	if sessionID == nil {
		return nil
	}
	return wire.Quote(make([]byte, 0, len(sessionID)+2), sessionID)
}

// ReplyErrorRaw answers with the sessionId exactly as the client sent it
// (unquoted; nil for none).
func (c *ClientConn) ReplyErrorRaw(id int64, sessionID []byte, code int64, msg string) {
	buf := link.GetBuf()
	*buf = wire.AppendError(*buf, id, quoted(sessionID), code, msg)
	c.Deliver(buf)
}

// IsScript reports whether a method runs script whose refusal is answered
// as thrown.
func IsScript(method string) bool {
	return method == "Runtime.evaluate" || method == "Runtime.callFunctionOn"
}

// replyThrownRaw answers with cdp.Thrown(msg), the sessionId as the client
// sent it.
func (c *ClientConn) replyThrownRaw(id int64, sessionID []byte, msg string) {
	buf := link.GetBuf()
	*buf = wire.AppendResult(*buf, id, quoted(sessionID), cdp.Thrown(msg))
	c.Deliver(buf)
}

// ReplyEmptyRaw answers {} with the sessionId as the client sent it.
func (c *ClientConn) ReplyEmptyRaw(id int64, sessionID []byte) {
	buf := link.GetBuf()
	*buf = wire.AppendResult(*buf, id, quoted(sessionID), nil)
	c.Deliver(buf)
}

// replyNoID answers a message that has no usable id, as Chrome does.
func (c *ClientConn) replyNoID(code int64, msg string) {
	buf := link.GetBuf()
	*buf = wire.AppendErrorNoID(*buf, code, msg)
	c.Deliver(buf)
}

// Event sends a CDP event; s nil means the root session.
func (c *ClientConn) Event(method string, s *Session, params any) {
	p, err := json.Marshal(params)
	if err != nil {
		c.Log.Error("marshal event", "method", method, "err", err)
		return
	}
	c.EventRaw(method, s, p)
}

func capitalize(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}

// CallCtx bounds an emulated command's calls: by the call timeout, the
// client's connection and the next Stop.
func (c *ClientConn) CallCtx() (context.Context, context.CancelFunc) {
	c.Inst.Lock()
	run := c.Inst.St.runCtx
	c.Inst.Unlock()
	ctx, cancel := context.WithTimeout(c.Ctx, c.Inst.Srv.Cfg.CallTimeout)
	stop := context.AfterFunc(run, cancel)
	return ctx, func() { stop(); cancel() }
}
