package screencast

import "github.com/prometheus/client_golang/prometheus"

// DropReason says why a frame did not reach a subscriber. The set is
// closed: every value is a label that starts at zero.
type DropReason string

const (
	// DropSlowSubscriber: a newer frame replaced it in the subscriber's
	// slot before the subscriber took it.
	DropSlowSubscriber DropReason = "slow_subscriber"
	// DropUnsubscribed: it was still in the slot when the subscriber left.
	DropUnsubscribed DropReason = "unsubscribed"
	// DropBacklog: frames came faster than the tap could decode them. The
	// CDP client's screencast can do that; the tap's own cannot, since
	// Chrome sends its frames only as fast as they are acked.
	DropBacklog DropReason = "backlog"
	// DropMalformed: the event could not be decoded.
	DropMalformed DropReason = "malformed"
	// DropStopped: it arrived after the tap had stopped.
	DropStopped DropReason = "stopped"
)

var dropReasons = []DropReason{DropSlowSubscriber, DropUnsubscribed, DropBacklog, DropMalformed, DropStopped}

// Metrics counts what every tap does. A nil *Metrics counts nothing.
type Metrics struct {
	framesReceived *prometheus.CounterVec
	bytesReceived  prometheus.Counter
	framesSent     prometheus.Counter
	framesDropped  *prometheus.CounterVec
	taps           prometheus.Gauge
	subscribers    prometheus.Gauge

	// Resolved once: the hot path does no label lookups.
	recvOwn, recvClient prometheus.Counter
	dropped             map[DropReason]prometheus.Counter
}

// NewMetrics creates the screencast metrics and registers them on reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		framesReceived: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cdprelay_screencast_frames_received_total",
			Help: "Screencast frames the taps received, by whose screencast they belong to (own: the live view's; client: the CDP client's, shown but acked by the client).",
		}, []string{"source"}),
		bytesReceived: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "cdprelay_screencast_received_bytes_total",
			Help: "Bytes of JPEG the taps decoded.",
		}),
		framesSent: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "cdprelay_screencast_frames_sent_total",
			Help: "Frames subscribers took from their slot (one per frame per subscriber).",
		}),
		framesDropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "cdprelay_screencast_frames_dropped_total",
			Help: "Frames that did not reach a subscriber, by reason.",
		}, []string{"reason"}),
		taps: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "cdprelay_screencast_taps",
			Help: "Tabs being screencast for the live view.",
		}),
		subscribers: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "cdprelay_screencast_subscribers",
			Help: "Subscribers across all taps.",
		}),
		dropped: make(map[DropReason]prometheus.Counter, len(dropReasons)),
	}
	m.recvOwn = m.framesReceived.WithLabelValues("own")
	m.recvClient = m.framesReceived.WithLabelValues("client")
	for _, r := range dropReasons {
		m.dropped[r] = m.framesDropped.WithLabelValues(string(r))
	}
	for _, c := range []prometheus.Collector{m.framesReceived, m.bytesReceived, m.framesSent, m.framesDropped, m.taps, m.subscribers} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func (m *Metrics) received(f *Frame) {
	if m == nil {
		return
	}
	if f.ClientOwned {
		m.recvClient.Inc()
	} else {
		m.recvOwn.Inc()
	}
	m.bytesReceived.Add(float64(len(f.JPEG)))
}

func (m *Metrics) sent() {
	if m != nil {
		m.framesSent.Inc()
	}
}

func (m *Metrics) drop(r DropReason) {
	if m != nil {
		m.dropped[r].Inc()
	}
}

func (m *Metrics) tapDelta(d float64) {
	if m != nil {
		m.taps.Add(d)
	}
}

func (m *Metrics) subDelta(d float64) {
	if m != nil {
		m.subscribers.Add(d)
	}
}
