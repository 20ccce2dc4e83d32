package relay

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
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
type Instance struct {
	srv       *Server      // static
	id        string       // static: public handle
	guid      string       // static: secret capability
	isDefault bool         // static
	profile   string       // static: the policy profile ("" for the global policy)
	log       *slog.Logger // static
	created   time.Time    // static

	mu          sync.Mutex
	ext         *extConn            // guarded by mu; nil until an extension connects
	client      *clientConn         // guarded by mu
	everClaimed bool                // guarded by mu: an extension connected once
	closed      bool                // guarded by mu
	changed     chan struct{}       // guarded by mu; closed and replaced when ext or closed changes
	tabs        map[int64]*tab      // guarded by mu: tabs the extension shares
	sessions    map[string]*session // guarded by mu: client-visible session id → session
	nextSession int                 // guarded by mu; session numbers are never reused
	info        BrowserInfo         // guarded by mu
	browserCtx  string              // guarded by mu: browserContextId reported for tabs
	browserTID  string              // static after construction: the browser target's id
	emu         instanceEmu         // see targets.go

	childSessions atomic.Int64 // child sessions (frames, workers) ever routed
}

// BrowserInfo is what the extension reports about its browser.
type BrowserInfo struct {
	Product   string `json:"product"`
	UserAgent string `json:"userAgent"`
	Version   string `json:"version"`
}

func newInstance(s *Server, guid string, isDefault bool) *Instance {
	id := randHex(6)
	return &Instance{
		srv:        s,
		id:         id,
		guid:       guid,
		isDefault:  isDefault,
		log:        s.cfg.Logger.With("instance", id),
		created:    time.Now(),
		changed:    make(chan struct{}),
		tabs:       make(map[int64]*tab),
		sessions:   make(map[string]*session),
		browserCtx: randHex(16),
		browserTID: randHex(16),
	}
}

// ID is the instance's public handle.
func (in *Instance) ID() string { return in.id }

// GUID is the secret that the instance's capability URLs carry.
func (in *Instance) GUID() string { return in.guid }

// notifyLocked wakes everyone waiting for a state change.
func (in *Instance) notifyLocked() {
	close(in.changed)
	in.changed = make(chan struct{})
}

// Info returns what the extension reported about its browser.
func (in *Instance) Info() BrowserInfo {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.info
}

// acceptExtension makes x the instance's extension connection. An older
// one is replaced: a restarted service worker reconnects before the old
// socket has timed out.
func (in *Instance) acceptExtension(x *extConn) bool {
	in.mu.Lock()
	if in.closed {
		in.mu.Unlock()
		return false
	}
	old, oldClient := in.ext, in.client
	in.ext = x
	in.everClaimed = true
	notify := func() {}
	if old != nil {
		notify = in.resetTabsLocked()
		in.client = nil
	}
	in.notifyLocked()
	in.mu.Unlock()
	notify()
	if old != nil {
		old.p.shutdown(websocket.CloseNormalClosure, reasonReplaced)
		old.end()
		if oldClient != nil {
			oldClient.close(websocket.CloseGoingAway, reasonExtGonePrefix+reasonReplaced)
		}
	}
	return true
}

// extensionGone is called once when x's read loop ends.
func (in *Instance) extensionGone(x *extConn, reason string) {
	x.end()
	in.mu.Lock()
	if in.ext != x {
		in.mu.Unlock()
		return
	}
	in.ext = nil
	client := in.client
	in.client = nil
	notify := in.resetTabsLocked()
	in.notifyLocked()
	in.mu.Unlock()
	notify()
	if client != nil {
		client.close(websocket.CloseGoingAway, reasonExtGonePrefix+reason)
	}
}

// resetTabsLocked forgets every tab and session: they belonged to an
// extension connection that is gone.
func (in *Instance) resetTabsLocked() (notify func()) {
	var hs []*TabHandle
	for _, t := range in.tabs {
		t.setState(tabDetached, errExtGone)
		hs = append(hs, t.handles...)
		t.handles = nil
	}
	clear(in.tabs)
	clear(in.sessions)
	return func() {
		notifyHandles(hs, TabEvent{Method: EventDetached, Params: jsonObj("reason", "extension disconnected")})
	}
}

// waitReady waits until the extension has finished its handshake and
// returns its connection. It gives up after the configured ExtensionWait,
// when ctx ends, or when the instance closes.
func (in *Instance) waitReady(ctx context.Context) (*extConn, error) {
	ctx, cancel := context.WithTimeout(ctx, in.srv.cfg.ExtensionWait)
	defer cancel()
	for {
		if err := in.WaitReady(ctx); err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				return nil, errExtNotConnected
			}
			return nil, err
		}
		in.mu.Lock()
		x := in.ext
		in.mu.Unlock()
		if x != nil && x.isReady() {
			return x, nil
		}
	}
}

