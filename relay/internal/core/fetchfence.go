package core

import (
	"encoding/json"
	"slices"

	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/cdp"
)

// The navigation backstop. The command fence sees Page.navigate and
// Target.createTarget, not a link click, location.href from an
// evaluation, a 30x redirect or a form post. When the policy can refuse a
// host, has tiers or asks about hosts, the relay enables the Fetch domain
// on each tab's session (and each out-of-process frame's) for Document
// requests: it fails the disallowed ones as blocked-by-client before they
// leave the browser, and holds the others while the client's settings are
// lifted for where they go or a person is asked (navhold.go).
// Requests of every type to the relay's own origins are paused and failed
// whatever the policy (package origins).
//
// chrome.debugger gives the relay and the client one session per target,
// and Fetch.enable replaces the patterns of the previous call, so the
// relay multiplexes: the client's own Fetch.enable and Fetch.disable are
// rewritten into one Fetch.enable with the relay's pattern added, and each
// Fetch.requestPaused goes to the client only when the client's own
// patterns match it. The client sees exactly the requests it asked for.
// The patterns, the rewrite and the state kept per session are
// fetchmux.go's (FetchState), kept in the tab's fenceTab slot
// (fenceslots.go), under the instance's mutex.

// fencing reports whether navigations of this instance need the backstop:
// when the fence can refuse a host, when some sites have a tier (whatever
// the client set up is lifted before a stricter page commits), and when a
// person is asked about hosts (where a navigation ends is asked).
func (in *Instance) fencing() bool {
	return in.Srv.PolicyBox.Load().FencesNavigation(in.ProfileName) || in.HasTiers() || in.AsksNavigation()
}

// backstop returns the relay's Fetch patterns for this instance's
// sessions: every Document request when the policy fences navigations, and
// every request to the relay's own origins. Nil: no backstop.
func (in *Instance) backstop() []cdp.FetchPattern {
	pats := in.Srv.Own.FetchPatterns()
	if in.fencing() {
		pats = append([]cdp.FetchPattern{FencePattern}, pats...)
	}
	return pats
}

// fetchOf returns the Fetch state of t's session sid ("" for the tab's
// own), creating it.
func (t *Tab) fetchOf(sid string) *FetchState {
	if t.Fetch == nil {
		t.Fetch = make(map[string]*FetchState)
	}
	fs := t.Fetch[sid]
	if fs == nil {
		fs = &FetchState{}
		t.Fetch[sid] = fs
	}
	return fs
}

// fenced reports whether the backstop is on for t's session sid.
func (t *Tab) fenced(sid string) bool {
	fs := t.Fetch[sid]
	return fs != nil && fs.Fence
}

// enableFence turns the backstop on for t's session sid if it has one. It
// does not wait for Chrome's answer: it may run on the extension's read
// loop.
func (in *Instance) enableFence(x Upstream, t *Tab, sid string) {
	pats := in.backstop()
	if len(pats) == 0 {
		return
	}
	in.Lock()
	fs := t.fetchOf(sid)
	if fs.Fence {
		in.Unlock()
		return
	}
	fs.Fence, fs.Patterns = true, pats
	params := FetchParams(pats, fs.Client)
	in.Unlock()
	x.Fire(t.Id, sid, "Fetch.enable", params)
}

// fetchRewrite is what the fence stage sends in place of a client's
// Fetch.enable or Fetch.disable on a fenced session: one Fetch.enable with
// the relay's pattern and the client's. The state is recorded as it is
// decided (FetchState.Rewrite); the rewritten params go to Chrome
// as the client's command.
func (st *State) fetchRewrite(t *Tab, sid string, a *cdp.Args, enable bool, replyTo *Session) []byte {
	fs := t.fetchOf(sid)
	if enable {
		// A further session on the tab gets the pauses too, as it would
		// through the ordinary domain switch.
		if replyTo != nil && !replyTo.Child && replyTo.Tab != nil {
			if replyTo.Enabled == nil {
				replyTo.Enabled = make(map[string]bool)
			}
			replyTo.Enabled["Fetch"] = true
		}
	}
	return fs.Rewrite(a.Patterns, a.HandleAuth, enable)
}

// pausedAction is the backstop's decision on one paused request.
type PausedAction struct {
	Kind      uint8 // pausedDeliver, pausedFail, pausedContinue
	RequestID string
	url       string
	d         Decision
	// headers, when set, are what a continued request goes on with
	// (navhold.go).
	headers []headerEntry
}

