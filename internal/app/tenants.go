package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cdprelay/cdprelay/internal/ingress"
	"github.com/cdprelay/cdprelay/internal/routes"
	"github.com/cdprelay/cdprelay/relay"
	"github.com/cdprelay/cdprelay/viewer"
)

// TenantsConfig is what the operator says of tenants (the tenants the
// tokens name, File.Tokens[].Tenant).
type TenantsConfig struct {
	// MaxInstances bounds the instances one tenant keeps. Default 10.
	MaxInstances int `json:"max_instances"`
	// Profiles names the policy profile of each tenant's instances. A
	// tenant not listed gets the global policy. Its token cannot choose
	// another.
	Profiles map[string]string `json:"profiles"`
	// InstancesGauge exports cdprelay_tenant_instances{tenant}: the
	// instances of each tenant the tokens name. Default: off, so that
	// metrics carry no tenant names.
	InstancesGauge bool `json:"instances_gauge"`
}

// defaultTenantInstances is TenantsConfig.MaxInstances's default: a
// person's laptop, desktop and a spare, with room.
const defaultTenantInstances = 10

// tenants are the tenants the file's tokens name, in order.
func (f *File) tenants() []string {
	var out []string
	for _, t := range f.Tokens {
		if t.Tenant != "" && !slices.Contains(out, t.Tenant) {
			out = append(out, t.Tenant)
		}
	}
	return out
}

// validateTenants checks the tenants section against the tokens and the
// profiles.
func (f *File) validateTenants(profiles []string) error {
	var errs []error
	if f.Tenants.MaxInstances < 0 {
		errs = append(errs, errors.New("tenants.max_instances must not be negative"))
	}
	known := f.tenants()
	names := make([]string, 0, len(f.Tenants.Profiles))
	for t := range f.Tenants.Profiles {
		names = append(names, t)
	}
	sort.Strings(names)
	for _, t := range names {
		p := f.Tenants.Profiles[t]
		switch {
		case !slices.Contains(known, t):
			errs = append(errs, fmt.Errorf("tenants.profiles: no token names the tenant %q", t))
		case !slices.Contains(profiles, p):
			errs = append(errs, fmt.Errorf("tenants.profiles.%s: %q is not one of the profiles", t, p))
		}
	}
	return errors.Join(errs...)
}

// tenantRules is what the relay is told of the file's tenants.
func (f *File) tenantRules() relay.TenantRules {
	n := f.Tenants.MaxInstances
	if n == 0 {
		n = defaultTenantInstances
	}
	return relay.TenantRules{Known: f.tenants(), MaxInstances: n, Profiles: f.Tenants.Profiles}
}

// requestTenant is the tenant a request that passed the guard acts for;
// "" is the operator.
func requestTenant(r *http.Request) string { return ingress.Tenant(r.Context()) }

// InstanceFor is the instance whose public id is id as r may see it: nil
// for one that does not exist and for another tenant's alike. Every
// handler of /v1/instances/<id>/... finds its instance here, so that a
// tenant's token cannot tell another tenant's instance from none.
func (a *App) InstanceFor(r *http.Request, id string) *relay.Instance {
	return a.relay.LookupID(requestTenant(r), id)
}

// serveInstance is GET /v1/instances/<id> (admin): its status. The scope
// is judged before the instance is looked up, and an instance r may not
// see is a 404 as one that never was.
func (a *App) serveInstance(w http.ResponseWriter, r *http.Request, rt routes.Route) {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		if !ingress.Scopes(r.Context()).Has(ingress.ScopeAdmin) {
			http.Error(w, "reading an instance needs the admin scope", http.StatusForbidden)
			return
		}
	default:
		w.Header().Set("Allow", "GET, HEAD, DELETE")
		http.Error(w, "use GET or DELETE", http.StatusMethodNotAllowed)
		return
	}
	in := a.InstanceFor(r, rt.InstanceID)
	if in == nil {
		http.NotFound(w, r)
		return
	}
	writeJSON(w, a.instanceView(in, a.live.Watches()))
}

// serveRemove is DELETE /v1/instances/<id>: the person's (the guard asked
// for the person's credential with admin or pair), as undoing a pairing.
func (a *App) serveRemove(w http.ResponseWriter, r *http.Request, rt routes.Route) {
	in := a.InstanceFor(r, rt.InstanceID)
	if in == nil {
		http.NotFound(w, r)
		return
	}
	by := personActor(r)
	if err := a.relay.Remove(in, "removed by "+by); err != nil {
		http.Error(w, err.Error(), http.StatusConflict)
		return
	}
	a.relay.Observe(relay.Event{Instance: in.ID(), Tenant: in.Tenant(), Actor: relay.ActorOperator, Kind: relay.KindRemove, Outcome: relay.OutcomeOK, Detail: "removed by " + by, By: by})
	w.WriteHeader(http.StatusNoContent)
}

// instanceView is an instance as the status endpoints show it.
type instanceView struct {
	relay.Status
	Tabs []tabView `json:"tabs"`
}

type tabView struct {
	relay.TabStatus
	viewer.Watch
}

func (a *App) instanceView(in *relay.Instance, watches map[string]map[int64]viewer.Watch) instanceView {
	st := in.Status()
	iv := instanceView{Status: st, Tabs: []tabView{}}
	for _, t := range st.Tabs {
		iv.Tabs = append(iv.Tabs, tabView{TabStatus: t, Watch: watches[st.ID][t.TabID]})
	}
	return iv
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// tenantGauge is cdprelay_tenant_instances{tenant}, counted at scrape
// time, for the tenants the tokens name: a bounded set the operator
// chose, and only when the operator switched it on.
type tenantGauge struct {
	desc    *prometheus.Desc
	relay   *relay.Server            // static
	tenants atomic.Pointer[[]string] // the tenants counted; nil or empty: off
}

func newTenantGauge(rs *relay.Server) *tenantGauge {
	return &tenantGauge{
		desc:  prometheus.NewDesc("cdprelay_tenant_instances", "Instances of each tenant the tokens name (tenants.instances_gauge).", []string{"tenant"}, nil),
		relay: rs,
	}
}

// set switches the gauge on for tenants, or off with nil.
func (g *tenantGauge) set(tenants []string) { g.tenants.Store(&tenants) }

func (g *tenantGauge) Describe(ch chan<- *prometheus.Desc) { ch <- g.desc }

func (g *tenantGauge) Collect(ch chan<- prometheus.Metric) {
	p := g.tenants.Load()
	if p == nil || len(*p) == 0 {
		return
	}
	n := make(map[string]int, len(*p))
	for _, in := range g.relay.Instances() {
		n[in.Tenant()]++
	}
	for _, t := range *p {
		ch <- prometheus.MustNewConstMetric(g.desc, prometheus.GaugeValue, float64(n[t]), t)
	}
}

// gaugeTenants is what the gauge counts under f: nothing unless switched
// on.
func (f *File) gaugeTenants() []string {
	if !f.Tenants.InstancesGauge {
		return nil
	}
	return f.tenants()
}
