package audit

import (
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
)

// otherKind labels the records whose Kind is not one of the constants.
const otherKind = "other"

// Metrics measures a Log. The counters that the Ring and the Sink keep
// themselves (overwritten records, sink errors and drops, followers) are
// read from them at scrape time rather than mirrored, so the two can
// never disagree.
type Metrics struct {
	records     map[Kind]prometheus.Counter // static after NewMetrics
	other       prometheus.Counter          // static
	overwritten prometheus.CounterFunc      // static
	sinkErrors  prometheus.CounterFunc      // static
	sinkDropped prometheus.CounterFunc      // static
	followers   prometheus.GaugeFunc        // static

	ring atomic.Pointer[Ring] // set by NewLog
	sink atomic.Pointer[Sink] // set by NewLog; nil without an audit file
}

// NewMetrics registers the audit metrics on reg (if reg is not nil). Every
// series exists from the start, at zero. Give it to one Log.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{records: make(map[Kind]prometheus.Counter, len(knownKinds))}
	records := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "cdprelay_audit_records_total",
		Help: "Audit records appended, by kind; kinds this build does not know are counted as \"other\".",
	}, []string{"kind"})
	for _, k := range knownKinds {
		m.records[k] = records.WithLabelValues(string(k))
	}
	m.other = records.WithLabelValues(otherKind)
	fromRing := func(f func(*Ring) float64) func() float64 {
		return func() float64 {
			if rg := m.ring.Load(); rg != nil {
				return f(rg)
			}
			return 0
		}
	}
	fromSink := func(f func(*Sink) uint64) func() float64 {
		return func() float64 { return float64(f(m.sink.Load())) } // nil-safe
	}
	m.overwritten = prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "cdprelay_audit_overwritten_total",
		Help: "Audit records the in-memory ring overwrote to make room (the audit file, if any, still has them).",
	}, fromRing(func(rg *Ring) float64 { return float64(rg.Overwritten()) }))
	m.sinkErrors = prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "cdprelay_audit_sink_errors_total",
		Help: "Failed writes to the audit file.",
	}, fromSink((*Sink).Errors))
	m.sinkDropped = prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "cdprelay_audit_sink_dropped_total",
		Help: "Audit records that did not reach the audit file: its queue was full or the write failed.",
	}, fromSink((*Sink).Dropped))
	m.followers = prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "cdprelay_audit_followers",
		Help: "Open follow subscriptions on the audit ring.",
	}, fromRing(func(rg *Ring) float64 { return float64(rg.Followers()) }))
	if reg != nil {
		reg.MustRegister(records, m.overwritten, m.sinkErrors, m.sinkDropped, m.followers)
	}
	return m
}

func (m *Metrics) watch(rg *Ring, s *Sink) {
	m.ring.Store(rg)
	m.sink.Store(s)
}

func (m *Metrics) recorded(k Kind) {
	if c, ok := m.records[k]; ok {
		c.Inc()
		return
	}
	m.other.Inc()
}
