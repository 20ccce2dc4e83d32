package link

import (
	"log/slog"
	"time"

	"github.com/gorilla/websocket"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/internal/wslimit"
)

// ExtReader is the read loop of an extension protocol connection
// (docs/EXTENSION-PROTOCOL.md): it reads the frames of its Peer's socket,
// keeps the read deadline, opens batch frames once batches are on, and
// hands each message on to Handle, in order. What a message means is the
// owner's. The owner fills the static fields and runs Run on the
// goroutine that reads the socket; the rest is owned by that loop.
type ExtReader struct {
	Peer *Peer        // static: the connection read
	Log  *slog.Logger // static
	// Timeout is how long the socket may stay silent (no message, no pong)
	// before the connection is taken as gone. Static.
	Timeout time.Duration
	// MaxMessage bounds one message; a larger one ends the connection
	// (Peer.CloseTooBig). Static.
	MaxMessage int64
	// Handle handles one message, on the loop; m and the bytes it holds
	// are valid only during the call. Static.
	Handle func(m *wire.ExtMessage)
	// TooBig counts the connections ended for a message over MaxMessage,
	// BatchesIn the batch frames read. Static; nil: not counted.
	TooBig, BatchesIn prometheus.Counter

	// batches: the extension takes and sends batch frames (feature
	// "batches"), so a frame may be an array of messages. Owned by the
	// loop.
	batches bool
}

// Run runs the read loop until the connection ends, and returns why. It is
// the only reader of the socket.
func (r *ExtReader) Run() error {
	conn := r.Peer.Conn()
	_ = conn.SetReadDeadline(time.Now().Add(r.Timeout))
	conn.SetPongHandler(func(string) error {
		return conn.SetReadDeadline(time.Now().Add(r.Timeout))
	})
	var buf []byte
	var m wire.ExtMessage
	for {
		mt, frame, err := ReadFrame(conn, &buf, r.MaxMessage)
		if err != nil {
			if wslimit.IsTooBig(err) {
				if r.TooBig != nil {
					r.TooBig.Inc()
				}
				r.Peer.CloseTooBig(r.MaxMessage)
			}
			return err
		}
		_ = conn.SetReadDeadline(time.Now().Add(r.Timeout))
		if mt != websocket.TextMessage {
			r.Log.Warn("extension sent a binary frame; ignored")
			continue
		}
		if r.batches && wire.IsBatch(frame) {
			r.handleBatch(frame, &m)
			continue
		}
		if err := wire.DecodeExt(frame, &m); err != nil {
			// One bad message must not cost the person their session, but
			// it is worth a line: our extension never sends one.
			r.Log.Warn("extension sent a malformed message; ignored", "err", err)
			continue
		}
		r.Handle(&m)
	}
}

// handleBatch handles the messages of a batch frame in order, each as if
// it had come in a frame of its own: a malformed one is skipped, and JSON
// that breaks off loses what follows, not what came before.
func (r *ExtReader) handleBatch(frame []byte, m *wire.ExtMessage) {
	bt, err := wire.OpenBatch(frame)
	if err != nil {
		r.Log.Warn("extension sent a malformed batch; ignored", "err", err)
		return
	}
	if r.BatchesIn != nil {
		r.BatchesIn.Inc()
	}
	for {
		ok, err := bt.Next(m)
		if !ok {
			break
		}
		if err != nil {
			r.Log.Warn("extension sent a malformed message in a batch; ignored", "err", err)
			continue
		}
		r.Handle(m)
	}
	if err := bt.Err(); err != nil {
		r.Log.Warn("extension sent a batch that breaks off; the rest is ignored", "err", err)
	}
}

// StartBatches turns batch frames on both ways at this end, once the
// extension has said it takes them: from now on a frame that is an array
// is read as a batch, and the Peer's writer batches. It reports false when
// they were on already. Only Handle (on the loop) may call it; telling the
// extension that it may batch too is the owner's.
func (r *ExtReader) StartBatches() bool {
	if r.batches {
		return false
	}
	r.batches = true
	r.Peer.EnableBatches()
	return true
}