const (
	pausedDeliver     = iota // to the client, whose patterns asked for it
	pausedFail               // refused by the fence: failed as blocked by client
	PausedContinue           // the relay's own pause, or a blind tab's: continued
	PausedAuthDefault        // a blind tab's credentials request: left to the browser
	pausedHeld               // held by the relay, which lets it go later (navhold.go)
)

func (a PausedAction) Handled() bool { return a.Kind != pausedDeliver }

// judgePaused decides a Fetch.requestPaused on t's session sid. It only
// decides; run carries the decision out, outside the lock.
func (st *State) judgePaused(t *Tab, sid string, params []byte) PausedAction {
	fs := t.Fetch[sid]
	if fs == nil || !fs.Fence {
		return PausedAction{}
	}
	var cf *ClientFetch
	if fs.Client != nil && st.Client != nil {
		cf = fs.Client
	}
	var p api.PausedRequest
	if json.Unmarshal(params, &p) != nil || p.RequestID == "" {
		return PausedAction{}
	}
	responseStage := p.ResponseStatusCode != nil || p.ResponseErrorReason != ""
	wants := cf != nil && t.Acc.Level != api.Blind && cf.Matches(p.Request.URL, p.ResourceType, responseStage)
	in := st.Inst
	if in.Srv.OwnURL(p.Request.URL) {
		return PausedAction{Kind: pausedFail, RequestID: p.RequestID, url: p.Request.URL, d: OwnRefusal(p.Request.URL)}
	}
	if !responseStage && p.ResourceType == "Document" {
		if d := in.Srv.PolicyBox.Load().URL(in.ProfileName, p.Request.URL); d.Verdict != Allow {
			return PausedAction{Kind: pausedFail, RequestID: p.RequestID, url: p.Request.URL, d: d}
		}
		if a, held := st.holdDocument(t, sid, &p, wants); held {
			return a
		}
	}
	if wants {
		return PausedAction{}
	}
	return PausedAction{Kind: PausedContinue, RequestID: p.RequestID}
}

// run carries out the decision.
func (a PausedAction) run(in *Instance, x Upstream, t *Tab, sid string) {
	switch a.Kind {
	case pausedFail:
		x.Fire(t.Id, sid, "Fetch.failRequest", map[string]string{"requestId": a.RequestID, "errorReason": "BlockedByClient"})
		in.Observe(Event{Actor: api.ActorRelay, Kind: api.KindNavigate, Target: t.TargetID, Rule: a.d.Rule, Outcome: api.OutcomeDenied, Detail: a.url})
		in.Srv.Cfg.Metrics.CountRefusal(a.d)
	case PausedContinue:
		if a.headers != nil {
			x.Fire(t.Id, sid, "Fetch.continueRequest", map[string]any{"requestId": a.RequestID, "headers": a.headers})
			return
		}
		x.Fire(t.Id, sid, "Fetch.continueRequest", map[string]string{"requestId": a.RequestID})
	case PausedAuthDefault:
		x.Fire(t.Id, sid, "Fetch.continueWithAuth", map[string]any{"requestId": a.RequestID, "authChallengeResponse": map[string]string{"response": "Default"}})
	}
}

// refreshFences brings every attached tab's own session in line with the
// policy (and the relay's own origins) after it changed: the backstop goes
// on where it is now needed, off where it no longer is, and changes its
// patterns where they changed, keeping the client's own Fetch patterns.
func (s *Relay) refreshFences() {
	for _, in := range s.Instances() {
		want := in.backstop()
		st := in.Lock()
		x := st.Ext
		var changed []*Tab
		var params []map[string]any
		for _, t := range st.Tabs {
			if t.State != TabAttached {
				continue
			}
			fs := t.Fetch[""]
			if fs == nil && len(want) == 0 || fs != nil && slices.Equal(fs.Patterns, want) && fs.Fence == (len(want) > 0) {
				continue
			}
			fs = t.fetchOf("")
			fs.Fence, fs.Patterns = len(want) > 0, want
			changed = append(changed, t)
			params = append(params, FetchParams(want, fs.Client))
		}
		in.Unlock()
		if x == nil {
			continue
		}
		for i, t := range changed {
			if len(params[i]["patterns"].([]cdp.FetchPattern)) == 0 {
				x.Fire(t.Id, "", "Fetch.disable", nil)
			} else {
				x.Fire(t.Id, "", "Fetch.enable", params[i])
			}
		}
	}
}