var (
	errInstanceClosed  = errors.New("instance closed")
	errExtNotConnected = errors.New(reasonExtNotConnected)
	errIdle            = errors.New("cdprelay: the client sent nothing for too long (IdleClientTimeout)")
)

// attachClient makes c the instance's CDP client, unless another one is
// connected.
func (in *Instance) attachClient(c *clientConn) bool {
	// A client that reconnects at once can arrive before the relay has read
	// its old socket's close: give the old one a moment to go before
	// refusing the new one as a second client.
	deadline := time.Now().Add(clientHandover)
	for {
		in.mu.Lock()
		switch {
		case in.closed:
			in.mu.Unlock()
			return false
		case in.client == nil:
			in.client = c
			in.mu.Unlock()
			return true
		}
		in.mu.Unlock()
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// clientHandover is how long a new client waits for the previous one's
// connection to end before it is refused.
const clientHandover = 500 * time.Millisecond

// clientGone is called once when c's read loop ends. Its sessions go, and
// the debugger is detached from its tabs so that what the client switched
// on (Fetch interception, emulation, ...) does not outlive it, exactly as
// Chrome ends a session's state when its client disconnects.
func (in *Instance) clientGone(c *clientConn) {
	in.mu.Lock()
	if in.client != c {
		in.mu.Unlock()
		return
	}
	in.client = nil
	x := in.ext
	var detach []*tab
	for _, t := range in.tabs {
		t.session = nil
		t.clientScreencast = false
		switch t.state {
		case tabAttached:
			// Marked here rather than in the goroutine, so that a client
			// connecting right after waits for the detach instead of
			// taking over a tab about to lose its debugger.
			t.setState(tabDetaching, nil)
			detach = append(detach, t)
		case tabAttaching:
			// The attach in flight undoes itself once Chrome has done it.
			t.releaseAfterAttach = true
		}
	}
	clear(in.sessions)
	in.mu.Unlock()
	if x == nil {
		return
	}
	for _, t := range detach {
		go in.finishDetach(x, t)
	}
}

// close ends the instance: both sockets close with reason.
func (in *Instance) close(code int, reason string) {
	in.mu.Lock()
	if in.closed {
		in.mu.Unlock()
		return
	}
	in.closed = true
	x, c := in.ext, in.client
	in.notifyLocked()
	in.mu.Unlock()
	if c != nil {
		c.close(code, reason)
	}
	if x != nil {
		x.p.shutdown(code, reason)
	}
}

// Status is a snapshot of an instance for status pages and tests.
type Status struct {
	ID        string      `json:"id"`
	Profile   string      `json:"profile,omitempty"`
	Default   bool        `json:"default"`
	Extension bool        `json:"extension"`
	Ready     bool        `json:"ready"`
	Client    bool        `json:"client"`
	Browser   BrowserInfo `json:"browser"`
	Tabs      []TabStatus `json:"tabs"`
	// ChildSessions counts the child sessions (out-of-process frames,
	// workers) routed since the instance started.
	ChildSessions int64 `json:"childSessions"`
}

// TabStatus describes one shared tab.
type TabStatus struct {
	TabID    int64  `json:"tabId"`
	TargetID string `json:"targetId,omitempty"`
	URL      string `json:"url"`
	Title    string `json:"title"`
	Attached bool   `json:"attached"`
	// Detached is why the browser last detached the debugger from the tab
	// while it stayed shared (target_closed when a frame navigated where
	// the debugger cannot follow); empty once it is attached again.
	Detached string `json:"detached,omitempty"`
	Session  string `json:"sessionId,omitempty"`
}

// Status returns a snapshot of the instance.
func (in *Instance) Status() Status {
	in.mu.Lock()
	defer in.mu.Unlock()
	st := Status{
		Profile:   in.profile,
		ID:        in.id,
		Default:   in.isDefault,
		Extension: in.ext != nil,
		Ready:     in.ext != nil && in.ext.isReady(),
		Client:    in.client != nil,
		Browser:   in.info,

		ChildSessions: in.childSessions.Load(),
	}
	for _, t := range in.sortedTabsLocked() {
		ts := TabStatus{TabID: t.id, TargetID: t.targetID, URL: t.url, Title: t.title, Attached: t.state == tabAttached, Detached: t.detachReason}
		if t.session != nil {
			ts.Session = t.session.id
		}
		st.Tabs = append(st.Tabs, ts)
	}
	return st
}

// WaitReady waits until an extension has connected and finished its
// handshake, or ctx ends.
func (in *Instance) WaitReady(ctx context.Context) error {
	for {
		in.mu.Lock()
		x, ch, closed := in.ext, in.changed, in.closed
		in.mu.Unlock()
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
