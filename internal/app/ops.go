package app

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/cdprelay/cdprelay/internal/ingress"
	"github.com/cdprelay/cdprelay/internal/routes"
	"github.com/cdprelay/cdprelay/relay"
)

// serveStatus is GET /v1/instances: every instance the request may see
// (a tenant's own, or all for the operator) with its tabs, and what the
// live view does with each tab.
func (a *App) serveStatus(w http.ResponseWriter, r *http.Request) {
	out := struct {
		Instances []instanceView `json:"instances"`
	}{Instances: []instanceView{}}
	watches := a.live.Watches()
	for _, in := range a.relay.InstancesOf(requestTenant(r)) {
		out.Instances = append(out.Instances, a.instanceView(in, watches))
	}
	writeJSON(w, out)
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
	// Another tenant's instance is not found, like one that never was,
	// and the answer names neither.
	in := a.InstanceFor(r, rt.InstanceID)
	if in == nil {
		w.Header().Del("Content-Type")
		http.NotFound(w, r)
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
