package main

import (
	"fmt"
	"time"
)

// idleTarget is the target for one idle instance.
const idleTarget = 64 << 10

// runIdle mints o.n instances, connects an extension to each (one shared
// tab, no client) and reports what they cost the relay.
func runIdle(o options, rl *testRelay, child *peerProc) error {
	base := snapshot()
	start := time.Now()
	ins, err := rl.mint(o.n)
	if err != nil {
		return err
	}
	mintTime := time.Since(start)
	minted := snapshot()

	start = time.Now()
	var d dialed
	if err := child.call(request{Op: "extensions", Base: rl.base, GUIDs: guids(ins), Dialers: o.dialers}, &d); err != nil {
		return err
	}
	if err := waitReady(ins, 5*time.Minute); err != nil {
		return err
	}
	acceptTime := time.Since(start)
	// Let the goroutines of the handshakes end before counting.
	time.Sleep(time.Second)
	connected := snapshot()
	if o.memProfile != "" {
		if err := writeHeapProfile(o.memProfile); err != nil {
			return err
		}
	}

	pm, pc, total := growth(base, minted, o.n), growth(minted, connected, o.n), growth(base, connected, o.n)
	fmt.Printf("relay before: heap %s, stacks %s, RSS %s, %d goroutines\n", mib(base.heap), mib(base.stack), mib(base.rss), base.goroutines)
	fmt.Printf("mint %d instances: %v; per instance heap %s\n", o.n, mintTime.Round(time.Millisecond), kib(pm.heap))
	fmt.Printf("connect %d extensions: %v until every one was ready (%.0f/s; %d dialers, dialing alone took %.2fs)\n",
		o.n, acceptTime.Round(time.Millisecond), float64(o.n)/acceptTime.Seconds(), o.dialers, d.Seconds)
	fmt.Printf("  per connection: heap %s + stacks %s, RSS %s, %.2f goroutines\n", kib(pc.heap), kib(pc.stack), kib(pc.rss), pc.goroutines)
	fmt.Printf("relay after: heap %s, stacks %s, RSS %s, %d goroutines\n", mib(connected.heap), mib(connected.stack), mib(connected.rss), connected.goroutines)
	verdict := "met"
	if total.heap+total.stack > idleTarget {
		verdict = "NOT met"
	}
	fmt.Printf("idle instance (minted + connected): heap+stacks %s, RSS %s, %.2f goroutines; target <= 64 KiB: %s\n",
		kib(total.heap+total.stack), kib(total.rss), total.goroutines, verdict)
	return nil
}

// runActive connects o.n instances, each with an extension that answers at
// once and a client that sends Runtime.evaluate at each rate in turn, and
// reports latency and the relay's CPU for each rate.
func runActive(o options, rates []float64, rl *testRelay, child *peerProc) error {
	ins, err := rl.mint(o.n)
	if err != nil {
		return err
	}
	var d dialed
	if err := child.call(request{Op: "extensions", Base: rl.base, GUIDs: guids(ins), Dialers: o.dialers}, &d); err != nil {
		return err
	}
	if err := waitReady(ins, 2*time.Minute); err != nil {
		return err
	}
	if err := child.call(request{Op: "clients", Base: rl.base, GUIDs: guids(ins), Dialers: o.dialers}, &d); err != nil {
		return err
	}
	fmt.Printf("load average before: %s\n", loadAvg())
	fmt.Printf("%d instances, each with an extension answering at once and a client sending Runtime.evaluate on its tab's session\n", o.n)
	fmt.Printf("%9s %9s %8s %7s %8s %8s %8s %8s %9s %10s %8s %10s\n",
		"offered/s", "done/s", "missing", "errors", "p50", "p95", "p99", "max", "lag p99", "relay CPU", "µs/cmd", "peers CPU")
	for _, r := range rates {
		cpu0, t0 := cpuTime(), time.Now()
		var res phaseResult
		if err := child.call(request{Op: "phase", Rate: r, Seconds: o.phase.Seconds()}, &res); err != nil {
			return err
		}
		cpu, wall := cpuTime()-cpu0, time.Since(t0)
		offered := r * float64(o.n)
		done := float64(res.Received) / max(res.Seconds, o.phase.Seconds())
		perCmd := 0.0
		if res.Received > 0 {
			perCmd = float64(cpu.Microseconds()) / float64(res.Received)
		}
		fmt.Printf("%9.0f %9.0f %8d %7d %8s %8s %8s %8s %9s %9.2fc %8.1f %9.2fc\n",
			offered, done, res.Sent-res.Received, res.Errors,
			us(res.P50), us(res.P95), us(res.P99), us(res.Max), us(res.LagP99),
			cpu.Seconds()/wall.Seconds(), perCmd, res.CPU/wall.Seconds())
		if res.FirstError != "" {
			fmt.Printf("          first error: %.200s\n", res.FirstError)
		}
		if o.strict && (res.Sent == 0 || res.Received < res.Sent || res.Errors > 0) {
			return fmt.Errorf("at %.0f/s per client: %d commands sent, %d answered, %d errors", r, res.Sent, res.Received, res.Errors)
		}
	}
	fmt.Printf("load average after: %s\n", loadAvg())
	after := snapshot()
	fmt.Printf("relay after: heap %s, stacks %s, RSS %s, %d goroutines\n", mib(after.heap), mib(after.stack), mib(after.rss), after.goroutines)
	return nil
}

func us(v float64) string {
	switch {
	case v >= 10000:
		return fmt.Sprintf("%.0fms", v/1000)
	case v >= 1000:
		return fmt.Sprintf("%.1fms", v/1000)
	}
	return fmt.Sprintf("%.0fµs", v)
}

// runSmoke runs both scenarios briefly on a few instances: every
// extension must connect and every command of a short active phase must be
// answered without an error.
func runSmoke(o options) error {
	idle := o
	idle.scenario, idle.n = "idle", 50
	if err := run(idle); err != nil {
		return fmt.Errorf("idle: %w", err)
	}
	active := o
	active.scenario, active.n, active.rates, active.phase, active.strict = "active", 5, "100", 2*time.Second, true
	if err := run(active); err != nil {
		return fmt.Errorf("active: %w", err)
	}
	fmt.Println("smoke: every extension connected and every command was answered")
	return nil
}
