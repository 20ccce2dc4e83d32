package ext

import (
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/cdprelay/cdprelay/relay/internal/core"
	"github.com/cdprelay/cdprelay/relay/internal/link"
)

const (
	// PingPeriod keeps a path with idle NAT or proxies open and lets the
	// read deadline notice a vanished extension.
	PingPeriod = 20 * time.Second
	// readTimeout: the extension sends a keepalive every 20 s and answers
	// pings, so this much silence means it is gone.
	readTimeout = 75 * time.Second
	// Queue bounds commands queued for the extension; senders wait for
	// room, which slows the client that sends them and nobody else.
	Queue = 1024
)

// Conn is the relay side of one extension WebSocket (protocol v2,
// docs/EXTENSION-PROTOCOL.md): the instance's upstream (core.Upstream)
// while it is connected.
type Conn struct {
	Inst *core.Instance // static
	P    *link.Peer     // static
	Log  *slog.Logger   // static

	mu      sync.Mutex // guards nextID, pending and gone
	nextID  int64
	pending map[int64]core.PendingCall
	gone    bool // the connection ended; no new calls
	// over mirrors gone for readers that must not take mu.
	over atomic.Bool

	ready chan struct{} // closed on extension.initialized, once learnt what the relay needs

	// learning is held while the browser's identity is asked of a tab
	// (learn.go): one tab asked at a time.
	learning sync.Mutex

	// rd is the read loop (read.go); it knows whether batches are on. Set
	// by serve, then owned by the read loop.
	rd link.ExtReader
	// ev is the event the read loop routes, rep the reply. Owned by the
	// read loop, reused for every message.
	ev  core.EventMsg
	rep core.Reply
}

var _ core.Upstream = (*Conn)(nil)

// New returns the relay side of the extension's WebSocket conn, for
// instance inst. A nil conn gives a connection with no socket, for tests
// (its writer's queue fills and nothing drains it).
func New(inst *core.Instance, conn *websocket.Conn, log *slog.Logger) *Conn {
	return &Conn{
		Inst:    inst,
		P:       link.NewPeer(conn, Queue, inst.Srv.Cfg.ClientQueueBytes),
		Log:     log,
		pending: make(map[int64]core.PendingCall),
		ready:   make(chan struct{}),
	}
}

// Ended reports whether the connection has ended. It is read for every
// client command: one atomic load.
func (x *Conn) Ended() bool { return x.over.Load() }

// Keepalive sends extension.keepalive every ExtensionKeepalive until the
// connection ends: a message keeps the extension's service worker running
// where a ping does not. Our extension answers {}; the stock one an error
// for a method it does not know, which is all the same.
func (x *Conn) Keepalive() {
	t := time.NewTicker(x.Inst.Srv.Cfg.ExtensionKeepalive)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			x.FireCall("extension.keepalive")
		case <-x.P.Done():
			return
		}
	}
}

// Ready is closed once the handshake has ended.
func (x *Conn) Ready() <-chan struct{} { return x.ready }

// SetReady ends the handshake. Called once, under the instance's lock.
func (x *Conn) SetReady() { close(x.ready) }

// IsReady reports whether the handshake has ended.
func (x *Conn) IsReady() bool {
	select {
	case <-x.ready:
		return true
	default:
		return false
	}
}

// Done is closed once the connection is over.
func (x *Conn) Done() <-chan struct{} { return x.P.Done() }

// Shutdown closes the socket with code and reason.
func (x *Conn) Shutdown(code int, reason string) { x.P.Shutdown(code, reason) }

// isCurrent reports whether x is the instance's upstream now: a replaced
// connection's read loop runs on for a moment, and what it hears then is
// of tabs that are gone. st is the instance's state, its lock held.
func (x *Conn) isCurrent(st *core.State) bool { return st.Ext == core.Upstream(x) }
