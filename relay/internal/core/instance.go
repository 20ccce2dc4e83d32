package core

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/gid"
	"github.com/cdprelay/cdprelay/relay/internal/outbox"
)

// Close reasons sent to a CDP client. They are part of the interface: a
// client's error message shows them.
const (
	ReasonExtNotConnected = "Extension not connected"
	ReasonExtGonePrefix   = "Extension disconnected: "
	ReasonAllTabsDetached = "All controlled tabs detached"
	ReasonSecondClient    = "Another CDP client is already connected to this instance"
	ReasonShutdown        = "cdprelay is shutting down"
	reasonReplaced        = "replaced by a new extension connection"
)

// Instance is one extension connection (one browser profile) with at most
// one CDP client.
//
// What changes lives in st (state.go), reached only through lock; the
// rest is static after construction. The fields declared here are the
// core's own; what a concern keeps of an instance is its slot, embedded at
// the end: tierInstance (tierslots.go).
type Instance struct {
	Srv         *Relay       // static
	Id          string       // static: public handle
	Guid        string       // static: secret capability
	IsDefault   bool         // static
	ProfileName string       // static: the policy profile ("" for the global policy)
	Log         *slog.Logger // static
	CreatedAt   time.Time    // static
	BrowserTID  string       // static: the browser target's id

	// Owner is the tenant ("": the operator's); set once more at most,
	// when a tenant's extension pairs an instance minted for nobody.
	Owner ownerBox
	// paired: an extension has been let in once (tenants.go).
	Paired atomic.Bool

	mu sync.Mutex
	St State // guarded by mu; see lock
	// holder is the goroutine holding mu (gid.Current; 0: none), set by lock and
	// cleared by unlock, so that a panic's recovery knows whether the code
	// that panicked holds the lock (tasks.go).
	holder atomic.Uintptr
	// out carries what critical sections queued for the extension once
	// they release the lock (package outbox).
	out outbox.Box

	Tasks tasks // background work: see tasks.go

	childSessions atomic.Int64 // child sessions (frames, workers) ever routed

	// wedged: a panic left the lock held (tasks.go); nothing may take it.
	Wedged atomic.Bool

	// ResumeWaits counts the commands waiting for their tab's resume
	// (pipeline.go), for tests.
	ResumeWaits atomic.Int32

	// IsStopped is set while a person has stopped the automation
	// (person.Stop), read without the lock by the pipeline's first stage;
	// StopEpoch counts the stops, for emulated commands that began before
	// one.
	IsStopped atomic.Bool
	StopEpoch atomic.Uint32

	// The concerns' slots.
	slots        []any // the stages' own (slots.go); static after NewInstance
	tierInstance       // blind stand-ins' contexts (tierslots.go)
}

func NewInstance(s *Relay, guid string, isDefault bool, profile string) *Instance {
	if CommandStages == nil {
		panic("core: an instance without the order (SetOrder)")
	}
	id := RandHex(6)
	in := &Instance{
		Srv:         s,
		Id:          id,
		Guid:        guid,
		IsDefault:   isDefault,
		ProfileName: profile,
		Log:         s.Cfg.Logger.With("instance", id),
		CreatedAt:   time.Now(),
		BrowserTID:  RandHex(16),
		slots:       instanceSlots.make(),
	}
	in.St = newState(in)
	in.out.Init(in.Tasks.Spawn)
	in.FakeContext.Store(1 << 30)
	in.Tasks.init(in)
	return in
}

// Lock takes the instance's mutex and returns its state: the one way to
// read or change what the instance knows. Release it with unlock, and
// never call the extension or block in between: what runs under the lock
// is named ...Locked where it is a hook called with it held (a caller's
// critical section), and queues commands for the extension with
// state.fire rather than send them.
func (in *Instance) Lock() *State {
	in.mu.Lock()
	in.holder.Store(gid.Current())
	return &in.St
}

// Unlock releases the lock; then the commands the critical section queued
// (state.fire) go to the extension through the outbox, with the lock
// free: no later command overtakes them (outbox), and waiting for room in
// the extension's queue stops nobody who wants the lock.
func (in *Instance) Unlock() {
	st := &in.St
	queued := len(st.fires) > 0
	if queued {
		in.out.PutLocked(st.Ext, st.fires)
		clear(st.fires)
		st.fires = st.fires[:0]
	}
	in.holder.Store(0)
	in.mu.Unlock()
	if queued {
		in.out.Flush()
	}
}

// ID is the instance's public handle.
func (in *Instance) ID() string { return in.Id }

// GUID is the secret that the instance's capability URLs carry.
func (in *Instance) GUID() string { return in.Guid }

