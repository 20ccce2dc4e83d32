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
		if !main || string(wire.StringField(params, "loaderId")) != t.loaderID {
			return
		}
		switch string(wire.StringField(params, "name")) {
		case "DOMContentLoaded":
			d.domContentAt = append(json.RawMessage(nil), wire.Field(params, "timestamp")...)
		case "load":
			d.loadAt = append(json.RawMessage(nil), wire.Field(params, "timestamp")...)
		}
	}
}

// tellLoaded tells the sessions of t, resumed through x (unless failed),
// that enabled Page the load events of its document they missed.
func (in *Instance) tellLoaded(ctx context.Context, x Upstream, t *Tab, failed error) {
	st := in.Lock()
	d, loader := t.loaded, t.loaderID
	stopped := st.StoppedBy != "" // a stopped page's script may be held
	ask := failed == nil && d.seen && loader != "" && t.Acc.Level != api.Blind && !(d.domContent && d.load && d.stopped)
	in.Unlock()
	if !ask {
		return
	}
	state := "complete"
	if d.loadAt == nil {
		// No lifecycle event said the document loaded: its readyState
		// says how far it did (never asked of a stopped page).
		if stopped {
			return
		}
		state = in.readyState(ctx, x, t)
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
	done := state == "complete"
	for _, s := range st.TopSessions(t) {
		if !s.Enabled["Page"] {
			continue
		}
		if !t.loaded.domContent {
			st.Client.Event("Page.domContentEventFired", s, at(t.loaded.domContentAt))
		}
		if done && !t.loaded.load {
			st.Client.Event("Page.loadEventFired", s, at(t.loaded.loadAt))
		}
		if done && !t.loaded.stopped {
			st.Client.Event("Page.frameStoppedLoading", s, map[string]string{"frameId": t.TargetID})
		}
	}
	t.loaded.domContent = true
	t.loaded.load = t.loaded.load || done
	t.loaded.stopped = t.loaded.stopped || done
}

// readyState asks t's document how far it loaded ("" when it does not
// answer within a second).
func (in *Instance) readyState(ctx context.Context, x Upstream, t *Tab) string {
	qctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	res, err := x.SendCommand(qctx, t.Id, "", "Runtime.evaluate", map[string]any{"expression": "document.readyState", "returnByValue": true, "silent": true})
	var r struct{ Result struct{ Value any } }
	if err != nil || json.Unmarshal(res, &r) != nil {
		return ""
	}
	state, _ := r.Result.Value.(string)
	return state
}
