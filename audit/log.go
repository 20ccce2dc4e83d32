package audit

import "context"

var (
	_ Recorder = (*Log)(nil)
	_ Recorder = (*Ring)(nil)
)

// Log is the Recorder the relay is given: each record goes to the Ring,
// then to the Sink if there is one, and is counted in Metrics.
type Log struct {
	ring *Ring    // static
	sink *Sink    // static; nil when there is no audit file
	m    *Metrics // static; nil when nothing is measured
}

// NewLog returns a Log over ring. sink and m may be nil. The metrics that
// mirror the ring's and the sink's own counters read them from here on.
func NewLog(ring *Ring, sink *Sink, m *Metrics) *Log {
	if m != nil {
		m.watch(ring, sink)
	}
	return &Log{ring: ring, sink: sink, m: m}
}

// Record implements Recorder.
func (l *Log) Record(r Record) { l.Append(r) }

// Append records r and returns it as kept: sanitized, with its Seq and
// Time.
func (l *Log) Append(r Record) Record {
	r = l.ring.append(r, l.sink)
	if l.m != nil {
		l.m.recorded(r.Kind)
	}
	return r
}

// Ring is the Log's ring, for the HTTP endpoints.
func (l *Log) Ring() *Ring { return l.ring }

// Sink is the Log's file sink, or nil.
func (l *Log) Sink() *Sink { return l.sink }

// Close ends the ring's followers and drains and closes the sink.
func (l *Log) Close(ctx context.Context) error {
	l.ring.Close()
	if l.sink != nil {
		return l.sink.Close(ctx)
	}
	return nil
}
