package relay

import (
	"strings"
	"testing"

	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/config"
	"github.com/cdprelay/cdprelay/relay/internal/metrics"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/cdprelay/cdprelay/internal/fakeext"
	"github.com/cdprelay/cdprelay/relay/internal/cdp"
)

func testCounter(t *testing.T, c prometheus.Collector) float64 {
	t.Helper()
	return testutil.ToFloat64(c)
}

// The relay's metrics count what happened: each command once, after the
// limits, refusals by rule, limits by name, replies and events by domain,
// the latency of forwarded commands; and they pass the linter.
func TestMetricsValues(t *testing.T) {
	reg := prometheus.NewRegistry()
	met := metrics.New(reg)
	met.InitRules([]string{"method:Network.getAllCookies"})
	h := newHarness(t, config.Config{Metrics: met, Policy: pinPolicy{urls: make(chan string, 1)}, CommandsPerSecond: 1, CommandBurst: 10})
	e := h.ext(fakeext.Options{Tabs: twoTabs[:1]})
	c := h.client()
	sess := h.autoAttach(c)[0] // 1 command (Target.setAutoAttach)
	for i := 0; i < 3; i++ {
		h.call(c, sess, "Runtime.evaluate", map[string]any{"expression": "1"})
	}
	h.callMsg(c, sess, "Network.getAllCookies", nil)
	e.Event(1, "", "Log.entryAdded", map[string]any{"entry": map[string]any{"source": "other", "level": "info", "text": "x"}})
	h.event(c, 0, "Log.entryAdded")
	// The burst of 10 is spent by now (5 so far): the rest are limited.
	limited := 0
	for i := 0; i < 10; i++ {
		if m := h.callMsg(c, sess, "Runtime.evaluate", map[string]any{"expression": "1"}); m.Error != nil && strings.Contains(m.Error.Message, "rate limit") {
			limited++
		}
	}
	if limited == 0 {
		t.Fatal("no command was rate limited")
	}
	for _, tc := range []struct {
		name string
		c    prometheus.Collector
		want float64
	}{
		{"commands Runtime", met.Messages[metrics.DirCommand][cdp.DomainIndex("Runtime")], float64(3 + 10 - limited)},
		{"commands Network", met.Messages[metrics.DirCommand][cdp.DomainIndex("Network")], 1},
		{"commands Target", met.Messages[metrics.DirCommand][cdp.DomainIndex("Target")], 1},
		{"replies Runtime", met.Messages[metrics.DirReply][cdp.DomainIndex("Runtime")], float64(3 + 10 - limited)},
		{"events Log", met.Messages[metrics.DirEvent][cdp.DomainIndex("Log")], 1},
		{"refused getAllCookies", met.Refused.WithLabelValues("deny", "method:Network.getAllCookies"), 1},
		{"rate limited", met.Limited[metrics.LimitRate], float64(limited)},
		{"client connections", met.Connections.WithLabelValues(api.ActorClient), 1},
		{"extension connections", met.Connections.WithLabelValues(api.ActorExtension), 1},
	} {
		if got := testCounter(t, tc.c); got != tc.want {
			t.Errorf("%s = %v, want %v", tc.name, got, tc.want)
		}
	}
	if n := testutil.CollectAndCount(met.CommandLatency); n != 1 {
		t.Errorf("latency histogram: %d series", n)
	}
	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint %s: %s", p.Metric, p.Text)
	}
}
