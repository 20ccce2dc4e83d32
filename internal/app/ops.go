package app

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/cdprelay/cdprelay/internal/ingress"
	"github.com/cdprelay/cdprelay/internal/routes"
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

// servePerson is POST /v1/instances/<id>/stop and /resume: a person's
// brake on an instance's automation, for programs (the live view does the
// same over its socket).
func (a *App) servePerson(w http.ResponseWriter, r *http.Request, rt routes.Route) {
	w.Header().Set("Content-Type", "application/json")
	fail := func(code int, msg string) {
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
	}
	if rt.Kind != routes.KindPerson {
		w.Header().Set("Allow", http.MethodPost)
		fail(http.StatusMethodNotAllowed, rt.Action+" takes POST")
		return
	}
	var in *relay.Instance
	for _, x := range a.relay.Instances() {
		if x.ID() == rt.Instance {
			in = x
		}
	}
	if in == nil {
		fail(http.StatusNotFound, "no instance "+rt.Instance)
		return
	}
	by := "the operator"
	if g, ok := ingress.GrantFrom(r.Context()); ok && g.TokenName != "" {
		by = g.TokenName
	}
	var err error
	if rt.Action == "stop" {
		err = in.Stop(by)
	} else {
		err = in.Resume(by)
	}
	switch {
	case errors.Is(err, relay.ErrStopped), errors.Is(err, relay.ErrNotStopped):
		fail(http.StatusConflict, err.Error())
		return
	case err != nil:
		fail(http.StatusInternalServerError, err.Error())
		return
	}
	stopped, who := in.Stopped()
	_ = json.NewEncoder(w).Encode(map[string]any{"instance": in.ID(), "stopped": stopped, "by": who})
}
