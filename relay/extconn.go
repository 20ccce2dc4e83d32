package relay

import (
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/link"
	"github.com/gorilla/websocket"
)

const (
	// extPingPeriod keeps a path with idle NAT or proxies open and lets the
	// read deadline notice a vanished extension.
	extPingPeriod = 20 * time.Second
	// extReadTimeout: the extension sends a keepalive every 20 s and
	// answers pings, so this much silence means it is gone.
	extReadTimeout = 75 * time.Second
	// extQueue bounds commands queued for the extension; senders wait for
	// room, which slows the client that sends them and nobody else.
	extQueue = 1024
)

// errExtGone is the error of calls that were pending when the extension
// connection ended.
var errExtGone = errors.New("extension disconnected")

// extConn is the relay side of one extension WebSocket (protocol v2,
// docs/EXTENSION-PROTOCOL.md).
type extConn struct {
	inst *Instance    // static
	p    *link.Peer   // static
	log  *slog.Logger // static

	mu      sync.Mutex // guards nextID, pending and gone
	nextID  int64
	pending map[int64]pendingCall
	gone    bool // the connection ended; no new calls
	// over mirrors gone for readers that must not take mu.
	over atomic.Bool

	ready chan struct{} // closed on extension.initialized, once learnt what the relay needs

	// rd is the read loop (extread.go); it knows whether batches are on.
	// Set by serve, then owned by the read loop.
	rd link.ExtReader
	// ev is the event the read loop routes (events.go), rep the reply
	// (replies.go). Owned by the read loop.
	ev  event
	rep reply
}

const (
	callClient callKind = iota // a client's command: the reply goes to the client
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

func newExtConn(inst *Instance, conn *websocket.Conn, log *slog.Logger) *extConn {
	return &extConn{
		inst:    inst,
		p:       link.NewPeer(conn, extQueue, inst.srv.cfg.ClientQueueBytes),
		log:     log,
		pending: make(map[int64]pendingCall),
		ready:   make(chan struct{}),
	}
}

// ended reports whether the connection has ended. It is read for every
// client command: one atomic load.
func (x *extConn) ended() bool { return x.over.Load() }

// keepalive sends extension.keepalive every ExtensionKeepalive until the
// connection ends: a message keeps the extension's service worker running
// where a ping does not. Our extension answers {}; the stock one an error
// for a method it does not know, which is all the same.
func (x *extConn) keepalive() {
	t := time.NewTicker(x.inst.srv.cfg.ExtensionKeepalive)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			x.fireCall("extension.keepalive")
		case <-x.p.Done():
			return
		}
	}
}

// isReady reports whether the handshake has ended.
func (x *extConn) isReady() bool {
	select {
	case <-x.ready:
		return true
	default:
		return false
	}
}
