package tiers

import (
	"strings"
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/access"
	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/core"
)

// What automation may do with a tab, decided from the policy (the core's
// access.go says what full, read-only and blind mean, and keeps the
// access: core.Tab.Acc, core.Session.Acc), and what a change of it does
// in the tab and tells the client. The core calls these through
// core.Tiers, with the instance's lock held.

// Hooks is the tiers' share of the core: deciding a tab's access, what a
// change of it does, and the client's settings and scripts it lifts.
func Hooks() core.Tiers {
	return core.Tiers{
		Has:            hasTiers,
		TabLocked:      tabAccess,
		FrameLocked:    frameAccess,
		NavLocked:      navAccess,
		ChangedLocked:  accessChanged,
		TellLocked:     tellAccess,
		ScriptsLocked:  syncScripts,
		SettingsLocked: syncSettings,
		SetFrameLocked: setFrame,
		ChildLocked:    func(st *core.State, cs *core.Session) { setChildURL(st, cs, cs.Url) },
	}
}

// hasTiers reports whether policy p gives any site a tier for in.
func hasTiers(in *core.Instance, p core.Policy) bool {
	tr, ok := p.(api.TierRuler)
	return ok && tr.HasTiers(in.ProfileName)
}

// tabAccess decides t's access from the document it shows, its frames,
// where it is on its way to, its holder and the policy.
func tabAccess(st *core.State, t *core.Tab) core.TabAccess {
	in := st.Inst
	u := t.DocURL
	if u == "" {
		u = t.Url
	}
	web, special := api.PageScheme(u)
	switch {
	case !web && !special:
		return core.TabAccess{Level: api.Blind, Rule: api.RuleNeverShared,
			Why: "the tab shows " + api.SchemeOf(u) + " page, which is never shared with automation; navigate it to a web page or close it"}
	case web && in.Srv.OwnURL(u):
		a, _ := in.Srv.Own.Access(u, "the tab")
		return a
	case web && in.Fencing():
		if d := in.Srv.PolicyBox.Load().URL(in.ProfileName, u); d.Verdict != core.Allow {
			return core.TabAccess{Level: api.Blind, Rule: api.RuleOutsideFence,
				Why: "the tab is on " + api.Origin(u) + ", outside the hosts automation may use (" + strings.TrimPrefix(d.Message, "Denied by cdprelay policy: ") + "); navigate it back"}
		}
	}
	var a core.TabAccess
	if web {
		a = tierAccess(in, u)
		gen := in.Srv.AccessGen.Load()
		for id, f := range t.Frames {
			if f.Gen != gen {
				// What decides a site's access changed since.
				f.Acc, f.Gen = frameAccess(st, f.Url), gen
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
	if to := navAccess(st, t.NavTo); to.Level > a.Level {
		a = to
	}
	if (len(t.BlindFrames) >= core.MaxPendingFrames || len(t.BlindReqs) >= core.MaxPendingFrames) && a.Level < api.Blind {
		a = core.TabAccess{Level: api.Blind, Rule: api.RuleBlindFrame, Why: "the page has more frames on their way to sites hidden from automation than the relay follows"}
	}
	if a.Level != api.Full {
		return a
	}
	if t.Control != "" {
		return core.TabAccess{Level: api.ReadOnly, Rule: api.RuleTakeOver, Why: api.MsgControlledWhy}
	}
	return core.TabAccess{}
}

// frameAccess is what automation may do with a child session's frame at
// u: the tiers of its own site (a frame that shares its parent's process
// has no session of its own and goes with the tab).
//
// A frame of a page that is never shared (an extension's frame that a
// password manager puts into the page, above all) is blind: it has its
// extension's powers. A frame of about:blank, srcdoc or data: is its
// embedder's.
func frameAccess(st *core.State, u string) core.TabAccess {
	web, special := api.PageScheme(u)
	switch {
	case web:
		if a, own := st.Inst.Srv.Own.Access(u, "the frame"); own {
			return a
		}
		return tierAccess(st.Inst, u)
	case special || u == "" || strings.HasPrefix(strings.ToLower(u), "data:"):
		return core.TabAccess{}
	}
	return core.TabAccess{Level: api.Blind, Rule: api.RuleNeverShared,
		Why: "the frame shows " + api.SchemeOf(u) + " page, which is never shared with automation"}
}

// navAccess is the access the tiers give the page a frame is on its way
// to ("" for none).
func navAccess(st *core.State, to string) core.TabAccess {
	if to == "" {
		return core.TabAccess{}
	}
	if web, _ := api.PageScheme(to); !web {
		return core.TabAccess{}
	}
	a := tierAccess(st.Inst, to)
	if a.Level > api.Full {
		a.Why = "it is on its way to a page where " + a.Why
	}
	return a
}

// tierAccess is the access the policy's tiers give the page at u.
func tierAccess(in *core.Instance, u string) core.TabAccess {
	tr, ok := in.Srv.PolicyBox.Load().(api.TierRuler)
	if !ok {
		return core.TabAccess{}
	}
	switch tier, rule, host := tr.Tier(in.ProfileName, u); tier {
	case "blind":
		return core.TabAccess{Level: api.Blind, Rule: rule, Why: host + " is blind to automation (tier blind): it sees nothing of it and may only navigate away, detach, or close a tab it opened"}
	case "read-only":
		return core.TabAccess{Level: api.ReadOnly, Rule: rule, Why: host + " is read-only to automation (tier read-only): it may read the page but not act on it"}
	}
	return core.TabAccess{}
}

// accessChanged does in the tab what a change of its access from was
// asks: the client's scripts and settings out of a stricter page and back
// into a full one, the settings a blind tab deferred applied, and the
// read-only guard in the client's isolated worlds.
func accessChanged(st *core.State, t *core.Tab, was core.TabAccess) {
	now, tt := t.Acc, tabSlot.Of(t)
	if len(t.Scripts) > 0 {
		syncScripts(st, t)
	}
	syncSettings(st, t, nil)
	if now.Level == api.Full && len(tt.deferred) > 0 {
		applyDeferred(st, t)
	}
	tt.readOnly.Store(now.Level == api.ReadOnly)
	switch {
	case now.Level == api.ReadOnly && (was.Level != api.ReadOnly || now.Why != was.Why):
		// A fresh layer of the guard in every isolated world it has, with
		// the reason its refusals give (a person taking over a read-only
		// site's tab changes it).
		if tt.guard != nil {
			inWorlds(st, t, tt.guard.OffScript())
		}
		l, src := access.NewGuard(core.RandHex(16), now.Why)
		tt.guard = &l
		inWorlds(st, t, src)
	case was.Level == api.ReadOnly && now.Level != api.ReadOnly && tt.guard != nil:
		inWorlds(st, t, tt.guard.OffScript())
		tt.guard = nil
	}
}

// inWorlds runs src in every isolated world of t's, silently.
func inWorlds(st *core.State, t *core.Tab, src string) {
	for sid, ids := range t.Ctxs.IsolatedWorlds() {
		for _, id := range ids {
			st.Fire(t.Id, sid, "Runtime.evaluate", map[string]any{"expression": src, "contextId": id, "silent": true})
		}
	}
}

// tellAccess tells the client and the audit log that t's access changed
// from was. A tab that goes blind shows the client a stand-in: a page at
// its origin, loaded, and contexts that refuse whatever is run in them.
func tellAccess(st *core.State, t *core.Tab, was core.TabAccess) {
	st.Observe(core.Event{Actor: api.ActorRelay, Kind: api.KindAccess, Target: t.TargetID, Rule: t.Acc.Rule, Outcome: api.OutcomeOK,
		Detail: was.Level.String() + " -> " + t.Acc.Level.String() + " on " + api.Origin(t.DocURL)})
	c := st.Client
	if c == nil || t.Session == nil {
		return
	}
	enteringBlind := t.Acc.Level == api.Blind && was.Level != api.Blind
	leavingBlind := was.Level == api.Blind && t.Acc.Level != api.Blind
	ctxID := st.Inst.FakeContext.Add(1)
	for _, s := range st.TopSessions(t) {
		if leavingBlind && s.Enabled["Runtime"] {
			// The contexts it was shown while blind are gone.
			c.EventRaw("Runtime.executionContextsCleared", s, nil)
		}
		if t.Acc.Rule != api.RuleTakeOver && was.Rule != api.RuleTakeOver {
			text := "cdprelay: automation has " + t.Acc.Level.String() + " access to this tab again"
			if t.Acc.Level != api.Full {
				text = "cdprelay: this tab is now " + t.Acc.Level.String() + " to automation: " + t.Acc.Why
			}
			c.Event("Log.entryAdded", s, map[string]any{"entry": map[string]any{
				"source": "other", "level": "warning", "text": text, "timestamp": float64(time.Now().UnixMilli()),
			}})
		}
		c.Event("CDPRelay.accessChanged", s, map[string]any{"access": t.Acc.Level.String(), "origin": t.ShownOrigin(), "reason": t.Acc.Why})
		if enteringBlind {
			showBlind(st, c, s, t, ctxID)
		}
	}
}

// showBlind shows session s of a tab that went blind its stand-in: a main
// frame at the tab's origin, loaded (so that a client waiting for a load
// is not kept waiting), and a context that refuses whatever is run in it.
func showBlind(st *core.State, c *core.ClientConn, s *core.Session, t *core.Tab, ctxID int64) {
	o := t.ShownOrigin()
	if s.Enabled["Page"] {
		loader := "CDPRELAY" + core.RandHex(12)
		c.Event("Page.frameNavigated", s, map[string]any{"frame": map[string]any{
			"id": t.TargetID, "loaderId": loader, "url": o + "/", "domainAndRegistry": "",
			"securityOrigin": o, "mimeType": "text/html", "secureContextType": "Secure",
			"crossOriginIsolatedContextType": "NotIsolated", "gatedAPIFeatures": []string{},
		}, "type": "Navigation"})
		ts := float64(time.Now().UnixMilli()) / 1000
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
			"id": ctxID, "origin": o, "name": "", "uniqueId": "cdprelay-blind-" + core.RandHex(8),
			"auxData": map[string]any{"isDefault": true, "type": "default", "frameId": t.TargetID},
		}})
		// And the client's own worlds, which refuse it as well (a client
		// waits for its utility world before it reads).
		for _, name := range tabSlot.Of(t).worldNames {
			c.Event("Runtime.executionContextCreated", s, map[string]any{"context": map[string]any{
				"id": st.Inst.FakeContext.Add(1), "origin": o, "name": name, "uniqueId": "cdprelay-blind-" + core.RandHex(8),
				"auxData": map[string]any{"isDefault": false, "type": "isolated", "frameId": t.TargetID},
			}})
		}
	}
}
