package relay

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/config"

	"github.com/cdprelay/cdprelay/internal/cdptest"
	"github.com/cdprelay/cdprelay/internal/fakeext"
)

// BenchmarkStop: a client sends continuously, with commands waiting for a
// tab that takes its time; a person stops the automation. Reported, over
// b.N stops: how long from Stop to the client's first refused command
// (stop-refused-p50/p95-ms), and to the last of the commands under way
// failing (stop-inflight-p50/p95-ms). The goal: p95 under 250 ms.
func BenchmarkStop(b *testing.B) {
	srv, err := New(config.Config{CommandsPerSecond: -1})
	if err != nil {
		b.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	defer srv.Close(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	ws := "ws" + strings.TrimPrefix(hs.URL, "http")
	// The tab answers after 20 ms: commands are under way when the stop
	// comes.
	e, err := fakeext.Dial(ctx, ws+"/extension/"+srv.Default().GUID(), fakeext.Options{
		Tabs: []fakeext.Tab{{ID: 1, URL: "https://a.example/", Title: "A"}},
		Gate: func(method string, args []json.RawMessage) {
			if method == "chrome.debugger.sendCommand" && len(args) > 1 && string(args[1]) == `"Runtime.evaluate"` {
				time.Sleep(20 * time.Millisecond)
			}
		},
	})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	c, err := cdptest.Dial(ctx, ws+"/devtools/browser/"+srv.Default().GUID(), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Call(ctx, "", "Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true}); err != nil {
		b.Fatal(err)
	}
	ev, err := c.WaitEvent(ctx, "Target.attachedToTarget")
	if err != nil {
		b.Fatal(err)
	}
	var p struct{ SessionID string }
	_ = json.Unmarshal(ev.Params, &p)
	in := srv.Default()

	var refused, inflight []time.Duration
	for b.Loop() {
		// Eight commands under way, and a sender that keeps sending.
		var ids []int64
		for range 8 {
			id, _ := c.Send(p.SessionID, "Runtime.evaluate", map[string]any{"expression": "1"})
			ids = append(ids, id)
		}
		stopSending := make(chan struct{})
		var wg sync.WaitGroup
		var firstRefused time.Time
		var mu sync.Mutex
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stopSending:
					return
				default:
				}
				m, err := c.CallMessage(ctx, p.SessionID, "Runtime.evaluate", map[string]any{"expression": "2"})
				// A refused evaluation is answered as thrown (isScript).
				if err == nil && m.Error == nil && bytes.Contains(m.Result, []byte(api.MsgStopped)) {
					mu.Lock()
					if firstRefused.IsZero() {
						firstRefused = time.Now()
					}
					mu.Unlock()
					return
				}
			}
		}()
		time.Sleep(5 * time.Millisecond) // the commands reach the tab
		at := time.Now()
		if err := in.Stop("bench"); err != nil {
			b.Fatal(err)
		}
		var last time.Time
		for _, id := range ids {
			if _, _, err := c.WaitReply(ctx, id); err != nil {
				b.Fatal(err)
			}
			last = time.Now()
		}
		wg.Wait()
		close(stopSending)
		refused = append(refused, firstRefused.Sub(at))
		inflight = append(inflight, last.Sub(at))
		if err := in.Resume("bench"); err != nil {
			b.Fatal(err)
		}
	}
	pct := func(d []time.Duration, q float64) float64 {
		s := slices.Clone(d)
		slices.Sort(s)
		return float64(s[min(len(s)-1, int(q*float64(len(s))))]) / float64(time.Millisecond)
	}
	b.ReportMetric(pct(refused, 0.5), "stop-refused-p50-ms")
	b.ReportMetric(pct(refused, 0.95), "stop-refused-p95-ms")
	b.ReportMetric(pct(inflight, 0.5), "stop-inflight-p50-ms")
	b.ReportMetric(pct(inflight, 0.95), "stop-inflight-p95-ms")
}
