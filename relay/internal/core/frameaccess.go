package core

import (
	"github.com/cdprelay/cdprelay/relay/internal/api"
)

// ChildAccess is what automation may do with a child session's frame at
// u: the tiers of its own site (the tiers' Tiers.FrameLocked; a frame that
// shares its parent's process has no session of its own and goes with the
// tab).
func (st *State) ChildAccess(u string) TabAccess {
	if tiers.FrameLocked == nil {
		return TabAccess{}
	}
	return tiers.FrameLocked(st, u)
}

// SetChildNav records where child session cs's frame is on its way to.
func (st *State) SetChildNav(cs *Session, u string) {
	if u == "" || u == cs.navTo {
		return
	}
	cs.navTo = u
	st.SetChildURL(cs, cs.Url)
}

// SetChildURL records where child session cs now is (and where it is on
// its way to). It reports whether the frame went blind.
func (st *State) SetChildURL(cs *Session, u string) {
	if u != cs.Url {
		cs.navTo = "" // committed
	}
	cs.Url = u
	was := cs.Acc
	cs.Acc = api.Stricter(st.ChildAccess(u), st.navAccess(cs.navTo))
	gen := st.Inst.Srv.AccessGen.Load()
	for id, f := range cs.Frames {
		if f.Gen != gen {
			f.Acc, f.Gen = st.ChildAccess(f.Url), gen
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
		cs.Tab.blindEpoch.Add(1)
		NotifyHandles(cs.Tab.Handles, api.TabEvent{Method: api.EventHidden})
	}
	if cs.Acc != was {
		st.SyncScripts(cs.Tab)
		st.syncChildLifts(cs)
		st.Observe(Event{Actor: api.ActorRelay, Kind: api.KindAccess, Target: cs.TargetID, Rule: cs.Acc.Rule, Outcome: api.OutcomeOK,
			Detail: "frame " + was.Level.String() + " -> " + cs.Acc.Level.String() + " on " + api.Origin(u)})
	}
}

// StorageKeys are where the params of the domains that name their storage
// themselves (access.NamesStorage) name it: at the top, or in the object of
// StorageObjects.
var (
	StorageKeys    = []string{"origin", "securityOrigin", "storageKey", "topLevelSite"}
	StorageObjects = []string{"storageId", "storageBucket", "bucket"}
)
