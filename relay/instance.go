package relay

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/cdprelay/cdprelay/relay/internal/browser"
)

// Close reasons sent to a CDP client. They are part of the interface: a
// client's error message shows them.
const (
	reasonExtNotConnected = "Extension not connected"
	reasonExtGonePrefix   = "Extension disconnected: "
	reasonAllTabsDetached = "All controlled tabs detached"
	reasonSecondClient    = "Another CDP client is already connected to this instance"
	reasonShutdown        = "cdprelay is shutting down"
	reasonReplaced        = "replaced by a new extension connection"
)

// Instance is one extension connection (one browser profile) with at most
// one CDP client.
//
// What changes lives in st (state.go), reached only through lock; the
// rest is static after construction. The fields declared here are the
// core's own; what a concern keeps of an instance is its slot, embedded at
// the end: personInstance (personslots.go), credsInstance (credsslots.go),
// tierInstance (tierslots.go), browserInstance (browserslots.go).
type Instance struct {
	srv        *Relay       // static
	id         string       // static: public handle
	guid       string       // static: secret capability
	isDefault  bool         // static
	profile    string       // static: the policy profile ("" for the global policy)
	log        *slog.Logger // static
	created    time.Time    // static
	browserTID string       // static: the browser target's id

	// owner is the tenant ("": the operator's); set once more at most,
	// when a tenant's extension pairs an instance minted for nobody.
	owner ownerBox
	// paired: an extension has been let in once (tenants.go).
	paired atomic.Bool

	mu sync.Mutex
	st state // guarded by mu; see lock
	// holder is the goroutine holding mu (curG; 0: none), set by lock and
	// cleared by unlock, so that a panic's recovery knows whether the code
	// that panicked holds the lock (tasks.go).
	holder atomic.Uintptr
	// out carries what critical sections queued for the extension once
	// they release the lock (outbox.go).
	out outbox

	tasks tasks // background work: see tasks.go

	childSessions atomic.Int64 // child sessions (frames, workers) ever routed

	// wedged: a panic left the lock held (tasks.go); nothing may take it.
	wedged atomic.Bool

	// resumeWaits counts the commands waiting for their tab's resume
	// (pipeline.go), for tests.
	resumeWaits atomic.Int32

	// The concerns' slots.
	personInstance  // the Stop and the brakes (personslots.go)
	credsInstance   // the lock, streams, URL passwords (credsslots.go)
	tierInstance    // blind stand-ins' contexts (tierslots.go)
	browserInstance // learning the browser (browserslots.go)
}

// BrowserInfo is what the extension reports about its browser.
type BrowserInfo = browser.Info

func newInstance(s *Relay, guid string, isDefault bool, profile string) *Instance {
	id := randHex(6)
	in := &Instance{
		srv:        s,
		id:         id,
		guid:       guid,
		isDefault:  isDefault,
		profile:    profile,
		log:        s.cfg.Logger.With("instance", id),
		created:    time.Now(),
		browserTID: randHex(16),
	}
	in.st = newState(in)
	in.out.in = in
	in.fakeContext.Store(1 << 30)
	in.tasks.init(in)
	return in
}

// lock takes the instance's mutex and returns its state: the one way to
// read or change what the instance knows. Release it with unlock, and
// never call the extension or block in between: what runs under the lock
// is named ...Locked where it is a hook called with it held (a caller's
// critical section), and queues commands for the extension with
// state.fire rather than send them.
func (in *Instance) lock() *state {
	in.mu.Lock()
	in.holder.Store(curG())
	return &in.st
}

// unlock releases the lock; then the commands the critical section queued
// (state.fire) go to the extension through the outbox, with the lock
// free: no later command overtakes them (outbox), and waiting for room in
// the extension's queue stops nobody who wants the lock.
func (in *Instance) unlock() {
	st := &in.st
	queued := len(st.fires) > 0
	if queued {
		in.out.putLocked(st.ext, st.fires)
		clear(st.fires)
		st.fires = st.fires[:0]
	}
	in.holder.Store(0)
	in.mu.Unlock()
	if queued {
		in.out.flush()
	}
}

// ID is the instance's public handle.
func (in *Instance) ID() string { return in.id }

// GUID is the secret that the instance's capability URLs carry.
func (in *Instance) GUID() string { return in.guid }

// Profile is the policy profile the instance's commands are judged by ("":
// the global policy), so that what reaches its tabs by another way (the
// live view's navigate) is judged by the same one.
func (in *Instance) Profile() string { return in.profile }

