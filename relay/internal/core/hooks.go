package core

import (
	"context"

	"github.com/cdprelay/cdprelay/relay/internal/api"
)

// What a stage may ask the core to call besides its rows (order.go), its
// emulations (emulate.go), its outcome hooks (order.go) and its slots
// (slots.go). Each is handed over from the facade's init, before the order
// is set, and read only after.

// Lifecycle is what a stage wants to hear of a tab's and a client's life
// and of the policy. The hooks named
// Locked run with the instance's lock held: they must not block or call
// the extension (State.Fire queues a command for after the lock).
type Lifecycle struct {
	// LettingGo: the relay is about to detach its debugger from t (the
	// client left, nobody uses the tab any more, or a Stop undoes what the
	// automation set), and a later debugger session will not be able to do
	// what only this one can (answer a dialog that opened under it). Called
	// without the lock; it may call the extension, bounded by the call
	// timeout.
	LettingGo func(in *Instance, x Upstream, t *Tab)
	// Attaching: the debugger is on t and Chrome said what t is; nothing
	// else was sent yet, not even Page.enable, and no request of the tab
	// was seen. Called without the lock; it may call the extension,
	// bounded by ctx. An error fails the attach (the debugger comes off).
	Attaching func(ctx context.Context, in *Instance, x Upstream, t *Tab) error
	// DocumentLocked: t's main frame committed a new document
	// (Page.frameNavigated of the tab's own session, before the core notes
	// the new URL); params are the event's.
	DocumentLocked func(st *State, t *Tab, params []byte)
	// DetachedLocked: t lost its debugger; what was kept of its requests
	// is void.
	DetachedLocked func(t *Tab)
	// ClientSetupGoneLocked: the client's sessions on t ended (its client
	// left, or the tab's sessions were dropped): what it set up that the
	// relay would put in or apply later is void.
	ClientSetupGoneLocked func(t *Tab)
	// ChildGoneLocked: child session cs of t (an out-of-process frame's or
	// a worker's) went; what was kept of it is void.
	ChildGoneLocked func(t *Tab, cs *Session)
	// ClientArriving: a client is about to be let through to x: its
	// first command (or its first since the extension came back) is read
	// once every hook returned. Called without the lock; it may call the
	// extension, bounded by ctx and a bound of its own.
	ClientArriving func(ctx context.Context, in *Instance, x Upstream)
	// ClientLeft: the instance's client left; x is the extension
	// connection it used. Called without the lock, before the relay lets
	// go of the client's tabs.
	ClientLeft func(in *Instance, x Upstream)
	// PolicyChanged: the policy in force, or what the relay knows of its
	// own origins, changed. Called without any instance's lock.
	PolicyChanged func(s *Relay)
	// Switched: client c switched domain on (X.enable) or off (X.disable)
	// on s, a tab's own session, before the switch is forwarded or
	// answered. Called without the lock.
	Switched func(c *ClientConn, s *Session, domain string, on bool)
}

var lifecycles []Lifecycle

// AddLifecycle adds a stage's lifecycle hooks.
func AddLifecycle(l Lifecycle) {
	if CommandStages != nil {
		panic("core: lifecycle hooks added after the order")
	}
	lifecycles = append(lifecycles, l)
}

// documentLocked tells the stages that t's main frame committed a new
// document.
func documentLocked(st *State, t *Tab, params []byte) {
	for _, l := range lifecycles {
		if l.DocumentLocked != nil {
			l.DocumentLocked(st, t, params)
		}
	}
}

// lettingGo tells the stages that the relay is about to detach its
// debugger from t.
func (in *Instance) LettingGo(x Upstream, t *Tab) {
	for _, l := range lifecycles {
		if l.LettingGo != nil {
			l.LettingGo(in, x, t)
		}
	}
}

// ClientArriving tells the stages that a client is about to be let
// through to x.
func (in *Instance) ClientArriving(ctx context.Context, x Upstream) {
	for _, l := range lifecycles {
		if l.ClientArriving != nil {
			l.ClientArriving(ctx, in, x)
		}
	}
}

// clientLeft tells the stages that the instance's client left.
func (in *Instance) clientLeft(x Upstream) {
	for _, l := range lifecycles {
		if l.ClientLeft != nil {
			l.ClientLeft(in, x)
		}
	}
}

// policyChanged tells the stages that the policy, or the relay's own
// origins, changed.
func (s *Relay) policyChanged() {
	for _, l := range lifecycles {
		if l.PolicyChanged != nil {
			l.PolicyChanged(s)
		}
	}
}

// Switched tells the stages that client c switched a domain on a tab's
// own session.
func (c *ClientConn) Switched(s *Session, domain string, on bool) {
	for _, l := range lifecycles {
		if l.Switched != nil {
			l.Switched(c, s, domain, on)
		}
	}
}

// Attaching lets the stages set t up before anything else is sent to it
// (Lifecycle.Attaching), once the debugger is on it.
func (in *Instance) Attaching(ctx context.Context, x Upstream, t *Tab) error {
	for _, l := range lifecycles {
		if l.Attaching != nil {
			if err := l.Attaching(ctx, in, x, t); err != nil {
				return err
			}
		}
	}
	return nil
}

// clientSetupGoneLocked tells the stages that the client's sessions on t
// ended.
func clientSetupGoneLocked(t *Tab) {
	for _, l := range lifecycles {
		if l.ClientSetupGoneLocked != nil {
			l.ClientSetupGoneLocked(t)
		}
	}
}

