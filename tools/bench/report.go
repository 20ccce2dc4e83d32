package main

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
)

// report is the summary of a run.
type report struct {
	res     *results
	st      map[string]map[string]stats // by path, workload key
	goBench []byte                      // output of go test -bench, or nil
	goRows  []benchRow

	inExtSeq    stats       // the in-extension loop, one call at a time
	inExtRate   float64     // its calls per second with 16 in flight
	inExtParCPU cpuSnapshot // with 16 in flight
	inExtN      int         // calls made with 16 in flight
	inExtRates  []float64   // its calls per second with 16 in flight, round by round
}

func newReport(res *results, goBench []byte) *report {
	r := &report{res: res, st: map[string]map[string]stats{}, goBench: goBench, goRows: parseGoBench(goBench)}
	for p, byWork := range res.samples {
		r.st[p] = map[string]stats{}
		for k, ss := range byWork {
			r.st[p][k] = summarise(ss)
		}
	}
	var seq []sample
	var par time.Duration
	for _, s := range res.inExt {
		seq = append(seq, s.seq)
		r.inExtN += s.parCalls
		par += s.par
		r.inExtParCPU.add(s.parCPU)
		if s.par > 0 {
			r.inExtRates = append(r.inExtRates, float64(s.parCalls)/s.par.Seconds())
		}
	}
	r.inExtSeq = summarise(seq)
	if par > 0 {
		r.inExtRate = float64(r.inExtN) / par.Seconds()
	}
	return r
}

var pathOrder = []string{pathDirect, pathExt, pathRelay}

// target is one of the performance goals the relay is held to
// (docs/BENCHMARKS.md).
type target struct {
	what     string
	measured string
	rounds   string // the same figure round by round: median [min–max]
	goal     string
	met      bool
	// noVerdict: the figure cannot be judged (a difference of two
	// percentiles that came out below zero is the machine's noise).
	noVerdict bool
}

