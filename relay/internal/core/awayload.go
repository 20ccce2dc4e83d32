package core

import (
	"context"
	"encoding/json"
	"time"

	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/relay/internal/api"
)

// The load a client did not see (away.go, resume.go). The replay makes
// Chrome send a document's past lifecycle events again, not
// Page.domContentEventFired, loadEventFired or the main frame's
// frameStoppedLoading: the sessions that enabled Page are told those, with
// the lifecycle's times (else readyState's word), never on a blind tab.

// docLoad is what Chrome said of the loading of the document a tab shows
// (loaderID; seen: the client saw it commit, or awaydoc.go showed it).
type docLoad struct {
	seen, domContent, load, stopped bool
	domContentAt, loadAt            json.RawMessage
}

// note records a Page event of t's own session.
func (d *docLoad) note(t *Tab, method, params []byte) {
	main := string(wire.StringField(params, "frameId")) == t.TargetID
	switch string(method) {
	case "Page.domContentEventFired":
		d.domContent = true
	case "Page.loadEventFired":
		d.load = true
	case "Page.frameStoppedLoading":
		d.stopped = d.stopped || main
	case "Page.lifecycleEvent":
		if name := string(wire.StringField(params, "name")); main && string(wire.StringField(params, "loaderId")) == t.loaderID && name == "DOMContentLoaded" {
			d.domContentAt = append(json.RawMessage(nil), wire.Field(params, "timestamp")...)
		} else if main && string(wire.StringField(params, "loaderId")) == t.loaderID && name == "load" {
			d.loadAt = append(json.RawMessage(nil), wire.Field(params, "timestamp")...)
		}
	}
}

// tellLoaded tells the sessions of t, resumed through x (unless failed),
// that enabled Page the load events of its document they missed.
func (in *Instance) tellLoaded(ctx context.Context, x Upstream, t *Tab, failed error) {
	st := in.Lock()
	d, loader, stopped := t.loaded, t.loaderID, st.StoppedBy != "" // a stopped page's script may be held
	ask := failed == nil && d.seen && loader != "" && t.Acc.Level != api.Blind && !(d.domContent && d.load && d.stopped)
	in.Unlock()
	state := "complete"
	if !ask || d.loadAt == nil && stopped {
		return
	} else if d.loadAt == nil {
		var r struct{ Result struct{ Value any } }
		qctx, cancel := context.WithTimeout(ctx, time.Second)
		res, err := x.SendCommand(qctx, t.Id, "", "Runtime.evaluate", map[string]any{"expression": "document.readyState", "returnByValue": true, "silent": true})
		cancel()
		if state = ""; err == nil && json.Unmarshal(res, &r) == nil {
			state, _ = r.Result.Value.(string)
		}
	}
	st = in.Lock()
	defer in.Unlock()
	if st.Client == nil || t.loaderID != loader || t.Acc.Level == api.Blind || state != "interactive" && state != "complete" {
		return // another document meanwhile tells its own
	}
	at := func(ts json.RawMessage) map[string]any {
		if ts == nil {
			return map[string]any{"timestamp": float64(timeNowMilli()) / 1000}
		}
		return map[string]any{"timestamp": ts}
	}
	for _, s := range st.topSessions(t) {
		if s.Enabled["Page"] && !t.loaded.domContent {
			st.Client.Event("Page.domContentEventFired", s, at(t.loaded.domContentAt))
		}
		if s.Enabled["Page"] && state == "complete" && !t.loaded.load {
			st.Client.Event("Page.loadEventFired", s, at(t.loaded.loadAt))
		}
		if s.Enabled["Page"] && state == "complete" && !t.loaded.stopped {
			st.Client.Event("Page.frameStoppedLoading", s, map[string]string{"frameId": t.TargetID})
		}
	}
	done := state == "complete"
	t.loaded.domContent, t.loaded.load, t.loaded.stopped = true, t.loaded.load || done, t.loaded.stopped || done
}
