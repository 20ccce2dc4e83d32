package relaybench

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cdprelay/cdprelay/audit"
	"github.com/cdprelay/cdprelay/internal/app"
	"github.com/cdprelay/cdprelay/relay"
)

// BenchmarkRoundTripAudit measures forwarding with auditing and metrics
// off and on, side by side. Ordinary commands are not audited one by one
// (connections, navigations, denials and take-overs are), so the
// difference is the cost of the counters on the hot path.
func BenchmarkRoundTripAudit(b *testing.B) {
	b.Run("audit=off", func(b *testing.B) { RoundTrip(b, relay.Config{}) })
	b.Run("audit=on", func(b *testing.B) {
		reg := prometheus.NewRegistry()
		log := audit.NewLog(audit.NewRing(audit.DefaultCapacity, 0), nil, audit.NewMetrics(reg))
		RoundTrip(b, relay.Config{Observer: app.AuditObserver{Log: log}, Metrics: relay.NewMetrics(reg)})
	})
}
