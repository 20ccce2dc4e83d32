package relaybench

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cdprelay/cdprelay/audit"
	"github.com/cdprelay/cdprelay/relay"
)

type auditObserver struct{ log *audit.Log }

func (o auditObserver) Observe(ev relay.Event) {
	o.log.Record(audit.Record{Instance: ev.Instance, Actor: audit.Actor(ev.Actor), Kind: audit.Kind(ev.Kind), Method: ev.Method, Outcome: audit.Outcome(ev.Outcome), Detail: ev.Detail})
}

// BenchmarkRoundTripAudit measures forwarding with auditing and metrics
// off and on, side by side. Ordinary commands are not audited one by one
// (connections, navigations, denials and take-overs are), so the
// difference is the cost of the counters on the hot path.
func BenchmarkRoundTripAudit(b *testing.B) {
	b.Run("audit=off", func(b *testing.B) { RoundTrip(b, relay.Config{}) })
	b.Run("audit=on", func(b *testing.B) {
		reg := prometheus.NewRegistry()
		log := audit.NewLog(audit.NewRing(audit.DefaultCapacity, 0), nil, audit.NewMetrics(reg))
		RoundTrip(b, relay.Config{Observer: auditObserver{log}, Metrics: relay.NewMetrics(reg)})
	})
}
