package core

import (
	"context"
	"encoding/json"

	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/relay/internal/api"
)

// The page a tab comes back to.
//
// While a tab's sessions waited (away.go) the tab may have gone on to
// another document: the person went to a browser page and came back, or
// navigated while the extension was away. Through Chrome's own port the
// client would have seen that navigation; here it saw none of it (nothing
// of a page never shared reaches it). So when the tab is attached again
// and shows another document than the one the client knows, the client is
// shown it as a navigation, before what it had set is set again: the
// main frame's Page.frameNavigated and its frames' Page.frameAttached and
// frameNavigated, as Chrome reports a new document, taken from the
// document's own frame tree. The lifecycle events, the execution contexts
// and the frames' sessions then come from Chrome itself as the client's
// settings are set again (resume.go's replay, then awayload.go), and the
// scripts for new documents run in it, as they would have as it loaded.

// frameNode is one frame of Page.getFrameTree, its frame as Chrome gave it.
type frameNode struct {
	Frame       json.RawMessage `json:"frame"`
	ChildFrames []frameNode     `json:"childFrames"`
}

// showDocument compares the document t shows now, attached again, with the
// one its client knows, shows the client the new one, and reports whether
// it is another. Only a tab that waited (away.go) can have moved on: a
// resume after another extension's frame finds the same document.
func (in *Instance) showDocument(ctx context.Context, x Upstream, t *Tab) (fresh bool) {
	in.Lock()
	a := t.away
	in.Unlock()
	if a == nil {
		return false
	}
	var ft struct {
		FrameTree frameNode `json:"frameTree"`
	}
	res, err := x.SendCommand(ctx, t.Id, "", "Page.getFrameTree", nil)
	if err == nil {
		err = json.Unmarshal(res, &ft)
	}
	st := in.Lock()
	defer in.Unlock()
	if t.away != a || t.Session == nil || st.Client == nil {
		return false
	}
	now := string(wire.StringField(ft.FrameTree.Frame, "loaderId"))
	fresh = a.moved || (t.loaderID != "" && now != "" && now != t.loaderID)
	if now != "" {
		t.loaderID = now
	}
	if fresh {
		// A new document: its frames and requests are its own.
		t.Frames, t.BlindFrames, t.BlindReqs = nil, nil, nil
		t.loaded = docLoad{seen: true}
		if in.HasTiers() {
			for _, f := range ft.FrameTree.ChildFrames {
				st.noteFrames(t, f)
			}
		}
		st.UpdateAccess(t)
	}
	if t.Acc != a.acc {
		// Told as any change of access is: a tab that came back blind
		// shows the client its origin and nothing more (access.go).
		st.AccessChanged(t, a.acc)
	}
	if info := st.TargetInfo(t); info != a.info && t.TargetID != "" {
		st.TargetEvent("Target.targetInfoChanged", struct {
			TargetInfo TargetInfo `json:"targetInfo"`
		}{info})
	}
	if !fresh || err != nil || ft.FrameTree.Frame == nil || t.Acc.Level == api.Blind {
		return fresh
	}
	st.tellFrame(t, ft.FrameTree, "")
	return fresh
}

// noteFrames records f and the frames below it as t's sub-frames, for the
// tab's access (tierslots.go, frames).
func (st *State) noteFrames(t *Tab, f frameNode) {
	st.setFrame(t, string(wire.StringField(f.Frame, "id")), string(wire.StringField(f.Frame, "url")))
	for _, c := range f.ChildFrames {
		st.noteFrames(t, c)
	}
}

// tellFrame tells t's top-level sessions that want Page events of frame f
// of a new document (parent: its parent frame's id, "" for the main frame),
// and of its frames. A frame on a site automation may not see is left out,
// with what is below it.
func (st *State) tellFrame(t *Tab, f frameNode, parent string) {
	c := st.Client
	id := string(wire.StringField(f.Frame, "id"))
	if parent != "" && (st.Inst.HasTiers() && st.ChildAccess(string(wire.StringField(f.Frame, "url"))).Level == api.Blind || id == "") {
		return
	}
	nav, _ := json.Marshal(struct {
		Frame json.RawMessage `json:"frame"`
		Type  string          `json:"type"`
	}{f.Frame, "Navigation"})
	var attached []byte
	if parent != "" {
		attached, _ = json.Marshal(map[string]string{"frameId": id, "parentFrameId": parent})
	}
	for i, s := range st.TopSessions(t) {
		if i > 0 && !s.Enabled["Page"] {
			continue // the first session gets every event of the tab; a further one, those it enabled
		}
		if attached != nil {
			c.EventRaw("Page.frameAttached", s, attached)
		}
		c.EventRaw("Page.frameNavigated", s, nav)
	}
	for _, child := range f.ChildFrames {
		st.tellFrame(t, child, id)
	}
}

// runNow is the params of a script for new documents, set again, with
// runImmediately: it runs in the document the tab shows too (and creates
// the isolated world it names there).
func runNow(params []byte) []byte {
	var p map[string]json.RawMessage
	if json.Unmarshal(params, &p) != nil || p == nil {
		return params
	}
	p["runImmediately"] = json.RawMessage("true")
	b, err := json.Marshal(p)
	if err != nil {
		return params
	}
	return b
}
