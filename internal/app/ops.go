package app

import (
	"net/http"
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
