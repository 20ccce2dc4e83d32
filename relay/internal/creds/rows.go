package creds

import (
	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/core"
	"github.com/cdprelay/cdprelay/relay/internal/lines"
	"github.com/cdprelay/cdprelay/relay/internal/link"
)

// WantsSecret wants the commands that may type a secret by reference.
func WantsSecret(m *core.MethodInfo) bool {
	switch m.Name {
	case "Input.insertText", "Input.imeSetComposition", "Input.dispatchKeyEvent", "CDPRelay.fillSecret":
		return true
	}
	return false
}

// WantsLockGates wants for creds.LockGates what the secret stage does
// not: every other method (lockgaterows.go).
func WantsLockGates(m *core.MethodInfo) bool { return !WantsSecret(m) }

// Secret (creds.Secret): a command that types a secret by reference
// is the relay's to carry out: it checks where the focus is, then types
// the value.
func Secret(c *core.ClientConn, k *core.Cmd) bool {
	name, d, is := SecretRef(k)
	if !is {
		return SecretGates(c, k) // LockGates's, for these methods too
	}
	if d.Verdict != core.Allow {
		return c.Refuse(k, d)
	}
	k.Out.Kind = core.OutEmulated
	cl := core.Call{Id: k.Env.ID, Method: k.M.Name, Sess: k.Route.Sess, Args: k.Args, Acc: k.Route.Acc, Via: k.Route.Via, ReplyTo: k.Route.ReplyTo}
	cl.Stop = c.Inst.StopMark()
	// The client's later commands for the tab wait until it is typed.
	h := lines.Occupy(c, k)
	c.Wg.Add(1)
	c.Inst.Tasks.Spawn("type a secret", func() {
		defer c.Wg.Done()
		defer lines.Release(c, h)
		typeSecret(c, cl, name)
	})
	return false
}

// WantsStreams wants reading a stream.
func WantsStreams(m *core.MethodInfo) bool { return m.Name == "IO.read" || m.Name == "IO.close" }

// StreamsStage (creds.Streams): while a secret is locked, a stream's
// pieces are joined where they meet (Streams).
func StreamsStage(c *core.ClientConn, k *core.Cmd) bool {
	if instanceSlot.Of(c.Inst).Locked.Load() == nil {
		return true
	}
	handle, _, err := core.ExactString(k.Env.Params, "handle")
	if k.M.Name == "IO.close" {
		instanceSlot.Of(c.Inst).Streams.Forget(0, handle)
	} else if _, seek := wire.Member(k.Env.Params, "offset"); seek > 0 || err != nil || len(handle) > MaxStreamHandle {
		// A handle the relay could not read as Chrome does (given twice)
		// would join the pieces of one stream with another's.
		return c.Failed(k, core.CodeServerError, "cdprelay: a stream is read from its start while a typed secret is hidden (no offset)")
	} else {
		instanceSlot.Of(c.Inst).Streams.NoteRead(k.Env.ID, handle)
	}
	return true
}

// RedactEvent (creds.Redact): credential events go out redacted (the real
// values of a paused request are kept, credentials.go).
func RedactEvent(in *core.Instance, e *core.EventMsg) bool {
	e.Red = redactEvent(in, e.State, e.Tab, string(e.Sid), e.Method, e.Params)
	e.Params = *e.Red
	return true
}

// StreamForget (creds.StreamForget): a stream read whose reply does not
// reach the client as a piece (an error, or withheld) is forgotten
// (Streams), or its entry would stay for good.
func StreamForget(in *core.Instance, r *core.Reply) bool {
	if r.M.HasError || core.Withheld(r) {
		instanceSlot.Of(in).Streams.Forget(r.Pc.ClientID, "")
	}
	return true
}

// CredentialResult (creds.Results): credentials in a result go out
// redacted (keptheaders.go).
func CredentialResult(in *core.Instance, r *core.Reply) bool {
	red := wire.Redactor{Sensitive: credsOf(in.Srv).Has}
	b := link.GetBuf()
	*b = red.Redact(*b, r.M.Result)
	*r.Buf = wire.AppendResult(*r.Buf, r.Pc.ClientID, r.Session, *b)
	link.PutBuf(b)
	return false
}

// StreamPiece (creds.StreamPiece): while a secret is hidden, a piece of a
// stream: its end waits for the next (Streams).
func StreamPiece(in *core.Instance, r *core.Reply) bool {
	locked := instanceSlot.Of(in).Locked.Load()
	if locked == nil {
		return true
	}
	res := r.M.Result
	if out, ok := instanceSlot.Of(in).Streams.Piece(r.Pc.ClientID, r.M.Result, locked); ok {
		res = out
	}
	*r.Buf = wire.AppendResult(*r.Buf, r.Pc.ClientID, r.Session, res)
	return false
}

// WantsRestore wants a client's answer to a paused request.
func WantsRestore(m *core.MethodInfo) bool {
	switch m.Name {
	case "Fetch.continueRequest", "Fetch.continueResponse", "Fetch.fulfillRequest":
		return true
	}
	return false
}

// RestoreParams (creds.Restore): the credentials a paused request showed as
// markers, put back (keptheaders.go); a refused answer fails the request.
func RestoreParams(c *core.ClientConn, k *core.Cmd) bool {
	p, d, ok := restoreCredentials(c, k)
	if !ok {
		if d.Verdict == core.Allow {
			d = core.Denial(api.RuleCredentials, "cdprelay: the request's headers could not be read")
		}
		c.FailPaused(k)
		return c.Refuse(k, d)
	}
	k.Params = p
	return true
}

// WithholdFrame (creds.Frames): a frame of a tab whose password field holds
// a typed secret is the live view's only, acknowledged here (fieldwatch.go).
func WithholdFrame(in *core.Instance, e *core.EventMsg) bool {
	// A child session's frames are not the tab's screencast (core.Screencast
	// lets them through as they are).
	return e.Sid != nil || !withholdFrame(e.State, e.Tab, e.Params)
}

// Lifecycle is what the credentials hear of a tab's life: a new
// document leaves the typed secrets of the one before behind
// (fieldwatch.go); a detach voids the real headers kept of its paused
// requests (keptheaders.go).
func Lifecycle() core.Lifecycle {
	return core.Lifecycle{
		DocumentLocked: func(st *core.State, t *core.Tab, params []byte) { secretDocument(st, t, params) },
		DetachedLocked: func(t *core.Tab) { tabSlot.Of(t).paused = nil },
	}
}
