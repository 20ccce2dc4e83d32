package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// The Go benchmarks of the relay alone: their output parsed, the figures
// the report takes from it, and their table.

// goFigure is one figure of one Go benchmark, or 0.
func (r *report) goFigure(name, unit string) float64 {
	for _, row := range r.goRows {
		if row.name == name {
			v, _ := strconv.ParseFloat(row.vals[unit], 64)
			return v
		}
	}
	return 0
}

// relayCPUPerMessage is the relay's own CPU per forwarded message in ns,
// from the loopback benchmark with 16 in flight: the stand-ins' CPU is
// measured alone and taken off.
func (r *report) relayCPUPerMessage() (float64, bool) {
	withRelay := r.goFigure("Loopback/relay/inflight=16", "cpu-ns/op")
	peers := r.goFigure("Loopback/peers/inflight=16", "cpu-ns/op")
	if withRelay == 0 || peers == 0 || withRelay <= peers {
		return 0, false
	}
	return (withRelay - peers) / 2, true
}

// relayLoopbackLatency is what the relay adds to one round trip on
// loopback with nothing else in flight, in ns.
func (r *report) relayLoopbackLatency() (float64, bool) {
	withRelay := r.goFigure("Loopback/relay/inflight=1", "ns/op")
	peers := r.goFigure("Loopback/peers/inflight=1", "ns/op")
	if withRelay == 0 || peers == 0 {
		return 0, false
	}
	return withRelay - peers, true
}

// benchRow is one line of `go test -bench` output: the benchmark's name
// without its GOMAXPROCS suffix, and its figures by unit.
type benchRow struct {
	name  string
	vals  map[string]string
	units []string // in the order printed
}

func parseGoBench(out []byte) []benchRow {
	var rows []benchRow
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		name := strings.TrimPrefix(f[0], "Benchmark")
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			if _, err := strconv.Atoi(name[i+1:]); err == nil {
				name = name[:i]
			}
		}
		row := benchRow{name: name, vals: map[string]string{}}
		for i := 2; i+1 < len(f); i += 2 {
			row.vals[f[i+1]] = f[i]
			row.units = append(row.units, f[i+1])
		}
		rows = append(rows, row)
	}
	return rows
}

// goBenchTable prints one row per benchmark, one column per unit.
func goBenchTable(w io.Writer, rows []benchRow) {
	var units []string
	for _, row := range rows {
		for _, u := range row.units {
			if !slices.Contains(units, u) {
				units = append(units, u)
			}
		}
	}
	fmt.Fprintf(w, "| benchmark | %s |\n", strings.Join(units, " | "))
	fmt.Fprintf(w, "|---|%s\n", strings.Repeat("--:|", len(units)))
	for _, row := range rows {
		cells := make([]string, len(units))
		for i, u := range units {
			cells[i] = row.vals[u]
		}
		fmt.Fprintf(w, "| %s | %s |\n", row.name, strings.Join(cells, " | "))
	}
}
