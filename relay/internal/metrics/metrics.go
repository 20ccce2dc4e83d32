// Package metrics holds the relay's Prometheus metrics: counters resolved
// once, so that counting a message on the per-message path is an atomic
// add. The core counts; the facade registers and serves them.
//
// It is a leaf: it imports the shared vocabulary (api), the protocol's
// domains (cdp) and Prometheus, never the core or a stage.
package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/cdp"
)

// Limit names, the label values of cdprelay_relay_limited_total.
const (
	LimitRate      = "rate"
	LimitInFlight  = "in-flight"
	LimitQueue     = "client-queue"
	LimitInstances = "instances"
	LimitIdle      = "idle"
	LimitSize      = "message-size"
	// What a peer can make an instance hold (bounds.go).
	LimitTabs          = "tabs"
	LimitChildSessions = "child-sessions"
	LimitFrames        = "frames"
	LimitDomains       = "session-domains"
)

// LimitNames lists every limit, for counters that start at zero.
var LimitNames = []string{LimitRate, LimitInFlight, LimitQueue, LimitInstances, LimitIdle, LimitSize,
	LimitTabs, LimitChildSessions, LimitFrames, LimitDomains}

// Message directions.
const (
	DirCommand = iota // client → tab
	DirReply          // tab → client, a reply
	DirEvent          // tab → client, an event
	numDirs
)

var dirNames = [numDirs]string{"command", "reply", "event"}

// Metrics are the relay's Prometheus metrics. Counters are resolved once,
// so that counting a message on the hot path is an atomic add.
type Metrics struct {
	Messages [numDirs][]prometheus.Counter // by direction and domain index
	Bytes    [numDirs]prometheus.Counter

	Connections    *prometheus.GaugeVec
	CommandLatency prometheus.Histogram
	Refused        *prometheus.CounterVec // by verdict and rule
	ExtConnects    prometheus.Counter
	Panics         prometheus.Counter
	Discarded      map[string]prometheus.Counter // by peer
	Limited        map[string]prometheus.Counter // by limit name
	Stops          prometheus.Counter
	DialogAnswers  map[string]prometheus.Counter // by who answered
	Approvals      map[string]prometheus.Counter // by answer
	BatchesIn      prometheus.Counter            // batch frames from an extension
	BatchesOut     prometheus.Counter            // batch frames to an extension
	reg            prometheus.Registerer
}

