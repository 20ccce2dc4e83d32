package away

import (
	"context"
	"encoding/json"

	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/core"
)

// The page a tab comes back to.
//
// While a tab's sessions waited (wait.go) the tab may have gone on to
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
// settings are set again (replay.go, then load.go), and the
// scripts for new documents run in it, as they would have as it loaded.

// frameNode is one frame of Page.getFrameTree, its frame as Chrome gave it.
type frameNode struct {
	Frame       json.RawMessage `json:"frame"`
	ChildFrames []frameNode     `json:"childFrames"`
}

// showDocument compares the document t shows now, attached again, with the
// one its client knows, shows the client the new one, and reports whether
// it is another. Only a tab that waited (wait.go) can have moved on: a
// resume after another extension's frame finds the same document.
func showDocument(ctx context.Context, in *core.Instance, x core.Upstream, t *core.Tab) (fresh bool) {
	in.Lock()
	a := t.Away
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
	if t.Away != a || t.Session == nil || st.Client == nil {
		return false
	}
	now := string(wire.StringField(ft.FrameTree.Frame, "loaderId"))
	fresh = a.Moved || (t.LoaderID != "" && now != "" && now != t.LoaderID)
	if now != "" {
		t.LoaderID = now
	}
	if fresh {
		// A new document: its frames and requests are its own.
		t.Frames, t.BlindFrames, t.BlindReqs = nil, nil, nil
		t.Loaded = core.DocLoad{Seen: true}
		if in.HasTiers() {
			for _, f := range ft.FrameTree.ChildFrames {
				noteFrames(st, t, f)
			}
		}
		st.UpdateAccess(t)
	}
	if t.Acc != a.Acc {
		// Told as any change of access is: a tab that came back blind
		// shows the client its origin and nothing more.
		st.AccessChanged(t, a.Acc)
	}
	if info := st.TargetInfo(t); info != a.Info && t.TargetID != "" {
		st.TargetEvent("Target.targetInfoChanged", struct {
			TargetInfo core.TargetInfo `json:"targetInfo"`
		}{info})
	}
	if !fresh || err != nil || ft.FrameTree.Frame == nil || t.Acc.Level == api.Blind {
		return fresh
	}
	tellFrame(st, t, ft.FrameTree, "")
	return fresh
}

// noteFrames records f and the frames below it as t's sub-frames, for the
// tab's access (the core's tierslots.go, frames).
func noteFrames(st *core.State, t *core.Tab, f frameNode) {
	st.SetFrame(t, string(wire.StringField(f.Frame, "id")), string(wire.StringField(f.Frame, "url")))
	for _, c := range f.ChildFrames {
		noteFrames(st, t, c)
	}
}

// tellFrame tells t's top-level sessions that want Page events of frame f
// of a new document (parent: its parent frame's id, "" for the main frame),
// and of its frames. A frame on a site automation may not see is left out,
// with what is below it.
func tellFrame(st *core.State, t *core.Tab, f frameNode, parent string) {
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
		tellFrame(st, t, child, id)
	}
}