// Info returns what the extension reported about its browser.
func (in *Instance) Info() BrowserInfo {
	if in.wedged.Load() {
		return BrowserInfo{}
	}
	st := in.lock()
	defer in.unlock()
	return st.info
}

var (
	errInstanceClosed  = errors.New("instance closed")
	errExtNotConnected = errors.New(reasonExtNotConnected)
	errIdle            = errors.New("cdprelay: the client sent nothing for too long (IdleClientTimeout)")
)

// acceptExtension makes x the instance's extension connection. An older
// one is replaced: a restarted service worker reconnects before the old
// socket has timed out. A client keeps its connection, as when the
// extension comes back after it went (extensionGone).
func (in *Instance) acceptExtension(x *extConn) bool {
	st := in.lock()
	if st.closed {
		in.unlock()
		return false
	}
	old, client := st.ext, st.client
	st.ext = x
	st.everClaimed = true
	st.stopGrace()
	st.extAway = nil // back: the tabs that wait for it are resumed as it offers them (awayext.go)
	var gone []*TabHandle
	var waiting map[int64]bool
	keep := true
	switch {
	case old != nil && client != nil && st.expectBack(websocket.CloseGoingAway):
		// Our extension's worker restarted: its tabs come back with the
		// new connection.
		gone, waiting = st.awaitExtension()
	case old != nil:
		keep = client != nil && in.srv.cfg.ExtensionGrace > 0
		gone = st.endTabs(client, keep, reasonReplaced)
	}
	st.notify()
	in.unlock()
	notifyHandles(gone, TabEvent{Method: EventDetached, Params: jsonObj("reason", "extension disconnected")})
	if old != nil {
		old.failDetached(waiting)
		old.p.Shutdown(websocket.CloseNormalClosure, reasonReplaced)
		old.end()
		if client != nil && !keep {
			client.close(websocket.CloseGoingAway, reasonExtGonePrefix+reasonReplaced)
		}
	}
	return true
}

// extensionGone is called once when x's read loop ends. A client stays
// for the configured ExtensionGrace: a reloaded or updated extension is
// back within a second, and then the client carries on with the tabs it
// offers again (as new targets); its commands meanwhile wait for it.
//
// Our extension, when its worker stopped or it restarted (code), is
// expected back: the client stays for longer, its tab sessions waiting
// (awayext.go).
func (in *Instance) extensionGone(x *extConn, reason string, code int) {
	st := in.lock()
	if st.ext != x {
		in.unlock()
		x.end()
		return
	}
	st.ext = nil
	client := st.client
	if in.keepForExtension(st, x, client, reason, code) {
		return
	}
	keep := client != nil && in.srv.cfg.ExtensionGrace > 0 && !st.closed
	gone := st.endTabs(client, keep, reason)
	if keep {
		st.startGrace(client, reason)
	}
	st.notify()
	in.unlock()
	// Only now: the client has been told its sessions ended, so that a
	// command that fails with them reads as a closed target.
	x.end()
	notifyHandles(gone, TabEvent{Method: EventDetached, Params: jsonObj("reason", "extension disconnected")})
	if client != nil && !keep {
		client.close(websocket.CloseGoingAway, reasonExtGonePrefix+reason)
	}
}

// endTabs forgets every tab of an extension connection that is gone,
// telling the client that their sessions ended and why. The client stays
// when keep (its browser sessions with it); otherwise it is no longer the
// instance's, and the caller closes it. It returns the handles to tell,
// outside the lock.
func (st *state) endTabs(c *clientConn, keep bool, reason string) []*TabHandle {
	why := "the cdprelay extension disconnected (" + reason + ")"
	if keep {
		why = whyExtensionRestart
	}
	var hs []*TabHandle
	if c != nil {
		for _, t := range st.sortedTabs() {
			hs = append(hs, st.removeTab(t, why)...)
		}
	}
	if !keep {
		st.client = nil
	}
	var browser []*session
	if keep {
		for _, s := range st.sessions {
			if s.tab == nil {
				browser = append(browser, s)
			}
		}
	}
	hs = append(hs, st.resetTabs()...)
	for _, s := range browser {
		st.sessions[s.id] = s
	}
	return hs
}

// startGrace closes client once ExtensionGrace has passed, unless an
// extension has connected again by then.
func (st *state) startGrace(c *clientConn, reason string) {
	st.stopGrace()
	in := st.in
	st.grace = time.AfterFunc(in.srv.cfg.ExtensionGrace, func() { in.graceOver(c, reason) })
}