// New creates the relay's metrics and registers them on reg (nil: not
// registered, still counted).
func New(reg prometheus.Registerer) *Metrics {
	m := &Metrics{reg: reg}
	msgs := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "cdprelay_relay_messages_total",
		Help: "CDP messages relayed between clients and tabs, by direction and CDP domain.",
	}, []string{"direction", "domain"})
	byteVec := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "cdprelay_relay_message_bytes_total",
		Help: "Bytes of CDP messages relayed, by direction.",
	}, []string{"direction"})
	for d := range numDirs {
		m.Bytes[d] = byteVec.WithLabelValues(dirNames[d])
		m.Messages[d] = make([]prometheus.Counter, len(cdp.Domains))
		for i, dom := range cdp.Domains {
			m.Messages[d][i] = msgs.WithLabelValues(dirNames[d], dom)
		}
	}
	m.Connections = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "cdprelay_relay_connections",
		Help: "Open WebSocket connections, by peer.",
	}, []string{"peer"})
	for _, p := range []string{api.ActorClient, api.ActorExtension} {
		m.Connections.WithLabelValues(p)
	}
	m.CommandLatency = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "cdprelay_relay_command_duration_seconds",
		Help: "Time from a client's command being forwarded to the extension until its reply.",
		// From a fast local evaluate (~0.5 ms) to a slow navigation.
		Buckets: prometheus.ExponentialBuckets(0.00025, 2, 16),
	})
	m.Refused = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "cdprelay_policy_refusals_total",
		Help: "Client commands the policy denied or acked and dropped, by verdict and rule.",
	}, []string{"verdict", "rule"})
	m.ExtConnects = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "cdprelay_relay_extension_connects_total",
		Help: "Extension connections accepted; more than one per instance means reconnects.",
	})
	m.Panics = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "cdprelay_relay_panics_total",
		Help: "Panics recovered in an instance's goroutines; each ended that instance's connections.",
	})
	discarded := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "cdprelay_relay_discarded_messages_total",
		Help: "Messages still queued for a peer when its connection ended, and so never sent, by peer.",
	}, []string{"peer"})
	m.Discarded = map[string]prometheus.Counter{}
	for _, p := range []string{api.ActorClient, api.ActorExtension} {
		m.Discarded[p] = discarded.WithLabelValues(p)
	}
	limited := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "cdprelay_relay_limited_total",
		Help: "Commands refused or connections closed by a limit, by limit.",
	}, []string{"limit"})
	m.Limited = make(map[string]prometheus.Counter, len(LimitNames))
	for _, l := range LimitNames {
		m.Limited[l] = limited.WithLabelValues(l)
	}
	m.Stops = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "cdprelay_person_stops_total",
		Help: "Times a person stopped an instance's automation.",
	})
	dialogs := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "cdprelay_person_dialogs_total",
		Help: "JavaScript dialogs of shared tabs, by who answered them (automation, person, timeout, page).",
	}, []string{"answered_by"})
	m.DialogAnswers = map[string]prometheus.Counter{}
	for _, w := range api.DialogAnswerers {
		m.DialogAnswers[w] = dialogs.WithLabelValues(w)
	}
	approvals := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "cdprelay_person_approvals_total",
		Help: "Commands held for a person's approval, by answer (approved, denied, timeout, stopped, gone).",
	}, []string{"answer"})
	m.Approvals = map[string]prometheus.Counter{}
	for _, a := range api.ApprovalAnswers {
		m.Approvals[a] = approvals.WithLabelValues(a)
	}
	batches := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "cdprelay_relay_extension_batches_total",
		Help: "Batch frames (several protocol messages in one frame) between the relay and extensions that take them, by direction.",
	}, []string{"direction"})
	m.BatchesIn, m.BatchesOut = batches.WithLabelValues("from_extension"), batches.WithLabelValues("to_extension")
	if reg != nil {
		reg.MustRegister(msgs, byteVec, m.Connections, m.CommandLatency, m.Refused, m.ExtConnects, m.Panics, discarded, limited, m.Stops, dialogs, approvals, batches)
	}
	return m
}

// Panicked counts a panic that a part other than the relay recovered (a
// viewer, a screencast tap): cdprelay_relay_panics_total counts them all.
func (m *Metrics) Panicked() { m.Panics.Inc() }

// InitRules starts the refusal counters of every rule at zero.
func (m *Metrics) InitRules(rules []string) {
	for _, r := range rules {
		m.Refused.WithLabelValues("deny", r)
		m.Refused.WithLabelValues("ack-and-drop", r)
	}
}

// Count counts a message n bytes long going in direction dir, of the
// domain with index domain in cdp.Domains (looked up once per method:
// core's MethodInfo.Domain).
func (m *Metrics) Count(dir, domain, n int) {
	m.Messages[dir][domain].Inc()
	m.Bytes[dir].Add(float64(n))
}

// CountRefusal counts a command refused by d.
func (m *Metrics) CountRefusal(d api.Decision) {
	v := "deny"
	if d.Verdict == api.AckAndDrop {
		v = "ack-and-drop"
	}
	rule := d.Rule
	if rule == "" {
		rule = "other"
	}
	m.Refused.WithLabelValues(v, rule).Inc()
}

// ObserveLatency records how long a command took since start (zero: not
// timed).
func (m *Metrics) ObserveLatency(start time.Time) {
	if !start.IsZero() {
		m.CommandLatency.Observe(time.Since(start).Seconds())
	}
}

// RegisterInstances adds a gauge of instances by state ("waiting",
// "ready" or "driven"), read at scrape time from states: each instance's.
func (m *Metrics) RegisterInstances(states func() []string) {
	if m.reg == nil {
		return
	}
	for _, state := range []string{"waiting", "ready", "driven"} {
		state := state
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name:        "cdprelay_relay_instances",
			Help:        "Instances by state: waiting for an extension, ready (extension connected), driven (a client is connected).",
			ConstLabels: prometheus.Labels{"state": state},
		}, func() float64 {
			n := 0
			for _, s := range states() {
				if s == state {
					n++
				}
			}
			return float64(n)
		}))
	}
}
