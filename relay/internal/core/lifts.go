package core

import (
	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/replay"
)

// What the core keeps of the client's settings lifted for a stricter page
// (the tiers lift them and put them back, and say how: their lifts.go):
// those of a tab's top-level sessions are the ones the resume keeps
// (Tab.Replay), those of a child session are kept with it (Session.Kept),
// and each owner's LiftState counts what Chrome has not answered yet, for
// the navigation held meanwhile (package navhold).

// LiftState is where one owner's settings stand in Chrome: a tab's (its
// top-level sessions') or a child session's. Guarded by the instance's
// mutex.
type LiftState struct {
	// Level: the settings lifted on this access are out of Chrome
	// (accessFull: none is).
	Level Access
	// Pending counts the commands sent to lift or put back settings (and
	// scripts for new documents) that Chrome has not answered yet;
	// critical, those of them that take out what acts on the site or
	// tells it anything (the settings lifted on read-only pages) and
	// scripts for new documents: what even a form's post, which cannot be
	// sent again, waits for (package navhold).
	Pending, Critical int
	// Held are navigations cancelled to be sent again once Pending is 0
	// (package navhold).
	Held []*HeldRequest
}

// maxKeptChild bounds the settings kept for a child session.
const maxKeptChild = 128

// SiteLevel is the access a tab's settings are lifted for.
func SiteLevel(a TabAccess) Access {
	if a.Rule == api.RuleTakeOver {
		return api.Full
	}
	return a.Level
}

// syncLifts brings what Chrome has of t's settings in line with where the
// tab is, or is on its way to (the tiers' Tiers.SettingsLocked).
func (st *State) syncLifts(t *Tab) {
	if tiers.SettingsLocked != nil {
		tiers.SettingsLocked(st, t, nil)
	}
}

// syncChildLifts does it for child session cs.
func (st *State) syncChildLifts(cs *Session) {
	if cs.Tab == nil || !st.Live(cs) || tiers.SettingsLocked == nil {
		return
	}
	tiers.SettingsLocked(st, cs.Tab, cs)
}

// ResumeLifts puts back, once a person resumed the automation, what its
// tabs and frames may have again.
func (st *State) ResumeLifts() {
	for _, t := range st.Tabs {
		st.syncLifts(t)
	}
	for _, s := range st.Sessions {
		if s.Child {
			st.syncChildLifts(s)
		}
	}
}

// keepFrameSetting keeps a setting a client sends on a child session (an
// out-of-process frame's own), to be lifted when the frame goes somewhere
// stricter.
func (c *ClientConn) keepFrameSetting(k *Cmd) {
	if !k.Route.Via.Child || !k.Policy.Tiers {
		return
	}
	c.Inst.Lock()
	c.Inst.St.keepChild(k.Route.Via, k.M, k.Params)
	c.Inst.Unlock()
}

// keepChild records a setting of child session cs's, as the resume keeps
// a tab's (replay.Keep).
func (st *State) keepChild(cs *Session, m *MethodInfo, params []byte) {
	cs.Kept = replay.Keep(cs.Kept, m.Replay, m.Name, params, maxKeptChild)
}
