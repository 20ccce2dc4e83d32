package ext

import (
	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/relay/internal/cdp"
	"github.com/cdprelay/cdprelay/relay/internal/core"
	"github.com/cdprelay/cdprelay/relay/internal/link"
	"github.com/cdprelay/cdprelay/relay/internal/metrics"
)

// The extension connection's read side: its loop (link.ExtReader, which
// opens batches), and the replies to the commands sent.

// Run runs the read loop until the connection ends. A panic in it ends
// this instance's sockets, not the relay.
func (x *Conn) Run(maxMessage int64) (err error) {
	defer func() {
		if r := recover(); r != nil {
			x.Inst.Panicked("extension read loop", r)
			err = core.ErrPanicked
		}
	}()
	return x.serve(maxMessage)
}

// serve runs the read loop (link.ExtReader) until the connection ends. It
// is the only reader of the socket.
func (x *Conn) serve(maxMessage int64) error {
	met := x.Inst.Srv.Cfg.Metrics
	x.rd = link.ExtReader{
		Peer:       x.P,
		Log:        x.Log,
		Timeout:    readTimeout,
		MaxMessage: maxMessage,
		Handle:     x.Handle,
		TooBig:     met.Limited[metrics.LimitSize],
		BatchesIn:  met.BatchesIn,
	}
	return x.rd.Run()
}

// Handle handles one message from the extension, as the read loop does:
// a reply ends its call, an event goes to the instance.
func (x *Conn) Handle(m *wire.ExtMessage) {
	if m.HasID {
		x.HandleReply(m)
		return
	}
	x.handleEvent(m)
}

// UseBatches starts batch frames both ways, once the extension has said
// it takes them: the relay's writer batches from now on, and
// extension.acceptBatches tells the extension that it may batch too. Run
// on the read loop.
func (x *Conn) UseBatches() {
	if x.rd.StartBatches() {
		x.FireCall(MethodAcceptBatches)
	}
}

// HandleReply ends the call m answers.
func (x *Conn) HandleReply(m *wire.ExtMessage) {
	// The call is taken straight into the read loop's reused Reply: a
	// client's reply copies it once.
	r := &x.rep
	if !x.takePendingInto(m.ID, &r.Pc) {
		return // a reply to a call that timed out or was failed already
	}
	if r.Pc.Kind != core.CallClient {
		call := r.Pc
		r.Pc = core.PendingCall{}
		x.handleOwnReply(call, m)
		return
	}
	r.Pc.Client.Inflight.Add(-1)
	x.Inst.DeliverReply(r, m)
}

// handleOwnReply ends the relay's own call pc with Chrome's answer m.
func (x *Conn) handleOwnReply(pc core.PendingCall, m *wire.ExtMessage) {
	if pc.Kind == core.CallFire {
		if m.HasError {
			x.Log.Debug("relay command failed", "err", string(m.Error))
		}
		if pc.Then != nil {
			pc.Then(nil)
		}
		return
	}
	if m.HasError {
		pc.Done <- core.CallResult{Err: cdp.ParseExtError(m.Error)}
		return
	}
	// The frame buffer is reused by the next read: copy.
	res := append([]byte(nil), m.Result...)
	if pc.Then != nil {
		pc.Then(res)
	}
	pc.Done <- core.CallResult{Result: res}
}
