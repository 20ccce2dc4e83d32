package main

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strings"
)

// The written report: docs/BENCHMARKS.md as make bench writes it, with the
// machine and the command it ran on.

// writeMarkdown writes the whole report, with the Go benchmarks' output.
func (r *report) writeMarkdown(file string) error {
	var b bytes.Buffer
	o := r.res.opts
	fmt.Fprintln(&b, "# Benchmarks")
	fmt.Fprintln(&b)
	fmt.Fprintln(&b, "Written by `make bench`; run it again to refresh this page rather than editing it.")
	fmt.Fprintln(&b)
	fmt.Fprintf(&b, "- Date: %s\n", r.res.started.UTC().Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(&b, "- Machine: %d CPUs, %s, %s/%s, %s\n", runtime.NumCPU(), cpuModel(), runtime.GOOS, runtime.GOARCH, runtime.Version())
	fmt.Fprintf(&b, "- Browser: %s, headless; one browser for all three paths\n", r.res.chromeVer)
	fmt.Fprintln(&b, "- Command: `make bench`, which runs:")
	if o.goBenchCmd != "" {
		fmt.Fprintf(&b, "  - `%s`\n", o.goBenchCmd)
	}
	fmt.Fprintf(&b, "  - `%s`\n", commandLine())
	fmt.Fprintln(&b)

	fmt.Fprintln(&b, "## One Chromium, three paths")
	fmt.Fprintln(&b)
	fmt.Fprintln(&b, "- **direct**: a Go CDP client on Chromium's own debugging port (`--remote-debugging-port=0`), "+
		"`Target.attachToTarget {flatten:true}` to the tab, then commands on that session. The floor.")
	fmt.Fprintln(&b, "- **extension**: the cdprelay extension in that browser, driven by a bare protocol-v2 peer "+
		"(`chrome.debugger.attach`, then `chrome.debugger.sendCommand`) on the URL it is configured with, one message per "+
		"frame as the stock protocol has it (the peer does not take batches). No relay logic.")
	what := "the product as `cdprelay serve` assembles it (internal/app: ingress guard, audit, metrics, live view, relay)"
	if o.bare {
		what = "the relay alone (`-bare`: `relay.New`, no ingress guard, audit or live view)"
	}
	fmt.Fprintln(&b, "- **cdprelay**: "+what+" in the benchmark's process on that same URL (default configuration but for "+
		"the command rate limit, which is off), and the same Go CDP client on `/devtools/browser/<guid>` over loopback: "+
		"`Target.setAutoAttach`, then commands on the tab's session. The relay and the extension agree on batch frames "+
		"(docs/EXTENSION-PROTOCOL.md, Batches).")
	fmt.Fprintln(&b)
	fmt.Fprintf(&b, "The extension keeps one connection, so the peer and the relay take turns on the URL; each visit "+
		"attaches to the tab, warms up (%d evaluations, 2 screenshots), measures and detaches, so that only one path "+
		"holds the tab at a time. Visits go direct, extension, cdprelay, direct, ... for %d rounds after %d not counted, "+
		"so that the machine's noise falls on all three alike; per visit: %d evaluations one at a time, %d with 16 in flight, "+
		"%d screenshots one at a time, %d with 16 in flight. The screenshot is a %d×%d viewport "+
		"(`Emulation.setDeviceMetricsOverride`) filled with a seeded noise canvas: a PNG of %s (%s of base64 on the wire). "+
		"Latencies are from sending a command to reading its whole reply; every figure pools all rounds unless it says otherwise.\n",
		o.warmup, o.rounds, o.warmRounds, o.evals, o.evals16, o.shots, o.shots16, o.width, o.height,
		fmtBytes(r.res.pngBytes), fmtBytes((r.res.pngBytes+2)/3*4))
	fmt.Fprintln(&b)

	fmt.Fprintln(&b, "### Targets")
	fmt.Fprintln(&b)
	r.targetsTable(&b)
	fmt.Fprintln(&b)
	fmt.Fprintln(&b, "The relay's own cost is given two ways. cdprelay − extension is a difference of two percentiles "+
		"measured a few seconds apart on a busy 2-core machine, not a percentile of differences: its round-by-round "+
		"spread is wide. Timed at the relay's sockets³, it is measured per command, in the same round trips; what it "+
		"leaves out, the wait before reading the extension's reply, the bare peer of the extension path waits too.")
	fmt.Fprintln(&b)
	fmt.Fprintln(&b, "### Round trips")
	fmt.Fprintln(&b)
	r.sideBySide(&b)
	fmt.Fprintln(&b)
	fmt.Fprintln(&b, "### Where the CPU goes")
	fmt.Fprintln(&b)
	r.cpuTable(&b)
	fmt.Fprintln(&b)
	fmt.Fprintln(&b, "### Where the time goes")
	fmt.Fprintln(&b)
	r.breakdown(&b)
	fmt.Fprintln(&b)

	fmt.Fprintln(&b, "## The relay alone")
	fmt.Fprintln(&b)
	fmt.Fprintln(&b, "Go benchmarks of `./relay` and `./internal/wire`, with the extension and the client replaced by "+
		"in-process stand-ins. `msgs/cpu-s` is forwarded messages (a command and its reply are two) per second of "+
		"this process's CPU time, that is per core.")
	fmt.Fprintln(&b)
	if len(r.goRows) > 0 {
		goBenchTable(&b, r.goRows)
		fmt.Fprintln(&b)
		if per, ok := r.relayCPUPerMessage(); ok {
			fmt.Fprintf(&b, "- The relay's own CPU per forwarded message over real sockets, (Loopback/relay − "+
				"Loopback/peers) ÷ 2 in cpu-ns/op with 16 in flight: %.1f µs, that is %s per core.\n", per/1000, fmtRate(1e9/per))
		}
		if lat, ok := r.relayLoopbackLatency(); ok {
			fmt.Fprintf(&b, "- What the relay adds to a round trip on loopback with 1 in flight, Loopback/relay − "+
				"Loopback/peers in ns/op: %.1f µs.\n", lat/1000)
		}
		fmt.Fprintln(&b)
		fmt.Fprintln(&b, "<details><summary>raw output</summary>")
		fmt.Fprintln(&b)
		fmt.Fprintln(&b, "```")
		b.Write(bytes.TrimSpace(r.goBench))
		fmt.Fprintln(&b)
		fmt.Fprintln(&b, "```")
		fmt.Fprintln(&b)
		fmt.Fprintln(&b, "</details>")
	} else {
		fmt.Fprintln(&b, "(not run)")
	}
	return os.WriteFile(file, b.Bytes(), 0o644)
}

// commandLine is this run's command as `make bench` starts it, quoted for
// a shell.
func commandLine() string {
	words := []string{"go", "run", "./tools/bench"}
	for _, a := range os.Args[1:] {
		if a == "" || strings.ContainsAny(a, " \t'\"$\\*?;&|<>()") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		words = append(words, a)
	}
	return strings.Join(words, " ")
}

func cpuModel() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}
