package core

import (
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/cdprelay/cdprelay/relay/internal/link"
)

const (
	// ExtPingPeriod keeps a path with idle NAT or proxies open and lets the
	// read deadline notice a vanished extension.
	ExtPingPeriod = 20 * time.Second
	// extReadTimeout: the extension sends a keepalive every 20 s and
	// answers pings, so this much silence means it is gone.
	extReadTimeout = 75 * time.Second
	// ExtQueue bounds commands queued for the extension; senders wait for
	// room, which slows the client that sends them and nobody else.
	ExtQueue = 1024
)

// errExtGone is the error of calls that were pending when the extension
// connection ended.
var ErrExtGone = errors.New("extension disconnected")

// ExtConn is the relay side of one extension WebSocket (protocol v2,
// docs/EXTENSION-PROTOCOL.md).
type ExtConn struct {
	Inst *Instance    // static
	P    *link.Peer   // static
	Log  *slog.Logger // static

	Mu      sync.Mutex // guards nextID, pending and gone
	NextID  int64
	Pending map[int64]PendingCall
	gone    bool // the connection ended; no new calls
	// over mirrors gone for readers that must not take mu.
	over atomic.Bool

	Ready chan struct{} // closed on extension.initialized, once learnt what the relay needs

	// rd is the read loop (extread.go); it knows whether batches are on.
	// Set by serve, then owned by the read loop.
	rd link.ExtReader
	// ev is the event the read loop routes (events.go), rep the reply
	// (replies.go). Owned by the read loop.
	ev  EventMsg
	rep Reply
}

const (
	CallClient callKind = iota // a client's command: the reply goes to the client
	callRelay                  // the relay's own: the reply goes to done
	callFire                   // the relay's own, and nobody waits
)

// ExtError is an error reply from the extension. Chrome's CDP errors come
// through as their code and message.
type ExtError struct {
	Code    int64
	Message string
}

func (e *ExtError) Error() string { return e.Message }

func NewExtConn(inst *Instance, conn *websocket.Conn, log *slog.Logger) *ExtConn {
	return &ExtConn{
		Inst:    inst,
		P:       link.NewPeer(conn, ExtQueue, inst.Srv.Cfg.ClientQueueBytes),
		Log:     log,
		Pending: make(map[int64]PendingCall),
		Ready:   make(chan struct{}),
	}
}

// ended reports whether the connection has ended. It is read for every
// client command: one atomic load.
func (x *ExtConn) ended() bool { return x.over.Load() }

// Keepalive sends extension.keepalive every ExtensionKeepalive until the
// connection ends: a message keeps the extension's service worker running
// where a ping does not. Our extension answers {}; the stock one an error
// for a method it does not know, which is all the same.
func (x *ExtConn) Keepalive() {
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

// IsReady reports whether the handshake has ended.
func (x *ExtConn) IsReady() bool {
	select {
	case <-x.Ready:
		return true
	default:
		return false
	}
}