// Profile is the policy profile the instance's commands are judged by ("":
// the global policy), so that what reaches its tabs by another way (the
// live view's navigate) is judged by the same one.
func (in *Instance) Profile() string { return in.ProfileName }

// Info returns what the extension reported about its browser.
func (in *Instance) Info() BrowserInfo {
	if in.Wedged.Load() {
		return BrowserInfo{}
	}
	st := in.Lock()
	defer in.Unlock()
	return st.Info
}

var (
	errInstanceClosed  = errors.New("instance closed")
	ErrExtNotConnected = errors.New(ReasonExtNotConnected)
	ErrIdle            = errors.New("cdprelay: the client sent nothing for too long (IdleClientTimeout)")
)

// AcceptExtension makes x the instance's extension connection. An older
// one is replaced: a restarted service worker reconnects before the old
// socket has timed out. A client keeps its connection, as when the
// extension comes back after it went (extensionGone).
func (in *Instance) AcceptExtension(x Upstream) bool {
	st := in.Lock()
	if st.Closed {
		in.Unlock()
		return false
	}
	old, client := st.Ext, st.Client
	st.Ext = x
	st.EverClaimed = true
	st.StopGrace()
	st.ExtAway = nil // back: the tabs that wait for it are resumed as it offers them (relay/internal/away)
	var gone []*TabHandle
	var waiting map[int64]bool
	keep := true
	if old != nil {
		back := false
		if client != nil {
			// Our extension's worker restarted: its tabs come back with
			// the new connection.
			gone, waiting, back = away.ReplacedLocked(st)
		}
		if !back {
			keep = client != nil && in.Srv.Cfg.ExtensionGrace > 0
			gone = st.endTabs(client, keep, reasonReplaced)
		}
	}
	st.Notify()
	in.Unlock()
	NotifyHandles(gone, api.TabEvent{Method: api.EventDetached, Params: JSONObj("reason", "extension disconnected")})
	if old != nil {
		FailDetached(old, waiting)
		old.Shutdown(websocket.CloseNormalClosure, reasonReplaced)
		EndUpstream(old)
		if client != nil && !keep {
			client.Close(websocket.CloseGoingAway, ReasonExtGonePrefix+reasonReplaced)
		}
	}
	return true
}

// ExtensionGone is called once when x's read loop ends. A client stays
// for the configured ExtensionGrace: a reloaded or updated extension is
// back within a second, and then the client carries on with the tabs it
// offers again (as new targets); its commands meanwhile wait for it.
//
// Our extension, when its worker stopped or it restarted (code), is
// expected back: the client stays for longer, its tab sessions waiting
// (relay/internal/away).
func (in *Instance) ExtensionGone(x Upstream, reason string, code int) {
	st := in.Lock()
	if st.Ext != x {
		in.Unlock()
		EndUpstream(x)
		return
	}
	st.Ext = nil
	client := st.Client
	if away.ExtensionGoneLocked(in, st, x, client, reason, code) {
		return
	}
	keep := client != nil && in.Srv.Cfg.ExtensionGrace > 0 && !st.Closed
	gone := st.endTabs(client, keep, reason)
	if keep {
		st.startGrace(client, reason)
	}
	st.Notify()
	in.Unlock()
	// Only now: the client has been told its sessions ended, so that a
	// command that fails with them reads as a closed target.
	EndUpstream(x)
	NotifyHandles(gone, api.TabEvent{Method: api.EventDetached, Params: JSONObj("reason", "extension disconnected")})
	if client != nil && !keep {
		client.Close(websocket.CloseGoingAway, ReasonExtGonePrefix+reason)
	}
}

// endTabs forgets every tab of an extension connection that is gone,
// telling the client that their sessions ended and why. The client stays
// when keep (its browser sessions with it); otherwise it is no longer the
// instance's, and the caller closes it. It returns the handles to tell,
// outside the lock.
func (st *State) endTabs(c *ClientConn, keep bool, reason string) []*TabHandle {
	why := "the cdprelay extension disconnected (" + reason + ")"
	if keep {
		why = whyExtensionRestart
	}
	var hs []*TabHandle
	if c != nil {
		for _, t := range st.SortedTabs() {
			hs = append(hs, st.RemoveTab(t, why)...)
		}
	}
	if !keep {
		st.Client = nil
	}
	var browser []*Session
	if keep {
		for _, s := range st.Sessions {
			if s.Tab == nil {
				browser = append(browser, s)
			}
		}
	}
	hs = append(hs, st.ResetTabs()...)
	for _, s := range browser {
		st.Sessions[s.Id] = s
	}
	return hs
}

// startGrace closes client once ExtensionGrace has passed, unless an
// extension has connected again by then.
func (st *State) startGrace(c *ClientConn, reason string) {
	in := st.Inst
	st.SetGrace(in.Srv.Cfg.ExtensionGrace, func() { in.graceOver(c, reason) })
}