func (r *report) targets() []target {
	a, b, c := r.st[pathDirect], r.st[pathExt], r.st[pathRelay]
	var ts []target
	if a[evalSeq].n > 0 && c[evalSeq].n > 0 {
		ratio := micros(c[evalSeq].p50) / micros(a[evalSeq].p50)
		ts = append(ts, target{
			what:     "cdprelay p50 ÷ direct p50 (evaluate, 1 in flight)",
			measured: fmtRatio(ratio),
			rounds:   spread(pairRatios(c[evalSeq].roundP50, a[evalSeq].roundP50), fmtRatio),
			goal:     "≤ ×2.6",
			met:      ratio <= 2.6,
		})
	}
	if a[evalPar].n > 0 && c[evalPar].n > 0 {
		ratio := c[evalPar].perSec / a[evalPar].perSec
		ts = append(ts, target{
			what:     "cdprelay throughput ÷ direct (evaluate, 16 in flight)",
			measured: fmtRatio(ratio),
			rounds:   spread(pairRatios(c[evalPar].roundRate, a[evalPar].roundRate), fmtRatio),
			goal:     "≥ ×0.35",
			met:      ratio >= 0.35,
		})
	}
	if c[evalPar].n > 0 && r.inExtRate > 0 {
		// What the extension could carry: chrome.debugger alone, in the
		// same rounds.
		ratio := c[evalPar].perSec / r.inExtRate
		ts = append(ts, target{
			what:     "cdprelay throughput ÷ chrome.debugger alone¹ (evaluate, 16 in flight)",
			measured: fmtRatio(ratio),
			rounds:   spread(pairRatios(c[evalPar].roundRate, r.inExtRates), fmtRatio),
			goal:     "≥ ×0.85",
			met:      ratio >= 0.85,
		})
	}
	if c[evalSeq].n > 0 && b[echoSeq].n > 0 && r.inExtSeq.n > 0 {
		// The floor of any path through the extension, one call at a
		// time: its socket's round trip plus chrome.debugger's.
		floor := micros(b[echoSeq].p50) + micros(r.inExtSeq.p50)
		ratio := micros(c[evalSeq].p50) / floor
		var floors []float64
		for i := range min(len(b[echoSeq].roundP50), len(r.inExtSeq.roundP50)) {
			floors = append(floors, b[echoSeq].roundP50[i]+r.inExtSeq.roundP50[i])
		}
		ts = append(ts, target{
			what:     "cdprelay p50 ÷ floor: extension's socket alone² + chrome.debugger alone¹ p50 (evaluate, 1 in flight)",
			measured: fmtRatio(ratio),
			rounds:   spread(pairRatios(c[evalSeq].roundP50, floors), fmtRatio),
			goal:     "≤ ×1.4",
			met:      ratio <= 1.4,
		})
	}
	if b[evalSeq].n > 0 && c[evalSeq].n > 0 {
		d50 := micros(c[evalSeq].p50) - micros(b[evalSeq].p50)
		d99 := micros(c[evalSeq].p99) - micros(b[evalSeq].p99)
		ts = append(ts,
			target{
				what:      "relay's own cost at p50: cdprelay − extension (evaluate, 1 in flight)",
				measured:  fmtMicros(d50),
				rounds:    spread(pairDiffs(c[evalSeq].roundP50, b[evalSeq].roundP50), fmtMicros),
				goal:      "≤ 50 µs",
				met:       d50 >= 0 && d50 <= 50,
				noVerdict: d50 < 0,
			},
			target{
				what:      "relay's own cost at p99: cdprelay − extension (evaluate, 1 in flight)",
				measured:  fmtMicros(d99),
				rounds:    spread(pairDiffs(c[evalSeq].roundP99, b[evalSeq].roundP99), fmtMicros),
				goal:      "≤ 250 µs",
				met:       d99 >= 0 && d99 <= 250,
				noVerdict: d99 < 0,
			})
	}
	if n := len(r.res.inside); n > 0 {
		sum := make([]time.Duration, n)
		for i := range sum {
			sum[i] = r.res.inside[i] + r.res.hops[i]
		}
		slices.Sort(sum)
		p50, p99 := micros(percentile(sum, 50)), micros(percentile(sum, 99))
		ts = append(ts,
			target{
				what:     "relay's own cost at p50, timed at its sockets per command³ (evaluate, 1 in flight)",
				measured: fmtMicros(p50),
				rounds:   spread(slices.Clone(r.res.roundInside), fmtMicros),
				goal:     "≤ 50 µs",
				met:      p50 <= 50,
			},
			target{
				what:     "relay's own cost at p99, timed at its sockets per command³ (evaluate, 1 in flight)",
				measured: fmtMicros(p99),
				goal:     "≤ 250 µs",
				met:      p99 <= 250,
			})
	}
	if per, ok := r.relayCPUPerMessage(); ok {
		rate := 1e9 / per
		ts = append(ts, target{
			what:     "forwarded messages per second on one core (Go benchmark Loopback, 16 in flight: (relay − peers) ÷ 2 CPU per message)",
			measured: fmtRate(rate) + " (" + strconv.FormatFloat(per/1000, 'f', 1, 64) + " µs each)",
			goal:     "≥ 50,000/s",
			met:      rate >= 50000,
		})
	}
	return ts
}

// spread prints the median and range of per-round figures.
func spread(xs []float64, f func(float64) string) string {
	if len(xs) == 0 {
		return ""
	}
	lo, hi := slices.Min(xs), slices.Max(xs)
	return f(median(xs)) + " [" + f(lo) + " – " + f(hi) + "]"
}

func fmtRatio(x float64) string  { return "×" + strconv.FormatFloat(x, 'f', 2, 64) }
func fmtMicros(x float64) string { return strconv.FormatFloat(x, 'f', 0, 64) + " µs" }
func fmtRate(x float64) string   { return strconv.FormatFloat(x, 'f', 0, 64) + "/s" }

func (r *report) print(w io.Writer) {
	fmt.Fprintf(w, "screenshot: %d×%d, PNG %s\n\n", r.res.opts.width, r.res.opts.height, fmtBytes(r.res.pngBytes))
	r.targetsTable(w)
	fmt.Fprintln(w)
	r.sideBySide(w)
	fmt.Fprintln(w)
	r.cpuTable(w)
}