func (st *state) stopGrace() {
	if st.grace != nil {
		st.grace.Stop()
		st.grace = nil
	}
}

func (in *Instance) graceOver(c *clientConn, reason string) {
	if in.wedged.Load() {
		return // its sockets are closed already, and its lock is not to be taken
	}
	st := in.lock()
	if st.client != c || st.ext != nil || st.closed {
		in.unlock()
		return
	}
	st.client = nil
	st.grace = nil
	st.notify()
	in.unlock()
	in.log.Info("the extension did not come back in time; closing the client", "grace", in.srv.cfg.ExtensionGrace)
	c.close(websocket.CloseGoingAway, reasonExtGonePrefix+reason)
}

// waitReady waits until the extension has finished its handshake and
// returns its connection. It gives up after the configured ExtensionWait,
// when ctx ends, or when the instance closes.
func (in *Instance) waitReady(ctx context.Context) (*extConn, error) {
	ctx, cancel := context.WithTimeout(ctx, in.readyWait())
	defer cancel()
	for {
		if err := in.WaitReady(ctx); err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				return nil, errExtNotConnected
			}
			return nil, err
		}
		st := in.lock()
		x := st.ext
		in.unlock()
		if x != nil && x.isReady() {
			return x, nil
		}
	}
}

// clientHandover is how long a new client waits for the previous one's
// connection to end before it is refused.
const clientHandover = 500 * time.Millisecond

// attachClient makes c the instance's CDP client, unless another one is
// connected. A client that reconnects at once can arrive before the relay
// has read its old socket's close: it waits, for clientHandover, for the
// old one to go before it is refused as a second client.
func (in *Instance) attachClient(c *clientConn) bool {
	timer := time.NewTimer(clientHandover)
	defer timer.Stop()
	for {
		st := in.lock()
		switch {
		case st.closed:
			in.unlock()
			return false
		case st.client == nil:
			st.client = c
			// Ready is decided under the lock: the handshake, which sees the
			// client under it too, puts the fence in before it lets
			// commands through; once ready, the client's own wait does.
			x := st.ext
			ready := x != nil && x.isReady()
			in.unlock()
			if ready {
				in.setNetFenceWait(c.ctx, x)
			}
			return true
		}
		changed := st.changed
		in.unlock()
		select {
		case <-changed:
		case <-timer.C:
			return false
		}
	}
}

// clientGone is called once when c's read loop ends. Its sessions go, and
// the debugger is detached from its tabs so that what the client switched
// on (Fetch interception, emulation, ...) does not outlive it, exactly as
// Chrome ends a session's state when its client disconnects.
func (in *Instance) clientGone(c *clientConn) {
	st := in.lock()
	held := st.takeHeld(c)
	defer func() {
		for _, h := range held {
			h.answer(heldGone, "")
		}
	}()
	if st.client != c {
		in.unlock()
		return
	}
	st.client = nil
	st.notify()
	x := st.ext
	detach := st.releaseClientTabs()
	forgotten := st.leftWhileAway()
	in.unlock()
	notifyHandles(forgotten, TabEvent{Method: EventDetached, Params: jsonObj("reason", "extension disconnected")})
	if x == nil {
		return
	}
	in.setNetFence(x, false)
	for _, t := range detach {
		in.tasks.spawn("detach", func() { in.finishDetach(x, t) })
	}
}

// close ends the instance: both sockets close with reason.
func (in *Instance) close(code int, reason string) {
	st := in.lock()
	if st.closed {
		in.unlock()
		return
	}
	st.closed = true
	x, c := st.ext, st.client
	st.notify()
	in.unlock()
	if c != nil {
		c.close(code, reason)
	}
	if x != nil {
		x.p.Shutdown(code, reason)
	}
}

// WaitReady waits until an extension has connected and finished its
// handshake, or ctx ends.
func (in *Instance) WaitReady(ctx context.Context) error {
	if in.wedged.Load() {
		return ErrWedged
	}
	for {
		st := in.lock()
		x, ch, closed := st.ext, st.changed, st.closed
		in.unlock()
		if closed {
			return errInstanceClosed
		}
		var ready <-chan struct{}
		if x != nil {
			if x.isReady() {
				return nil
			}
			ready = x.ready
		}
		select {
		case <-ready:
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
