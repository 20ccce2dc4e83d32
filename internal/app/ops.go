package app

import (
	"encoding/json"
	"net/http"

	"github.com/cdprelay/cdprelay/relay"
	"github.com/cdprelay/cdprelay/viewer"
)

// serveStatus is GET /v1/instances: every instance with its tabs, and what
// the live view does with each tab.
func (a *App) serveStatus(w http.ResponseWriter, _ *http.Request) {
	type tab struct {
		relay.TabStatus
		viewer.Watch
	}
	type instance struct {
		relay.Status
		Tabs []tab `json:"tabs"`
	}
	out := struct {
		Instances []instance `json:"instances"`
	}{Instances: []instance{}}
	watches := a.live.Watches()
	for _, in := range a.relay.Instances() {
		st := in.Status()
		iv := instance{Status: st, Tabs: []tab{}}
		for _, t := range st.Tabs {
			iv.Tabs = append(iv.Tabs, tab{TabStatus: t, Watch: watches[st.ID][t.TabID]})
		}
		out.Instances = append(out.Instances, iv)
	}
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(out)
}
