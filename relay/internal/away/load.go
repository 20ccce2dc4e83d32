package away

import (
	"context"
	"encoding/json"
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/core"
)

// The load a client did not see (wait.go, resume.go). The replay makes
// Chrome send a document's past lifecycle events again, not
// Page.domContentEventFired, loadEventFired or the main frame's
// frameStoppedLoading: the sessions that enabled Page are told those, with
// the lifecycle's times (else readyState's word), never on a blind tab.

// tellLoaded tells the sessions of t, resumed through x (unless failed),
// that enabled Page the load events of its document they missed.
func tellLoaded(ctx context.Context, in *core.Instance, x core.Upstream, t *core.Tab, failed error) {
	st := in.Lock()
	d, loader := t.Loaded, t.LoaderID
	stopped := st.StoppedBy != "" // a stopped page's script may be held
	ask := failed == nil && d.Seen && loader != "" && t.Acc.Level != api.Blind && !(d.DOMContent && d.Load && d.Stopped)
	in.Unlock()
	if !ask {
		return
	}
	state := "complete"
	if d.LoadAt == nil {
		// No lifecycle event said the document loaded: its readyState
		// says how far it did (never asked of a stopped page).
		if stopped {
			return
		}
		state = readyState(ctx, x, t)
	}
	st = in.Lock()
	defer in.Unlock()
	if st.Client == nil || t.LoaderID != loader || t.Acc.Level == api.Blind || state != "interactive" && state != "complete" {
		return // another document meanwhile tells its own
	}
	at := func(ts json.RawMessage) map[string]any {
		if ts == nil {
			return map[string]any{"timestamp": float64(time.Now().UnixMilli()) / 1000}
		}
		return map[string]any{"timestamp": ts}
	}
	done := state == "complete"
	for _, s := range st.TopSessions(t) {
		if !s.Enabled["Page"] {
			continue
		}
		if !t.Loaded.DOMContent {
			st.Client.Event("Page.domContentEventFired", s, at(t.Loaded.DOMContentAt))
		}
		if done && !t.Loaded.Load {
			st.Client.Event("Page.loadEventFired", s, at(t.Loaded.LoadAt))
		}
		if done && !t.Loaded.Stopped {
			st.Client.Event("Page.frameStoppedLoading", s, map[string]string{"frameId": t.TargetID})
		}
	}
	t.Loaded.DOMContent = true
	t.Loaded.Load = t.Loaded.Load || done
	t.Loaded.Stopped = t.Loaded.Stopped || done
}

// readyState asks t's document how far it loaded ("" when it does not
// answer within a second).
func readyState(ctx context.Context, x core.Upstream, t *core.Tab) string {
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
