package tiers

import (
	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/core"
)

// A child session's access (an out-of-process frame's, a worker's): where
// it is, where it is on its way to, and the frames in its process.

// setChildNav records where child session cs's frame is on its way to.
func setChildNav(st *core.State, cs *core.Session, u string) {
	if u == "" || u == cs.NavTo {
		return
	}
	cs.NavTo = u
	setChildURL(st, cs, cs.Url)
}

// setChildURL records where child session cs now is (and where it is on
// its way to), and decides its access again.
func setChildURL(st *core.State, cs *core.Session, u string) {
	if u != cs.Url {
		cs.NavTo = "" // committed
	}
	cs.Url = u
	was := cs.Acc
	cs.Acc = api.Stricter(frameAccess(st, u), navAccess(st, cs.NavTo))
	gen := st.Inst.Srv.AccessGen.Load()
	for id, f := range cs.Frames {
		if f.Gen != gen {
			f.Acc, f.Gen = frameAccess(st, f.Url), gen
			cs.Frames[id] = f
		}
		if fa := f.Acc; fa.Level > cs.Acc.Level {
			cs.Acc = fa
			cs.Acc.Why = "a frame of the frame is on another site: " + fa.Why
		}
	}
	if n, ok := cs.Tab.BlindFrames[cs.TargetID]; ok && n.Acc.Level > cs.Acc.Level {
		cs.Acc = n.Acc
	}
	if cs.Acc.Level == api.Blind && was.Level != api.Blind {
		// Replies of commands still running in the frame are withheld,
		// and the live view forgets the tab's last frame, which shows it.
		cs.Tab.WentBlind()
	}
	if cs.Acc != was {
		st.SyncScripts(cs.Tab)
		if st.Live(cs) {
			syncSettings(st, cs.Tab, cs)
		}
		st.Observe(core.Event{Actor: api.ActorRelay, Kind: api.KindAccess, Target: cs.TargetID, Rule: cs.Acc.Rule, Outcome: api.OutcomeOK,
			Detail: "frame " + was.Level.String() + " -> " + cs.Acc.Level.String() + " on " + api.Origin(u)})
	}
}
