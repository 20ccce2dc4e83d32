package core

import "github.com/cdprelay/cdprelay/relay/internal/api"

// The person's authority over an instance: the Stop, and who holds a tab.
// What every part honours is the core's data: Instance.IsStopped and
// State.StoppedBy, Tab.Control. What a Stop and a take-over do (refuse,
// fail, undo, tell the client) is the person's stage's, which the facade
// hands over before the order (SetAuthority); TestAssembly says it does.

// Authority is what the person's stage does for the person.
type Authority struct {
	// Stop stops the instance's automation on behalf of by; Resume lets it
	// go on.
	Stop, Resume func(in *Instance, by string) error
	// Control gives holder control of tab tabID, or gives it back
	// (release).
	Control func(in *Instance, tabID int64, holder string, release bool) error
	// AsksNavigation reports whether in's policy asks a person about the
	// hosts navigations go to.
	AsksNavigation func(in *Instance) bool
	// NavigationAskLocked decides whether a document request of t's main
	// frame to url is asked, and with what (the lock is held).
	NavigationAskLocked func(st *State, t *Tab, url string) (Decision, bool)
}

var authority Authority

// SetAuthority sets the person's stage's authority.
func SetAuthority(a Authority) {
	if CommandStages != nil {
		panic("core: the authority set after the order")
	}
	authority = a
}

// HasAuthority reports whether the authority is set, for the assembly's
// test.
func HasAuthority() bool {
	return authority.Stop != nil && authority.Resume != nil && authority.Control != nil &&
		authority.AsksNavigation != nil && authority.NavigationAskLocked != nil
}

// Stop stops the instance's automation on behalf of by (a viewer's or a
// token's name).
func (in *Instance) Stop(by string) error {
	if authority.Stop == nil {
		return api.ErrWedged
	}
	return authority.Stop(in, by)
}

// Resume lets the instance's automation go on.
func (in *Instance) Resume(by string) error {
	if authority.Resume == nil {
		return api.ErrWedged
	}
	return authority.Resume(in, by)
}

// TakeControl gives holder (a viewer's description) control of tab id.
func (in *Instance) TakeControl(tabID int64, holder string) error {
	if authority.Control == nil {
		return api.ErrWedged
	}
	return authority.Control(in, tabID, holder, false)
}

// ReleaseControl hands tab id back to automation.
func (in *Instance) ReleaseControl(tabID int64, holder string) error {
	if authority.Control == nil {
		return api.ErrWedged
	}
	return authority.Control(in, tabID, holder, true)
}

// Stopped reports whether the instance's automation is stopped, and who
// stopped it.
func (in *Instance) Stopped() (bool, string) {
	if in.Wedged.Load() {
		return false, ""
	}
	st := in.Lock()
	defer in.Unlock()
	return st.StoppedBy != "", st.StoppedBy
}

// Controller reports who controls tab id ("" when automation does).
func (in *Instance) Controller(tabID int64) string {
	if in.Wedged.Load() {
		return ""
	}
	st := in.Lock()
	defer in.Unlock()
	if t := st.Tabs[tabID]; t != nil {
		return t.Control
	}
	return ""
}
