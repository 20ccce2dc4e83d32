package core

import (
	"strings"
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/access"
	"github.com/cdprelay/cdprelay/relay/internal/api"
)

func timeNowMilli() int64 { return time.Now().UnixMilli() }

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
// top-level URL, its holder or the policy changes (state.updateAccess).
// The command side consults it in the pipeline's access stage; the event
// side withholds a blind tab's events (events.go) and replaces with an
// error the reply of any command that was still running when the tab went
// blind, since it may have run in the new page (tab.blindEpoch).

// Access is a tab's level (api.Level), by the names the relay gives them.
type Access = api.Level

// TabAccess is a tab's access with the reason a refusal gives (api.Access).
type TabAccess = api.Access

// Rule ids of the access stage.
const (
	RuleNeverShared   = "relay:page-never-shared"
	ruleOutsideFence  = "relay:outside-allowed-hosts"
	ruleTakeOverRead  = api.RuleTakeOver
	ruleReadOnlyWrite = "relay:read-only"
	RuleBlindFrame    = "relay:blind-frame"
)

// computeAccess decides t's access from the document it shows, its holder
// and the policy.
func (st *State) computeAccess(t *Tab) TabAccess {
	in := st.Inst
	u := t.DocURL
	if u == "" {
		u = t.Url
	}
	web, special := api.PageScheme(u)
	switch {
	case !web && !special:
		return TabAccess{Level: api.Blind, Rule: RuleNeverShared,
			Why: "the tab shows " + api.SchemeOf(u) + " page, which is never shared with automation; navigate it to a web page or close it"}
	case web && in.Srv.OwnURL(u):
		a, _ := in.Srv.ownAccess(u, "the tab")
		return a
	case web && in.Fencing():
		if d := in.Srv.PolicyBox.Load().URL(in.ProfileName, u); d.Verdict != Allow {
			return TabAccess{Level: api.Blind, Rule: ruleOutsideFence,
				Why: "the tab is on " + api.Origin(u) + ", outside the hosts automation may use (" + strings.TrimPrefix(d.Message, "Denied by cdprelay policy: ") + "); navigate it back"}
		}
	}
	var a TabAccess
	if web {
		a = st.tierAccess(u)
		gen := in.Srv.AccessGen.Load()
		for id, f := range t.Frames {
			if f.Gen != gen {
				// What decides a site's access changed since.
				f.Acc, f.Gen = st.ChildAccess(f.Url), gen
				t.Frames[id] = f
			}
			if fa := f.Acc; fa.Level > a.Level {
				a = fa
				a.Why = "a frame of the page is on another site: " + a.Why
			}
		}
	}
	// On its way to a site automation may see less of: that counts from
	// the moment it is known (the URL fence has its own ways to stop the
	// navigation, and a refused one commits an error page).
	if to := st.navAccess(t.navTo); to.Level > a.Level {
		a = to
	}
	if (len(t.BlindFrames) >= MaxPendingFrames || len(t.BlindReqs) >= MaxPendingFrames) && a.Level < api.Blind {
		a = TabAccess{Level: api.Blind, Rule: RuleBlindFrame, Why: "the page has more frames on their way to sites hidden from automation than the relay follows"}
	}
	if a.Level != api.Full {
		return a
	}
	if t.Control != "" {
		return TabAccess{Level: api.ReadOnly, Rule: ruleTakeOverRead, Why: api.MsgControlledWhy}
	}
	return TabAccess{}
}

// navAccess is the access the tiers give the page a frame is on its way
// to ("" for none).
func (st *State) navAccess(to string) TabAccess {
	if to == "" {
		return TabAccess{}
	}
	if web, _ := api.PageScheme(to); !web {
		return TabAccess{}
	}
	a := st.tierAccess(to)
	if a.Level > api.Full {
		a.Why = "it is on its way to a page where " + a.Why
	}
	return a
}

// tierAccess is the access the policy's tiers give the page at u.
func (st *State) tierAccess(u string) TabAccess {
	in := st.Inst
	tr, ok := in.Srv.PolicyBox.Load().(api.TierRuler)
	if !ok {
		return TabAccess{}
	}
	switch tier, rule, host := tr.Tier(in.ProfileName, u); tier {
	case "blind":
		return TabAccess{Level: api.Blind, Rule: rule, Why: host + " is blind to automation (tier blind): it sees nothing of it and may only navigate away, detach, or close a tab it opened"}
	case "read-only":
		return TabAccess{Level: api.ReadOnly, Rule: rule, Why: host + " is read-only to automation (tier read-only): it may read the page but not act on it"}
	}
	return TabAccess{}
}

