package tiers

import (
	"strings"

	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/relay/internal/access"
	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/core"
)

// A tab's frames and what their sites allow: a child session's frames,
// the strictest frame of a tab, the storage a command names.

// hasBlindChild reports whether an out-of-process frame of t is blind (or
// on its way to a blind site): the tab's pixels then show it.
func hasBlindChild(st *core.State, t *core.Tab) bool {
	if !st.Inst.HasTiers() {
		return false
	}
	if pendingBlind(t) {
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

// setChildFrame records that frame id in child session cs's process is
// now at url ("" when it is gone), and decides the child's access again.
func setChildFrame(st *core.State, cs *core.Session, id, url string) {
	if id == "" || !st.Inst.HasTiers() {
		return
	}
	if url == "" {
		if _, ok := cs.Frames[id]; !ok {
			return
		}
		delete(cs.Frames, id)
	} else {
		cs.Frames = putFrame(st, cs.Frames, id, url)
	}
	setChildURL(st, cs, cs.Url)
}

// storageAccess returns the strictest access of the storages params name
// (a storage key reads <origin>/[^…]), and which one.
func storageAccess(st *core.State, params []byte) (core.TabAccess, string) {
	var a core.TabAccess
	where := ""
	look := func(obj []byte) {
		for _, key := range access.StorageKeys {
			v, found, err := core.ExactString(obj, key)
			if !found && err == nil {
				continue
			}
			u := v
			if i := strings.IndexByte(u, '^'); i >= 0 {
				u = u[:i]
			}
			to := st.UrlAccess(u)
			if err != nil {
				to = core.TabAccess{Level: api.Blind, Rule: api.RuleNeverShared, Why: err.Error()}
			}
			if to.Level > a.Level {
				a, where = to, api.Origin(u)
			}
		}
	}
	look(params)
	for _, key := range access.StorageObjects {
		if obj := wire.Field(params, key); obj != nil {
			look(obj)
		}
	}
	return a, where
}

// strictFrame returns the strictest access of t's frames in processes of
// their own (with a session of the client's, or followed on their way):
// full when there is none that is not.
func strictFrame(st *core.State, t *core.Tab) core.TabAccess {
	var a core.TabAccess
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