// StopGrace stops the grace under way, if any: the client stays.
func (st *State) StopGrace() {
	if st.grace != nil {
		st.grace.Stop()
		st.grace = nil
	}
}

func (in *Instance) graceOver(c *ClientConn, reason string) {
	if in.Wedged.Load() {
		return // its sockets are closed already, and its lock is not to be taken
	}
	st := in.Lock()
	if st.Client != c || st.Ext != nil || st.Closed {
		in.Unlock()
		return
	}
	st.Client = nil
	st.grace = nil
	st.Notify()
	in.Unlock()
	in.Log.Info("the extension did not come back in time; closing the client", "grace", in.Srv.Cfg.ExtensionGrace)
	c.Close(websocket.CloseGoingAway, ReasonExtGonePrefix+reason)
}

// waitReady waits until the extension has finished its handshake and
// returns its connection. It gives up after the configured ExtensionWait,
// when ctx ends, or when the instance closes.
func (in *Instance) waitReady(ctx context.Context) (Upstream, error) {
	ctx, cancel := context.WithTimeout(ctx, in.readyWait())
	defer cancel()
	for {
		if err := in.WaitReady(ctx); err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				return nil, ErrExtNotConnected
			}
			return nil, err
		}
		st := in.Lock()
		x := st.Ext
		in.Unlock()
		if x != nil && x.IsReady() {
			return x, nil
		}
	}
}

// clientHandover is how long a new client waits for the previous one's
// connection to end before it is refused.
const clientHandover = 500 * time.Millisecond

// AttachClient makes c the instance's CDP client, unless another one is
// connected. A client that reconnects at once can arrive before the relay
// has read its old socket's close: it waits, for clientHandover, for the
// old one to go before it is refused as a second client.
func (in *Instance) AttachClient(c *ClientConn) bool {
	timer := time.NewTimer(clientHandover)
	defer timer.Stop()
	for {
		st := in.Lock()
		switch {
		case st.Closed:
			in.Unlock()
			return false
		case st.Client == nil:
			st.Client = c
			// Ready is decided under the lock: the handshake, which sees the
			// client under it too, puts the fence in before it lets
			// commands through; once ready, the client's own wait does.
			x := st.Ext
			ready := x != nil && x.IsReady()
			in.Unlock()
			if ready {
				in.ClientArriving(c.Ctx, x)
			}
			return true
		}
		changed := st.changed
		in.Unlock()
		select {
		case <-changed:
		case <-timer.C:
			return false
		}
	}
}

// ClientGone is called once when c's read loop ends (c is never nil). Its sessions go, and
// the debugger is detached from its tabs so that what the client switched
// on (Fetch interception, emulation, ...) does not outlive it, exactly as
// Chrome ends a session's state when its client disconnects.
func (in *Instance) ClientGone(c *ClientConn) {
	st := in.Lock()
	if c != nil && c == st.Client {
		authority.TakeNavAsksLocked(st, api.AnswerGone) // the navigations waiting for a person fail
	}
	defer heldLines.ClientGoneLocked(st, c)()
	if st.Client != c {
		in.Unlock()
		return
	}
	st.Client = nil
	st.Notify()
	x := st.Ext
	detach := st.releaseClientTabs()
	forgotten := st.leftWhileAway()
	in.Unlock()
	NotifyHandles(forgotten, api.TabEvent{Method: api.EventDetached, Params: JSONObj("reason", "extension disconnected")})
	if x == nil {
		return
	}
	in.clientLeft(x)
	for _, t := range detach {
		in.Tasks.Spawn("detach", func() { attacher.FinishDetach(in, x, t) })
	}
}

// Close ends the instance: both sockets close with reason.
func (in *Instance) Close(code int, reason string) {
	st := in.Lock()
	if st.Closed {
		in.Unlock()
		return
	}
	st.Closed = true
	x, c := st.Ext, st.Client
	st.Notify()
	in.Unlock()
	if c != nil {
		c.Close(code, reason)
	}
	if x != nil {
		x.Shutdown(code, reason)
	}
}

// WaitReady waits until an extension has connected and finished its
// handshake, or ctx ends.
func (in *Instance) WaitReady(ctx context.Context) error {
	if in.Wedged.Load() {
		return api.ErrWedged
	}
	for {
		st := in.Lock()
		x, ch, closed := st.Ext, st.changed, st.Closed
		in.Unlock()
		if closed {
			return errInstanceClosed
		}
		var ready <-chan struct{}
		if x != nil {
			if x.IsReady() {
				return nil
			}
			ready = x.Ready()
		}
		select {
		case <-ready:
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
