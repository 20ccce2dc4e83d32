package main

import (
	"bufio"
	"bytes"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"time"

	"github.com/cdprelay/cdprelay/internal/cputime"
)

// memSnap is the process's memory at one moment, after a full collection.
type memSnap struct {
	heap, stack uint64 // HeapInuse, StackInuse
	rss         uint64 // VmRSS
	goroutines  int
}

// snapshot collects garbage and returns what is left in use. The memory
// freed is handed back to the OS first, so that RSS compares like with like
// between snapshots.
func snapshot() memSnap {
	runtime.GC()
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return memSnap{heap: ms.HeapInuse, stack: ms.StackInuse, rss: rss(), goroutines: runtime.NumGoroutine()}
}

// rss reads the resident set size from /proc/self/status (0 where there is
// none).
func rss() uint64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := bytes.CutPrefix(sc.Bytes(), []byte("VmRSS:")); ok {
			kb, _ := strconv.ParseUint(string(bytes.TrimSpace(bytes.TrimSuffix(v, []byte("kB")))), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// perInstance is the growth from a to b divided among n instances.
type perInstance struct {
	heap, stack, rss float64 // bytes
	goroutines       float64
}

func growth(a, b memSnap, n int) perInstance {
	d := func(x, y uint64) float64 { return (float64(y) - float64(x)) / float64(n) }
	return perInstance{
		heap:       d(a.heap, b.heap),
		stack:      d(a.stack, b.stack),
		rss:        d(a.rss, b.rss),
		goroutines: float64(b.goroutines-a.goroutines) / float64(n),
	}
}

func kib(b float64) string { return strconv.FormatFloat(b/1024, 'f', 1, 64) + " KiB" }

func mib(b uint64) string { return strconv.FormatFloat(float64(b)/(1<<20), 'f', 1, 64) + " MiB" }

// cpuTime is the user plus system CPU time this process has used.
func cpuTime() time.Duration { return cputime.Process() }

// quantiles returns the p-quantiles of samples (nanoseconds), sorting them.
func quantiles(samples []int64, ps ...float64) []time.Duration {
	slices.Sort(samples)
	out := make([]time.Duration, len(ps))
	if len(samples) == 0 {
		return out
	}
	for i, p := range ps {
		k := int(p * float64(len(samples)-1))
		out[i] = time.Duration(samples[k])
	}
	return out
}

// loadAvg is the machine's load average (1, 5, 15 minutes): on a shared
// machine, the share of the CPU the run could get.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := bytes.Fields(b)
	if len(f) < 3 {
		return "unknown"
	}
	return string(bytes.Join(f[:3], []byte(" ")))
}
