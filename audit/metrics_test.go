package audit

import (
	"context"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestMetrics(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := NewMetrics(reg)

	// Every series exists before anything happens.
	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
	n, err := testutil.GatherAndCount(reg, "cdprelay_audit_records_total")
	if err != nil {
		t.Fatal(err)
	}
	if n != len(knownKinds)+1 {
		t.Errorf("%d records_total series, want %d (every kind and other)", n, len(knownKinds)+1)
	}
	for _, name := range []string{"cdprelay_audit_overwritten_total", "cdprelay_audit_sink_errors_total", "cdprelay_audit_sink_dropped_total", "cdprelay_audit_followers"} {
		if n, err := testutil.GatherAndCount(reg, name); err != nil || n != 1 {
			t.Errorf("%s: %d series, %v", name, n, err)
		}
	}

	f := &fakeFile{plan: []func([]byte) (int, error){failing}}
	sink := newSink(f, false, 0, false)
	rg := NewRing(2, 0)
	log := NewLog(rg, sink, m)
	ctx := context.Background()
	for _, k := range []Kind{KindDenied, KindDenied, KindNavigate, "brand-new-kind", "https://a.example/?q=unbounded"} {
		log.Record(Record{Kind: k})
		// One record per write: only the first, failing, one is lost.
		if err := sink.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	sub := rg.Subscribe(0)

	tests := []struct {
		c    prometheus.Collector
		want float64
	}{
		{m.records[KindDenied], 2},
		{m.records[KindNavigate], 1},
		{m.records[KindConnect], 0},
		{m.other, 2},
	}
	for _, tt := range tests {
		if got := testutil.ToFloat64(tt.c); got != tt.want {
			t.Errorf("%v = %v, want %v", tt.c, got, tt.want)
		}
	}
	// The mirrored counters, through the registry as a scrape sees them.
	want := `
# HELP cdprelay_audit_followers Open follow subscriptions on the audit ring.
# TYPE cdprelay_audit_followers gauge
cdprelay_audit_followers 1
# HELP cdprelay_audit_overwritten_total Audit records the in-memory ring overwrote to make room (the audit file, if any, still has them).
# TYPE cdprelay_audit_overwritten_total counter
cdprelay_audit_overwritten_total 3
# HELP cdprelay_audit_sink_dropped_total Audit records that did not reach the audit file: its queue was full or the write failed.
# TYPE cdprelay_audit_sink_dropped_total counter
cdprelay_audit_sink_dropped_total 1
# HELP cdprelay_audit_sink_errors_total Failed writes to the audit file.
# TYPE cdprelay_audit_sink_errors_total counter
cdprelay_audit_sink_errors_total 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"cdprelay_audit_followers", "cdprelay_audit_overwritten_total",
		"cdprelay_audit_sink_dropped_total", "cdprelay_audit_sink_errors_total"); err != nil {
		t.Error(err)
	}
	// Only bounded labels: the unknown kinds did not become series.
	if n, _ := testutil.GatherAndCount(reg, "cdprelay_audit_records_total"); n != len(knownKinds)+1 {
		t.Errorf("records_total grew to %d series", n)
	}
	sub.Close()
	if got := testutil.ToFloat64(m.followers); got != 0 {
		t.Errorf("followers after Close: %v", got)
	}
	if err := log.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		c    prometheus.Collector
		want float64
	}{{m.overwritten, 3}, {m.sinkErrors, 1}, {m.sinkDropped, 1}} {
		if got := testutil.ToFloat64(c.c); got != c.want {
			t.Errorf("%v = %v, want %v", c.c, got, c.want)
		}
	}
}

// TestMetricsBeforeLog: a registry scraped before NewLog reports zeros.
func TestMetricsBeforeLog(t *testing.T) {
	m := NewMetrics(nil)
	for _, c := range []prometheus.Collector{m.overwritten, m.sinkErrors, m.sinkDropped, m.followers} {
		if got := testutil.ToFloat64(c); got != 0 {
			t.Errorf("%v = %v before NewLog", c, got)
		}
	}
}
