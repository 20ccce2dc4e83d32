package main

import (
	"encoding/json"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/cdprelay/cdprelay/audit"
	"github.com/cdprelay/cdprelay/relay"
	"github.com/cdprelay/cdprelay/viewer"
)

// opsMux serves what an operator reads: the audit log, instance status
// and metrics. Everything else (the live view) goes to next.
func opsMux(instances func() []*relay.Instance, live func() map[string]map[int64]viewer.Watch, ring *audit.Ring, reg *prometheus.Registry, next http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	audits := ring.Handler()
	mux.Handle("GET /v1/audit", audits)
	mux.Handle("GET /v1/audit/follow", audits)
	mux.HandleFunc("GET /v1/instances", func(w http.ResponseWriter, r *http.Request) {
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
		var watches map[string]map[int64]viewer.Watch
		if live != nil {
			watches = live()
		}
		for _, in := range instances() {
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
	})
	if next != nil {
		mux.Handle("/", next)
	}
	return mux
}

// auditObserver records the relay's observations in the audit log.
type auditObserver struct{ log *audit.Log }

func (o auditObserver) Observe(ev relay.Event) {
	detail := ev.Detail
	if ev.Rule != "" {
		detail = "rule " + ev.Rule
		if ev.Detail != "" {
			detail += ": " + ev.Detail
		}
	}
	o.log.Record(audit.Record{
		Instance: ev.Instance,
		Actor:    audit.Actor(ev.Actor),
		Kind:     audit.Kind(ev.Kind),
		Method:   ev.Method,
		Target:   ev.Target,
		Outcome:  audit.Outcome(ev.Outcome),
		Detail:   detail,
	})
}