// HasTiers reports whether the instance's policy gives any site a tier.
func (in *Instance) HasTiers() bool {
	tr, ok := in.Srv.PolicyBox.Load().(api.TierRuler)
	return ok && tr.HasTiers(in.ProfileName)
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
		// Replies of commands still running are withheld, and the live
		// view forgets the tab's last frame, which shows it.
		t.blindEpoch.Add(1)
		NotifyHandles(t.Handles, api.TabEvent{Method: api.EventHidden})
	}
	st.SyncScripts(t)
	st.syncLifts(t)
	if now.Level == api.Full {
		st.replaySets(t)
	}
	t.ReadOnly.Store(now.Level == api.ReadOnly)
	switch {
	case now.Level == api.ReadOnly && (was.Level != api.ReadOnly || now.Why != was.Why):
		// A fresh layer of the guard in every isolated world it has, with
		// the reason its refusals give (a person taking over a read-only
		// site's tab changes it).
		if t.Guard != nil {
			off := t.Guard.OffScript()
			for sid, ids := range t.isolatedContexts() {
				for _, id := range ids {
					st.Fire(t.Id, sid, "Runtime.evaluate", map[string]any{"expression": off, "contextId": id, "silent": true})
				}
			}
		}
		l, src := access.NewGuard(RandHex(16), now.Why)
		t.Guard = &l
		for sid, ids := range t.isolatedContexts() {
			for _, id := range ids {
				st.Fire(t.Id, sid, "Runtime.evaluate", map[string]any{"expression": src, "contextId": id, "silent": true})
			}
		}
	case was.Level == api.ReadOnly && now.Level != api.ReadOnly && t.Guard != nil:
		off := t.Guard.OffScript()
		for sid, ids := range t.isolatedContexts() {
			for _, id := range ids {
				st.Fire(t.Id, sid, "Runtime.evaluate", map[string]any{"expression": off, "contextId": id, "silent": true})
			}
		}
		t.Guard = nil
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

// accessChanged tells the client and the audit log that t's access
// changed from was.
func (st *State) AccessChanged(t *Tab, was TabAccess) {
	st.Observe(Event{Actor: api.ActorRelay, Kind: api.KindAccess, Target: t.TargetID, Rule: t.Acc.Rule, Outcome: api.OutcomeOK,
		Detail: was.Level.String() + " -> " + t.Acc.Level.String() + " on " + api.Origin(t.DocURL)})
	c := st.Client
	if c == nil || t.Session == nil {
		return
	}
	enteringBlind := t.Acc.Level == api.Blind && was.Level != api.Blind
	leavingBlind := was.Level == api.Blind && t.Acc.Level != api.Blind
	ctxID := st.Inst.FakeContext.Add(1)
	for _, s := range st.topSessions(t) {
		if leavingBlind && s.Enabled["Runtime"] {
			// The contexts it was shown while blind are gone.
			c.EventRaw("Runtime.executionContextsCleared", s, nil)
		}
		if t.Acc.Rule != ruleTakeOverRead && was.Rule != ruleTakeOverRead {
			text := "cdprelay: automation has " + t.Acc.Level.String() + " access to this tab again"
			if t.Acc.Level != api.Full {
				text = "cdprelay: this tab is now " + t.Acc.Level.String() + " to automation: " + t.Acc.Why
			}
			c.Event("Log.entryAdded", s, map[string]any{"entry": map[string]any{
				"source": "other", "level": "warning", "text": text, "timestamp": float64(timeNowMilli()),
			}})
		}
		c.Event("CDPRelay.accessChanged", s, map[string]any{"access": t.Acc.Level.String(), "origin": t.ShownOrigin(), "reason": t.Acc.Why})
		if enteringBlind {
			// The client's page follows the tab to its origin, and nothing
			// more: a main frame at the origin, loaded (so that a client
			// waiting for a load is not kept waiting), and a context that
			// refuses whatever is run in it.
			if s.Enabled["Page"] {
				o := t.ShownOrigin()
				loader := "CDPRELAY" + RandHex(12)
				c.Event("Page.frameNavigated", s, map[string]any{"frame": map[string]any{
					"id": t.TargetID, "loaderId": loader, "url": o + "/", "domainAndRegistry": "",
					"securityOrigin": o, "mimeType": "text/html", "secureContextType": "Secure",
					"crossOriginIsolatedContextType": "NotIsolated", "gatedAPIFeatures": []string{},
				}, "type": "Navigation"})
				ts := float64(timeNowMilli()) / 1000
				for _, name := range []string{"DOMContentLoaded", "load"} {
					c.Event("Page.lifecycleEvent", s, map[string]any{"frameId": t.TargetID, "loaderId": loader, "name": name, "timestamp": ts})
				}
				c.Event("Page.domContentEventFired", s, map[string]any{"timestamp": ts})
				c.Event("Page.loadEventFired", s, map[string]any{"timestamp": ts})
				c.Event("Page.frameStoppedLoading", s, map[string]any{"frameId": t.TargetID})
			}
			if s.Enabled["Runtime"] {
				c.EventRaw("Runtime.executionContextsCleared", s, nil)
				c.Event("Runtime.executionContextCreated", s, map[string]any{"context": map[string]any{
					"id": ctxID, "origin": t.ShownOrigin(), "name": "", "uniqueId": "cdprelay-blind-" + RandHex(8),
					"auxData": map[string]any{"isDefault": true, "type": "default", "frameId": t.TargetID},
				}})
				// And the client's own worlds, which refuse it as well (a
				// client waits for its utility world before it reads).
				for _, name := range t.WorldNames {
					c.Event("Runtime.executionContextCreated", s, map[string]any{"context": map[string]any{
						"id": st.Inst.FakeContext.Add(1), "origin": t.ShownOrigin(), "name": name, "uniqueId": "cdprelay-blind-" + RandHex(8),
						"auxData": map[string]any{"isDefault": false, "type": "isolated", "frameId": t.TargetID},
					}})
				}
			}
		}
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
				st.SetChildURL(s, s.Url) // a frame in a process of its own
			}
		}
		in.Unlock()
	}
}

// ShownOrigin is the origin a blind tab shows the client: where it is on
// its way to, when that is what made it blind, or where it is.
func (t *Tab) ShownOrigin() string {
	if t.navTo != "" {
		return api.Origin(t.navTo)
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
	return in.Srv.PolicyBox.Load().FencesNavigation(in.ProfileName) || in.HasTiers() || in.AsksNavigation()
}
