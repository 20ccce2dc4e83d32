package core

import (
	"context"
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/outbox"
)

// State is everything an instance knows that changes: its two sockets, the
// browser it speaks for, the tabs the extension shares (the tab table,
// tabs.go) and the client's sessions (the session table, sessions.go):
// the core's own. The concerns that keep state of their own in it have
// their slots (slots.go).
//
// It has one owner, the instance's mutex, and one way in, Instance.lock: a
// function that has a *state holds the lock. Its methods decide and
// record; none calls the extension or blocks. The I/O side (package
// attach, package ext, the emulation) takes the lock to read or record and never
// holds it across a call to the extension.
type State struct {
	Inst *Instance // static: for records and configuration

	Ext         Upstream    // nil until an extension connects
	Client      *ClientConn // the one CDP client, or nil
	EverClaimed bool        // an extension connected once
	Closed      bool
	// changed is closed and replaced whenever ext, client or closed
	// changes, for those who wait on it.
	changed chan struct{}
	// grace closes the client when the extension that went does not come
	// back within ExtensionGrace (instance.go), or within SuspendTimeout
	// when it is expected back (relay/internal/away); nil when none runs.
	grace *time.Timer
	// ExtAway is set while the client waits for an extension expected
	// back (relay/internal/away).
	ExtAway *ExtWait

	TabUpdates bool            // the extension reports chrome.tabs.onUpdated (ours does)
	Features   map[string]bool // what the extension says it can do (extension.info)
	BrowserCtx string          // browserContextId reported for tabs

	Tabs        map[int64]*Tab      // the tab table: tabs the extension shares
	Sessions    map[string]*Session // the session table: client-visible id → session
	NextSession int                 // session numbers are never reused
	// tabsFull and childrenFull: a tab, a child session was refused for
	// the bound (bounds.go) and recorded; until there is room again.
	tabsFull, childrenFull bool

	// fires are commands of the relay's own decided under the lock and
	// sent, in order, once it is released (Instance.Unlock, package outbox),
	// ahead of anything sent after the release: what they set up in the
	// tab is in place before any later client command can be routed.
	fires []outbox.Fire

	// The concerns' slots.
	// The Stop, which every part of the relay honours: who stopped the
	// automation ("" while it runs), when, and the commands refused since
	// (person's stop.go). runCtx is cancelled by Stop: the emulated commands under
	// way give up; Resume makes a new one.
	StoppedBy      string
	StoppedAt      time.Time
	RefusedStopped int64
	runCtx         context.Context
	RunCancel      context.CancelFunc
	// The browser's identity (browserinfo.go).
	Info       BrowserInfo // what the extension reported, or the relay learnt
	Remembered BrowserInfo // the browser last reported, from Config.BrowserFile

	slots []any // the stages' own (slots.go), guarded like the rest
}

// Fire queues a command of the relay's own; it goes out as the lock is
// released.
func (st *State) Fire(tabID int64, sid, method string, params any) {
	st.fires = append(st.fires, outbox.Fire{TabID: tabID, Sid: sid, Method: method, Params: params})
}

// FireThen is Fire, with then run once Chrome has answered (or the
// command is over without an answer), without the lock.
func (st *State) FireThen(tabID int64, sid, method string, params any, then func()) {
	st.fires = append(st.fires, outbox.Fire{TabID: tabID, Sid: sid, Method: method, Params: params, Then: then})
}

func newState(in *Instance) State {
	st := State{
		Inst:       in,
		changed:    make(chan struct{}),
		Tabs:       make(map[int64]*Tab),
		Sessions:   make(map[string]*Session),
		BrowserCtx: RandHex(16),
		slots:      stateSlots.make(),
	}
	st.NewRunContext()
	return st
}

// newRunContext starts the context the emulated commands run under until
// the next Stop.
func (st *State) NewRunContext() {
	st.runCtx, st.RunCancel = context.WithCancel(context.Background())
}

// Notify wakes everyone waiting for a change of ext, client or closed.
func (st *State) Notify() {
	close(st.changed)
	st.changed = make(chan struct{})
	st.Inst.Srv.Changes.Notify()
}

// Observe records ev for the instance.
func (st *State) Observe(ev Event) { st.Inst.Observe(ev) }

// ResetTabs forgets every tab and session: they belonged to an extension
// connection that is gone. It returns the handles to tell, outside the
// lock.
func (st *State) ResetTabs() []*TabHandle {
	var hs []*TabHandle
	for _, t := range st.Tabs {
		st.EndAway(t)
		t.SetState(TabDetached, ErrExtGone)
		hs = append(hs, t.Handles...)
		t.Handles = nil
	}
	clear(st.Tabs)
	clear(st.Sessions)
	return hs
}

// releaseClientTabs forgets the departed client's sessions and returns the
// tabs whose debugger is to be detached. They are marked detaching here,
// rather than by the detach itself, so that a client connecting right
// after waits for the detach instead of taking over a tab about to lose
// its debugger. An attach in flight undoes itself once Chrome has done it.
func (st *State) releaseClientTabs() []*Tab {
	var detach []*Tab
	for _, t := range st.Tabs {
		st.EndAway(t)
		t.forgetReplay()
		t.Session = nil
		t.extra = nil
		t.ClientScreencast = false
		t.ForgetClientSetup()
		switch t.State {
		case TabAttached:
			t.SetState(TabDetaching, nil)
			detach = append(detach, t)
		case TabAttaching:
			t.ReleaseAfterAttach = true
		}
	}
	clear(st.Sessions)
	return detach
}
