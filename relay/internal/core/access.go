package core

import "github.com/cdprelay/cdprelay/relay/internal/api"

// What automation may do with a tab, decided by where the tab is right now
// and by who holds it.
//
//   - full: everything the policy allows;
//   - read-only: the automation may read the tab but not act on it — no
//     input, no navigation, no DOM writes, no script with side effects. A
//     person holding the tab from the live view makes it read-only;
//   - blind: the automation sees nothing of the tab and may only leave it:
//     navigate it away (through the URL fence), detach, or close a tab it
//     opened. A tab on a page that is never shared (a file, a browser or
//     extension page) is blind, and so is a tab that went somewhere the
//     URL fence refuses (a page restored from the back/forward cache makes
//     no request the backstop could stop).
//
// The access of a tab is kept with the tab and decided again whenever its
// top-level URL, its holder or the policy changes (State.UpdateAccess);
// the tiers stage decides it (Tiers.TabLocked) and does what a change asks
// (Tiers.ChangedLocked, Tiers.TellLocked).
// The command side consults it in the pipeline's access stage; the event
// side withholds a blind tab's events (events.go) and replaces with an
// error the reply of any command that was still running when the tab went
// blind, since it may have run in the new page (tab.blindEpoch).

// Access is a tab's level (api.Level), by the names the relay gives them.
type Access = api.Level

// TabAccess is a tab's access with the reason a refusal gives (api.Access).
type TabAccess = api.Access

// computeAccess decides t's access from the document it shows, its holder
// and the policy (the tiers' Tiers.TabLocked). Without the tiers' stage,
// everything is full.
func (st *State) computeAccess(t *Tab) TabAccess {
	if tiers.TabLocked == nil {
		return TabAccess{}
	}
	return tiers.TabLocked(st, t)
}

// navAccess is the access the tiers give the page a frame is on its way
// to ("" for none).
func (st *State) navAccess(to string) TabAccess {
	if to == "" || tiers.NavLocked == nil {
		return TabAccess{}
	}
	return tiers.NavLocked(st, to)
}

// HasTiers reports whether the instance's policy gives any site a tier.
func (in *Instance) HasTiers() bool {
	return tiers.Has != nil && tiers.Has(in, in.Srv.PolicyBox.Load())
}

// UpdateAccess decides t's access again and records a change. Going blind
// moves the tab's blind epoch on, so that replies to commands sent before
// are withheld. It reports the access before the change.
func (st *State) UpdateAccess(t *Tab) (was TabAccess, changed bool) {
	now := st.computeAccess(t)
	was = t.Acc
	if now == was {
		return was, false
	}
	t.Acc = now
	if now.Level == api.Blind && was.Level != api.Blind {
		t.WentBlind()
	}
	if tiers.ChangedLocked != nil {
		tiers.ChangedLocked(st, t, was)
	}
	return was, true
}

// hidesURL reports whether a tab's address-bar URL is one discovery must
// reduce to its origin, whatever the document shows (a page never shared
// that the tab is on its way to, say).
func (st *State) hidesURL(raw string) bool {
	return st.UrlAccess(raw).Level == api.Blind
}

// UrlAccess is the access a tab would have on raw (with nobody holding
// it): what a navigation there would make of the tab. The automation may
// not navigate into a page it could not see.
func (st *State) UrlAccess(raw string) TabAccess {
	return st.computeAccess(&Tab{DocURL: raw})
}

// AccessChanged tells the client and the audit log that t's access
// changed from was (the tiers' Tiers.TellLocked).
func (st *State) AccessChanged(t *Tab, was TabAccess) {
	if tiers.TellLocked != nil {
		tiers.TellLocked(st, t, was)
	}
}

// refreshAccess decides every tab's access again after the policy, or the
// relay's own origins, changed.
func (s *Relay) refreshAccess() {
	for _, in := range s.Instances() {
		st := in.Lock()
		for _, t := range st.Tabs {
			if was, changed := st.UpdateAccess(t); changed {
				st.AccessChanged(t, was)
			}
		}
		for _, s := range st.Sessions {
			if s.Child {
				st.ChildAgain(s) // a frame in a process of its own
			}
		}
		in.Unlock()
	}
}

// ShownOrigin is the origin a blind tab shows the client: where it is on
// its way to, when that is what made it blind, or where it is.
func (t *Tab) ShownOrigin() string {
	if t.NavTo != "" {
		return api.Origin(t.NavTo)
	}
	return api.Origin(t.DocURL)
}

func AccessRefusal(acc TabAccess) Decision {
	return Decision{Verdict: Deny, Rule: acc.Rule, Message: "cdprelay: " + acc.Level.String() + ": " + acc.Why}
}

// Fencing reports whether navigations of this instance need the
// navigation backstop (the rules stage's): when the fence can refuse a
// host, when some sites have a tier (whatever the client set up is lifted
// before a stricter page commits), and when a person is asked about hosts
// (where a navigation ends is asked).
func (in *Instance) Fencing() bool {
	return backstop.Fences != nil && backstop.Fences(in) || in.HasTiers() || in.AsksNavigation()
}
