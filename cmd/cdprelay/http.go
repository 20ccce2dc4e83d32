package main

import (
	"encoding/json"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/cdprelay/cdprelay/audit"
	"github.com/cdprelay/cdprelay/relay"
)

// opsMux serves what an operator reads: the audit log, instance status
// and metrics. Everything else (the live view) goes to next.
func opsMux(instances func() []*relay.Instance, ring *audit.Ring, reg *prometheus.Registry, next http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	audits := ring.Handler()
	mux.Handle("GET /v1/audit", audits)
	mux.Handle("GET /v1/audit/follow", audits)
	mux.HandleFunc("GET /v1/instances", func(w http.ResponseWriter, r *http.Request) {
		out := struct {
			Instances []relay.Status `json:"instances"`
		}{Instances: []relay.Status{}}
		for _, in := range instances() {
			out.Instances = append(out.Instances, in.Status())
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