// childGoneLocked tells the stages that child session cs of t went.
func childGoneLocked(t *Tab, cs *Session) {
	for _, l := range lifecycles {
		if l.ChildGoneLocked != nil {
			l.ChildGoneLocked(t, cs)
		}
	}
}

// detachedLocked tells the stages that t lost its debugger.
func detachedLocked(t *Tab) {
	for _, l := range lifecycles {
		if l.DetachedLocked != nil {
			l.DetachedLocked(t)
		}
	}
}

// Scrubber is the credentials' last look at what leaves the relay: every
// frame to the client, and every text shown to a person or recorded.
// Nothing of it is optional once secrets can be typed: the facade sets it
// before the order, and TestAssembly says it does.
type Scrubber struct {
	// Frame returns the frame the client gets for b (b itself when there
	// is nothing to hide); it may take b's buffer and give another.
	Frame func(in *Instance, b *[]byte) *[]byte
	// String returns s as the client would see it.
	String func(in *Instance, s string) string
}

var scrubber Scrubber

// ScrubString returns s as the client would see it: for the audit log, the
// live view and a person's cards.
func (in *Instance) ScrubString(s string) string {
	if scrubber.String == nil {
		return s
	}
	return scrubber.String(in, s)
}

// Dialogs is the stage that keeps the JavaScript dialogs the tabs show: the
// core asks it what a tab's dialog is, for the instance's status, and
// hands it a person's answer from the live view. The facade sets it
// before the order, and TestAssembly says it does.
type Dialogs struct {
	// StatusLocked is what the status says of t's dialog (nil: none, or
	// nothing the status may show). Called with the instance's lock held.
	StatusLocked func(in *Instance, t *Tab) *api.DialogStatus
	// Answer answers the dialog id (0: whichever) that tab tabID shows, on
	// behalf of the person by.
	Answer func(in *Instance, tabID, id int64, accept bool, promptText, by string) error
}

var dialogs Dialogs

// AnswerDialog answers the dialog id (0: whichever) that tab tabID shows,
// on behalf of the person by.
func (in *Instance) AnswerDialog(tabID, id int64, accept bool, promptText, by string) error {
	if dialogs.Answer == nil {
		return api.ErrNoDialog
	}
	return dialogs.Answer(in, tabID, id, accept, promptText, by)
}

// Backstop is the navigation backstop's answer to the core (the rules
// stage's).
type Backstop struct {
	// Fences reports whether in's policy can refuse a host a navigation
	// goes to (the operator's URL fence).
	Fences func(in *Instance) bool
	// OnLocked reports whether the relay pauses the requests of t's own
	// session, so that a navigation to one of the relay's own origins
	// fails before it commits. Called with the instance's lock held.
	OnLocked func(t *Tab) bool
}

var backstop Backstop

// backstopped reports whether the backstop pauses t's own requests.
func backstopped(t *Tab) bool { return backstop.OnLocked != nil && backstop.OnLocked(t) }

// Tiers is the tiers stage's share of a tab's access (package tiers):
// what the policy gives a page, what a change of access does in the tab
// and tells the client, and the client's settings and scripts lifted on a
// stricter page and put back. The core keeps the access (Tab.Acc,
// Session.Acc) and the frames and navigations it is decided from, and
// reads no tier of the policy itself. The hooks named Locked are called
// with the instance's lock held: they must not block, and what they send
// goes through State.Fire and State.FireThen.
type Tiers struct {
	// Has reports whether policy p gives any site a tier for in.
	Has func(in *Instance, p Policy) bool
	// TabLocked decides t's access from the document it shows (or is on
	// its way to), its frames, its holder and the policy. For a tab the
	// instance does not hold (State.UrlAccess's: what a navigation to a
	// URL would make of a tab) it reads only that tab and the policy, and
	// may be called without the lock.
	TabLocked func(st *State, t *Tab) TabAccess
	// FrameLocked is what automation may do with a child session's frame
	// at u.
	FrameLocked func(st *State, u string) TabAccess
	// NavLocked is the access the tiers give the page a frame is on its
	// way to (to is not "").
	NavLocked func(st *State, to string) TabAccess
	// ChangedLocked does in t what a change of its access from was asks
	// (State.UpdateAccess recorded it in t.Acc).
	ChangedLocked func(st *State, t *Tab, was TabAccess)
	// TellLocked tells the client and the audit log that t's access
	// changed from was.
	TellLocked func(st *State, t *Tab, was TabAccess)
	// ScriptsLocked takes out of Chrome the scripts of t (which has some)
	// whose frame is on its way to a site that is not full, and puts back
	// the others.
	ScriptsLocked func(st *State, t *Tab)
	// SettingsLocked brings what Chrome has of the settings of t's
	// top-level sessions (cs nil) or of child session cs in line with
	// where it is, or is on its way to.
	SettingsLocked func(st *State, t *Tab, cs *Session)
	// SetFrameLocked records that t's in-process sub-frame id is now at
	// url ("" when it is gone) and decides t's access again: for a
	// document the tab came back to, whose frames no event told
	// (relay/internal/away).
	SetFrameLocked func(st *State, t *Tab, id, url string)
	// ChildLocked decides child session cs's access again where it is.
	ChildLocked func(st *State, cs *Session)
}

var tiers Tiers
