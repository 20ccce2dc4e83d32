package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cdprelay/cdprelay/internal/cdptest"
)

// workload is one kind of command, sent n times per visit by conc workers
// that each keep one command in flight.
type workload struct {
	key    string // short name, for tables
	method string
	params []byte
	conc   int
	n      int
	// raw sends method as it is on the connection, not to the tab, and
	// counts an error reply as an answer: a round trip through the peer
	// and nothing behind it.
	raw bool
}

// sample is one visit's measurement of one workload on one path.
type sample struct {
	lat     []time.Duration
	elapsed time.Duration
	cpu     cpuSnapshot
	size    int // bytes of the last result
}

// run sends w.n commands through r and times each.
func (w workload) run(ctx context.Context, r route, pgid int) (sample, error) {
	var (
		next  atomic.Int64
		wg    sync.WaitGroup
		mu    sync.Mutex
		lat   = make([]time.Duration, 0, w.n)
		size  int
		first error
	)
	before := takeCPU(pgid)
	start := time.Now()
	for range w.conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine := make([]time.Duration, 0, w.n/w.conc+1)
			ch := make(chan cdptest.Reply, 1)
			build := func(b []byte, id int64) []byte { return r.frame(b, id, w.method, w.params) }
			if w.raw {
				build = func(b []byte, id int64) []byte { return cdptest.AppendCommand(b, id, "", w.method, w.params) }
			}
			var err error
			var last int
			for next.Add(1) <= int64(w.n) {
				t0 := time.Now()
				if err = r.c.Send(ch, build); err != nil {
					break
				}
				var res cdptest.Reply
				select {
				case res = <-ch:
				case <-ctx.Done():
					res.Err = ctx.Err()
				}
				t1 := time.Now()
				if err = res.Err; err != nil && !(w.raw && res.Refused) {
					break
				}
				err = nil
				if r.tap != nil {
					r.tap.command(t0, t1)
				}
				d := t1.Sub(t0)
				mine = append(mine, d)
				last = len(res.Result)
			}
			mu.Lock()
			lat = append(lat, mine...)
			size = max(size, last)
			if err != nil && first == nil {
				first = fmt.Errorf("%s: %w", w.method, err)
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	s := sample{lat: lat, elapsed: time.Since(start), size: size}
	s.cpu = takeCPU(pgid).sub(before)
	return s, first
}

// stats summarises the samples of one workload on one path over every
// round.
type stats struct {
	n             int
	p50, p95, p99 time.Duration
	perSec        float64       // commands completed per second of wall time
	roundP50      []float64     // each round's p50 in µs, for paired ratios
	roundP99      []float64     // each round's p99 in µs
	roundRate     []float64     // each round's throughput
	cpu           cpuSnapshot   // summed over rounds
	size          int           // largest result seen
	mean          time.Duration // of the latencies
}

func summarise(ss []sample) stats {
	var st stats
	var all []time.Duration
	var elapsed time.Duration
	for _, s := range ss {
		all = append(all, s.lat...)
		elapsed += s.elapsed
		st.cpu.add(s.cpu)
		st.size = max(st.size, s.size)
		lat := sorted(s.lat)
		st.roundP50 = append(st.roundP50, micros(percentile(lat, 50)))
		st.roundP99 = append(st.roundP99, micros(percentile(lat, 99)))
		st.roundRate = append(st.roundRate, float64(len(s.lat))/s.elapsed.Seconds())
	}
	if len(all) == 0 {
		return st
	}
	slices.Sort(all)
	st.n = len(all)
	st.p50, st.p95, st.p99 = percentile(all, 50), percentile(all, 95), percentile(all, 99)
	st.perSec = float64(len(all)) / elapsed.Seconds()
	var sum time.Duration
	for _, d := range all {
		sum += d
	}
	st.mean = sum / time.Duration(len(all))
	return st
}

func sorted(d []time.Duration) []time.Duration {
	d = slices.Clone(d)
	slices.Sort(d)
	return d
}

// percentile is the nearest-rank percentile of sorted durations.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p/100*float64(len(sorted))+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// median of xs, which it sorts.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	if len(xs)%2 == 1 {
		return xs[len(xs)/2]
	}
	return (xs[len(xs)/2-1] + xs[len(xs)/2]) / 2
}

// pairRatios divides round by round: the rounds are interleaved, so a
// round's noise hits both figures alike.
func pairRatios(a, b []float64) []float64 {
	n := min(len(a), len(b))
	out := make([]float64, 0, n)
	for i := range n {
		if b[i] > 0 {
			out = append(out, a[i]/b[i])
		}
	}
	return out
}

func pairDiffs(a, b []float64) []float64 {
	n := min(len(a), len(b))
	out := make([]float64, 0, n)
	for i := range n {
		out = append(out, a[i]-b[i])
	}
	return out
}

// fmtDur prints a latency in the unit that suits it.
func fmtDur(d time.Duration) string {
	switch {
	case d < 10*time.Millisecond:
		return strconv.FormatFloat(micros(d), 'f', 0, 64) + " µs"
	default:
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64) + " ms"
	}
}
