package core

import (
	"strconv"

	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/metrics"
)

// Bounds on what a peer can make an instance hold.
//
// The extension offers tabs; Chrome, on a page's behalf, announces child
// sessions (frames, workers), frames and requests; a client switches
// domains on. Each grows a table of the instance, and each is bounded, so
// that a fake extension, a hostile page or client cannot make the relay
// hold more than a person's browser needs:
//
//   - tabs: Config.MaxTabs (1,000; --max-tabs). A tab offered past it is
//     not shared: the relay does not keep it, logs and audits the first,
//     and counts each; the client's Target.createTarget is refused.
//   - child sessions: maxChildSessions in the instance's session table
//     beside the client's own (maxSessions). A frame or worker Chrome
//     attaches past it is detached at once, and the client never hears of
//     it; counted, audited once.
//   - frames and requests of a tab followed for its tier, and the frames
//     of a child session's process: MaxPendingFrames each (the tiers'
//     tabframes.go, blindframes.go, frames.go): past it the tab is blind
//     until its next document, and no more are kept; counted.
//   - domains a session switched on: maxSessionDomains; past it a switch
//     is forwarded but not followed; counted.
//
// The others are bounded where they live: the client's sessions
// (maxSessions), commands in flight and held (Config.MaxInFlight), the
// calls waiting for the extension (the same), init scripts
// (MaxInitScripts), settings kept for a blind tab (the tiers'
// maxDeferredSets),
// replayed settings (replay.MaxCmds, replay.MaxBytes), paused requests'
// credentials (maxPausedKept), streams (creds' maxHeldStreams), URL
// passwords (maxURLPasswords), world names (the tiers' maxWorldNames), a tab's
// dialog (one), approvals (in flight), warnings (256). Each is counted as
// cdprelay_relay_limited_total{limit}.

// TooManyFrames stands for the frames of a document past MaxPendingFrames:
// a frame id and a URL that is no web page's (blind).
const TooManyFrames = "cdprelay:too-many-frames"

// maxChildSessions bounds the child sessions an instance keeps.
const MaxChildSessions = 4096

// maxSessionDomains bounds the domains one session's switches are
// followed for (Chrome has about fifty).
const maxSessionDomains = 128

// Rules of the bounds' refusals, in records.
const (
	ruleMaxTabs          = "relay:max-tabs"
	ruleMaxChildSessions = "relay:max-child-sessions"
)

// TabRoom reports whether the instance may keep one more tab. Past the
// bound it counts the refusal, and logs and audits the first one until
// there is room again. what names the tab for the record.
func (st *State) TabRoom(what string) bool {
	in := st.Inst
	max := in.Srv.Cfg.MaxTabs
	if len(st.Tabs) < max {
		st.tabsFull = false
		return true
	}
	in.Srv.Cfg.Metrics.Limited[metrics.LimitTabs].Inc()
	if !st.tabsFull {
		st.tabsFull = true
		why := what + " is not shared: the instance keeps " + strconv.Itoa(max) + " tabs already (--max-tabs)"
		in.Log.Warn("too many tabs; those offered from now on are not shared", "limit", max)
		in.Observe(Event{Actor: api.ActorExtension, Kind: api.KindDenied, Rule: ruleMaxTabs, Outcome: api.OutcomeDenied, Detail: why})
	}
	return false
}

// refuseChild reports whether child session id, which Chrome attached
// under s, is refused for the bound: it is then detached at once.
func (st *State) refuseChild(s *Session, id []byte) bool {
	if len(id) == 0 || st.Sessions[string(id)] != nil || st.childRoom() {
		return false
	}
	sid := ""
	if s.Child {
		sid = s.Id
	}
	st.Fire(s.Tab.Id, sid, "Target.detachFromTarget", map[string]string{"sessionId": string(id)})
	return true
}

// childRoom reports whether the instance may keep one more child session.
// Past the bound it counts the refusal, and logs and audits the first.
func (st *State) childRoom() bool {
	if len(st.Sessions) < MaxSessions+MaxChildSessions {
		st.childrenFull = false
		return true
	}
	in := st.Inst
	in.Srv.Cfg.Metrics.Limited[metrics.LimitChildSessions].Inc()
	if !st.childrenFull {
		st.childrenFull = true
		in.Log.Warn("too many child sessions; frames and workers attached from now on are detached", "limit", MaxChildSessions)
		in.Observe(Event{Actor: api.ActorRelay, Kind: api.KindDenied, Rule: ruleMaxChildSessions, Outcome: api.OutcomeDenied,
			Detail: "a frame or worker was detached: the instance keeps " + strconv.Itoa(MaxChildSessions) + " child sessions already"})
	}
	return false
}