func (r *report) targetsTable(w io.Writer) {
	fmt.Fprintln(w, "| target | measured (all rounds pooled) | round by round: median [min – max] | goal | |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for _, t := range r.targets() {
		status := "not met"
		switch {
		case t.noVerdict:
			status = "no verdict: below zero, the machine's noise"
		case t.met:
			status = "met"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", t.what, t.measured, t.rounds, t.goal, status)
	}
	if n := len(r.res.inside); n > 0 {
		in, hops := sorted(r.res.inside), sorted(r.res.hops)
		fmt.Fprintln(w)
		fmt.Fprintf(w, "³ The relay's sockets are wrapped, and each command's four events on them noted: the relay reads "+
			"the command, writes it to the extension, reads the reply, writes it to the client. Its own cost is the time "+
			"from each read to the following write (p50 %s, p99 %s), plus the client's extra socket: from the client's "+
			"write to the relay's read and from the relay's write to the client's read (p50 %s, p99 %s). It leaves out "+
			"the wait between a reply reaching the relay's socket and the relay reading it. %d commands timed, %d left "+
			"out because another message came between their events.\n",
			fmtDur(percentile(in, 50)), fmtDur(percentile(in, 99)), fmtDur(percentile(hops, 50)), fmtDur(percentile(hops, 99)),
			n, r.res.dropped)
	}
}

func (r *report) sideBySide(w io.Writer) {
	fmt.Fprintln(w, "| workload | path | calls | p50 | p95 | p99 | calls/s | p50 ÷ direct | calls/s ÷ direct |")
	fmt.Fprintln(w, "|---|---|--:|--:|--:|--:|--:|--:|--:|")
	row := func(key, label string, s stats, a stats) {
		if s.n == 0 {
			return
		}
		fmt.Fprintf(w, "| %s | %s | %d | %s | %s | %s | %s | %s | %s |\n", key, label, s.n,
			fmtDur(s.p50), fmtDur(s.p95), fmtDur(s.p99), fmtRate(s.perSec),
			fmtRatio(micros(s.p50)/micros(a.p50)), fmtRatio(s.perSec/a.perSec))
	}
	for _, wl := range r.res.work {
		a := r.st[pathDirect][wl.key]
		for _, p := range pathOrder {
			row(wl.key, p, r.st[p][wl.key], a)
		}
		switch wl.key {
		case evalSeq:
			row(wl.key, "chrome.debugger alone¹", r.inExtSeq, a)
			row(wl.key, "extension's socket alone²", r.st[pathExt][echoSeq], a)
		case evalPar:
			if r.inExtRate > 0 {
				fmt.Fprintf(w, "| %s | chrome.debugger alone¹ | %d | | | | %s | | %s |\n", wl.key, r.inExtN,
					fmtRate(r.inExtRate), fmtRatio(r.inExtRate/a.perSec))
			}
			row(wl.key, "extension's socket alone²", r.st[pathExt][echoPar], a)
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "¹ `chrome.debugger.sendCommand` in a loop inside the extension's service worker, attached through the "+
		"extension path, with no WebSocket: timed there with `performance.now()`, which a service worker has only to ~0.1 ms.  ")
	fmt.Fprintln(w, "² the bare peer sends the extension a method it does not know, which it answers at once with an error: "+
		"the extension's WebSocket and JSON round trip, with no `chrome.debugger` behind it.")
}

// cpuTable shows where the CPU goes per command: Chromium's processes by
// role and this process (client, bare peer or relay).
func (r *report) cpuTable(w io.Writer) {
	cols := append([]string{"Go process⁴"}, procKinds...)
	fmt.Fprintf(w, "| CPU µs per call (Runtime.evaluate) | %s | total |\n", strings.Join(cols, " | "))
	fmt.Fprintf(w, "|---|%s--:|\n", strings.Repeat("--:|", len(cols)))
	row := func(label string, cpu cpuSnapshot, calls int) {
		if calls == 0 {
			return
		}
		per := func(d time.Duration) string {
			return strconv.FormatFloat(micros(d)/float64(calls), 'f', 0, 64)
		}
		cells := []string{per(cpu.self)}
		total := cpu.self
		for _, k := range procKinds {
			cells = append(cells, per(cpu.chrome[k]))
			total += cpu.chrome[k]
		}
		fmt.Fprintf(w, "| %s | %s | %s |\n", label, strings.Join(cells, " | "), per(total))
	}
	for _, key := range []string{evalSeq, evalPar} {
		label := "1 in flight, "
		if key == evalPar {
			label = "16 in flight, "
		}
		for _, p := range pathOrder {
			s := r.st[p][key]
			row(label+p, s.cpu, s.n)
		}
		if key == evalSeq {
			row(label+"chrome.debugger alone¹", r.inExtSeq.cpu, r.inExtSeq.n)
			row(label+"extension's socket alone²", r.st[pathExt][echoSeq].cpu, r.st[pathExt][echoSeq].n)
		} else {
			row(label+"chrome.debugger alone¹", r.inExtParCPU, r.inExtN)
			row(label+"extension's socket alone²", r.st[pathExt][echoPar].cpu, r.st[pathExt][echoPar].n)
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "⁴ this benchmark's own process: the CDP client on direct; the bare peer on extension; "+
		"the CDP client and the relay on cdprelay (so the relay's share is about cdprelay − direct). "+
		"Chromium's figures come from /proc in 10 ms ticks, summed over every visit.")
}

// breakdown puts the paths' figures side by side as parts of a whole.
func (r *report) breakdown(w io.Writer) {
	a, b, c := r.st[pathDirect], r.st[pathExt], r.st[pathRelay]
	echo1 := b[echoSeq]
	if a[evalSeq].n == 0 || b[evalSeq].n == 0 || c[evalSeq].n == 0 || echo1.n == 0 || r.inExtSeq.n == 0 {
		return
	}
	direct, ext, relay := micros(a[evalSeq].p50), micros(b[evalSeq].p50), micros(c[evalSeq].p50)
	dbg, sock := micros(r.inExtSeq.p50), micros(echo1.p50)
	fmt.Fprintf(w, "- One call at a time, at p50: Chromium's own port answers in %s. `chrome.debugger` alone, "+
		"called in the extension, takes %s (%s direct); a round trip over the extension's socket with nothing "+
		"behind it takes %s. Together, as the extension path, they take %s: %s more than the two apart. "+
		"cdprelay adds %s to that, for %s in all (%s direct).\n",
		fmtMicros(direct), fmtMicros(dbg), fmtRatio(dbg/direct), fmtMicros(sock), fmtMicros(ext),
		fmtMicros(ext-dbg-sock), fmtMicros(relay-ext), fmtMicros(relay), fmtRatio(relay/direct))
	chromeCPU := func(cpu cpuSnapshot, n int) float64 {
		var t time.Duration
		for _, v := range cpu.chrome {
			t += v
		}
		return micros(t) / float64(n)
	}
	fmt.Fprintf(w, "- The same in Chromium's CPU per call, one at a time: %s direct, %s for `chrome.debugger` alone, "+
		"%s for the socket alone (%s together), %s for the extension path.\n",
		fmtMicros(chromeCPU(a[evalSeq].cpu, a[evalSeq].n)), fmtMicros(chromeCPU(r.inExtSeq.cpu, r.inExtSeq.n)),
		fmtMicros(chromeCPU(echo1.cpu, echo1.n)),
		fmtMicros(chromeCPU(r.inExtSeq.cpu, r.inExtSeq.n)+chromeCPU(echo1.cpu, echo1.n)),
		fmtMicros(chromeCPU(b[evalSeq].cpu, b[evalSeq].n)))
	if r.inExtRate > 0 && b[echoPar].n > 0 && a[evalPar].n > 0 {
		fmt.Fprintf(w, "- 16 in flight: Chromium's port does %s; `chrome.debugger` alone tops out at %s (%s direct), "+
			"which bounds every path through the extension; the extension's socket alone carries %s; "+
			"the extension path does %s and cdprelay %s.\n",
			fmtRate(a[evalPar].perSec), fmtRate(r.inExtRate), fmtRatio(r.inExtRate/a[evalPar].perSec),
			fmtRate(b[echoPar].perSec), fmtRate(b[evalPar].perSec), fmtRate(c[evalPar].perSec))
	}
	perCall := func(s stats, kind string) float64 {
		if s.n == 0 {
			return 0
		}
		return micros(s.cpu.chrome[kind]) / float64(s.n)
	}
	if a[evalPar].n > 0 && b[evalPar].n > 0 && c[evalPar].n > 0 {
		total := func(s stats) float64 {
			var t time.Duration
			for _, v := range s.cpu.chrome {
				t += v
			}
			return micros(t) / float64(s.n)
		}
		self := func(s stats) float64 { return micros(s.cpu.self) / float64(s.n) }
		fmt.Fprintf(w, "- CPU, 16 in flight: Chromium spends %s per call on the extension path against %s direct "+
			"(its browser process alone %s against %s); the relay, taken as this process's CPU on cdprelay less "+
			"that on direct, spends %s.\n",
			fmtMicros(total(b[evalPar])), fmtMicros(total(a[evalPar])),
			fmtMicros(perCall(b[evalPar], procBrowser)), fmtMicros(perCall(a[evalPar], procBrowser)),
			fmtMicros(self(c[evalPar])-self(a[evalPar])))
	}
}

func fmtBytes(n int) string {
	if n >= 1<<20 {
		return strconv.FormatFloat(float64(n)/(1<<20), 'f', 2, 64) + " MiB"
	}
	return strconv.FormatFloat(float64(n)/(1<<10), 'f', 0, 64) + " KiB"
}
