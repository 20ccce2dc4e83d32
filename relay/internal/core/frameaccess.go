package core

import (
	"strings"

	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/metrics"
)

// ChildAccess is what automation may do with a child session's frame at
// u: the tiers of its own site (a frame that shares its parent's process
// has no session of its own and goes with the tab).
//
// A frame of a page that is never shared (an extension's frame that a
// password manager puts into the page, above all) is blind: it has its
// extension's powers. A frame of about:blank, srcdoc or data: is its
// embedder's.
func (st *State) ChildAccess(u string) TabAccess {
	web, special := api.PageScheme(u)
	switch {
	case web:
		if a, own := st.Inst.Srv.ownAccess(u, "the frame"); own {
			return a
		}
		return st.tierAccess(u)
	case special || u == "" || strings.HasPrefix(strings.ToLower(u), "data:"):
		return TabAccess{}
	}
	return TabAccess{Level: api.Blind, Rule: ruleNeverShared,
		Why: "the frame shows " + api.SchemeOf(u) + " page, which is never shared with automation"}
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
	gen := st.Inst.Srv.accessGen.Load()
	for id, f := range cs.frames {
		if f.gen != gen {
			f.acc, f.gen = st.ChildAccess(f.Url), gen
			cs.frames[id] = f
		}
		if fa := f.acc; fa.Level > cs.Acc.Level {
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
		st.syncScripts(cs.Tab)
		st.syncChildLifts(cs)
		st.Observe(Event{Actor: api.ActorRelay, Kind: api.KindAccess, Target: cs.TargetID, Rule: cs.Acc.Rule, Outcome: api.OutcomeOK,
			Detail: "frame " + was.Level.String() + " -> " + cs.Acc.Level.String() + " on " + api.Origin(u)})
	}
}

// SetChildFrame records that frame id in child session cs's process is
// now at url ("" when it is gone), and decides the child's access again.
func (st *State) SetChildFrame(cs *Session, id, url string) {
	if id == "" || !st.Inst.HasTiers() {
		return
	}
	if url == "" {
		if _, ok := cs.frames[id]; !ok {
			return
		}
		delete(cs.frames, id)
	} else {
		if cs.frames == nil {
			cs.frames = make(map[string]frameAt)
		}
		if _, known := cs.frames[id]; !known && len(cs.frames) >= MaxPendingFrames {
			// Not a web page: blind, until the next document; no more kept.
			st.Inst.Srv.Cfg.Metrics.Limited[metrics.LimitFrames].Inc()
			id, url = tooManyFrames, tooManyFrames
		}
		cs.frames[id] = frameAt{Url: url, acc: st.ChildAccess(url), gen: st.Inst.Srv.accessGen.Load()}
	}
	st.SetChildURL(cs, cs.Url)
}

// HasBlindChild reports whether an out-of-process frame of t is blind (or
// on its way to a blind site): the tab's pixels then show it.
func (st *State) HasBlindChild(t *Tab) bool {
	if !st.Inst.HasTiers() {
		return false
	}
	if t.pendingBlind() {
		// A frame on its way to a blind site that did not commit in the
		// tab's process: it is in a process of its own now, whether or
		// not the client has a session on it.
		return true
	}
	for _, s := range st.Sessions {
		if s.Child && s.Tab == t && s.Acc.Level == api.Blind {
			return true
		}
	}
	return false
}

// storageKeys are where the params of the domains that name their storage
// themselves (access.NamesStorage) name it: at the top, or in the object of
// storageObjects.
var (
	storageKeys    = []string{"origin", "securityOrigin", "storageKey", "topLevelSite"}
	storageObjects = []string{"storageId", "storageBucket", "bucket"}
)

// StorageAccess returns the strictest access of the storages params name
// (a storage key reads <origin>/[^…]), and which one.
func (st *State) StorageAccess(params []byte) (TabAccess, string) {
	var a TabAccess
	where := ""
	look := func(obj []byte) {
		for _, key := range storageKeys {
			v, found, err := ExactString(obj, key)
			if !found && err == nil {
				continue
			}
			u := v
			if i := strings.IndexByte(u, '^'); i >= 0 {
				u = u[:i]
			}
			to := st.UrlAccess(u)
			if err != nil {
				to = TabAccess{Level: api.Blind, Rule: ruleNeverShared, Why: err.Error()}
			}
			if to.Level > a.Level {
				a, where = to, api.Origin(u)
			}
		}
	}
	look(params)
	for _, key := range storageObjects {
		if obj := wire.Field(params, key); obj != nil {
			look(obj)
		}
	}
	return a, where
}

// StrictFrame returns the strictest access of t's frames in processes of
// their own (with a session of the client's, or followed on their way):
// full when there is none that is not.
func (st *State) StrictFrame(t *Tab) TabAccess {
	var a TabAccess
	for _, n := range t.BlindFrames {
		if n.Acc.Level > a.Level {
			a = n.Acc
		}
	}
	for _, s := range st.Sessions {
		if s.Child && s.Tab == t && s.Acc.Level > a.Level {
			a = s.Acc
		}
	}
	return a
}
