package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cdprelay/cdprelay/audit"
	"github.com/cdprelay/cdprelay/relay"
)

// Bounds over the warm-up's baseline. Faults come and go (a reconnecting
// client, a burst of hostile frames, frozen viewers), so a few hundred
// goroutines and some frames' worth of heap above the baseline are normal;
// a leak of one goroutine per operation or per fault passes them within
// minutes.
const (
	goroutineSlack = 200
	heapSlack      = 64 << 20
)

// resources watches the process's goroutines and heap. The most it sees
// during the warm-up is the baseline; after it, both must stay within a
// bound of the baseline, or something is leaking.
type resources struct {
	t    *tally
	warm time.Duration // static

	mu                  sync.Mutex
	baseG, maxG, boundG int    // guarded by mu
	baseH, maxH, boundH uint64 // guarded by mu: HeapInuse
	overG, overH        bool   // guarded by mu: a violation was reported
	warmedUp            bool   // guarded by mu
}

func newResources(t *tally, warm time.Duration) *resources {
	return &resources{t: t, warm: warm}
}

func (r *resources) run(ctx context.Context) {
	start := time.Now()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		r.sample(time.Since(start) >= r.warm)
	}
}

func (r *resources) sample(warm bool) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	g, h := runtime.NumGoroutine(), ms.HeapInuse
	r.mu.Lock()
	defer r.mu.Unlock()
	if !warm {
		r.baseG, r.baseH = max(r.baseG, g), max(r.baseH, h)
		return
	}
	if !r.warmedUp {
		r.warmedUp = true
		r.boundG = r.baseG + max(goroutineSlack, r.baseG/2)
		r.boundH = 2*r.baseH + heapSlack
		fmt.Printf("warm-up over: baseline %d goroutines, heap %s; bounds %d goroutines, heap %s\n", r.baseG, mib(r.baseH), r.boundG, mib(r.boundH))
	}
	r.maxG, r.maxH = max(r.maxG, g), max(r.maxH, h)
	if g > r.boundG && !r.overG {
		r.overG = true
		r.t.violate("%d goroutines, above the bound of %d (baseline %d)", g, r.boundG, r.baseG)
	}
	if h > r.boundH && !r.overH {
		r.overH = true
		r.t.violate("heap in use %s, above the bound of %s (baseline %s)", mib(h), mib(r.boundH), mib(r.baseH))
	}
}

// settled checks that once the load has stopped the goroutines are back
// near the baseline: anything left above it is a leak.
func (r *resources) settled(wait time.Duration) string {
	deadline := time.Now().Add(wait)
	var g int
	r.mu.Lock()
	limit := r.baseG + 50
	r.mu.Unlock()
	for {
		runtime.GC()
		g = runtime.NumGoroutine()
		if g <= limit || time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	r.mu.Lock()
	defer r.mu.Unlock()
	if g > limit {
		r.t.violate("%d goroutines %v after the load stopped, baseline %d: a leak", g, wait, r.baseG)
	}
	return fmt.Sprintf("goroutines: baseline %d, max %d (bound %d), after the load %d; heap: baseline %s, max %s (bound %s), after the load %s",
		r.baseG, r.maxG, r.boundG, g, mib(r.baseH), mib(r.maxH), mib(r.boundH), mib(ms.HeapInuse))
}

func mib(b uint64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// auditWatch reads the audit ring as it fills and checks that its sequence
// has no gap: every record numbered, none lost, none twice.
type auditWatch struct {
	t        *tally
	ring     *audit.Ring
	instance string // static: the default instance's id

	// extConnects counts the default instance's extension connections, so
	// that a fault knows when the extension it sent away is back.
	extConnects atomic.Int64

	mu   sync.Mutex
	last uint64 // guarded by mu: the Seq of the last record read
}

func (a *auditWatch) run(ctx context.Context) {
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			a.read()
			return
		case <-tick.C:
			a.read()
		}
	}
}

func (a *auditWatch) read() {
	a.mu.Lock()
	defer a.mu.Unlock()
	recs, _, gap := a.ring.Query(audit.Filter{Since: a.last})
	if gap {
		a.t.violate("audit: records after %d were lost before they could be read", a.last)
	}
	for _, r := range recs {
		if r.Seq != a.last+1 {
			a.t.violate("audit: record %d follows %d", r.Seq, a.last)
		}
		a.last = r.Seq
		a.t.inc("audit", string(r.Kind))
		if r.Instance == a.instance && r.Actor == relay.ActorExtension && r.Kind == relay.KindConnect {
			a.extConnects.Add(1)
		}
	}
}

// checkFile checks the audit file against the ring: one line per record,
// numbered 1..last without a gap, unless the sink had to drop some (then
// it says so, and that is reported rather than failed).
func checkAuditFile(t *tally, path string, last, dropped uint64) string {
	f, err := os.Open(path)
	if err != nil {
		t.violate("audit file: %v", err)
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var n uint64
	for sc.Scan() {
		var r struct {
			Seq uint64 `json:"seq"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.violate("audit file line %d: %v", n+1, err)
			return ""
		}
		if r.Seq != n+1 && dropped == 0 {
			t.violate("audit file: record %d at line %d", r.Seq, n+1)
			return ""
		}
		n++
	}
	if dropped == 0 && n != last {
		t.violate("audit file has %d records, the ring handed out %d", n, last)
	}
	return fmt.Sprintf("audit: %d records, sequence 1..%d without a gap in the ring and the file (%d dropped from the file)", last, n, dropped)
}
