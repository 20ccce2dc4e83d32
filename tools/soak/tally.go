package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
)

// tally counts what happened during the soak. Every part reports to it
// from its own goroutine.
type tally struct {
	start time.Time // static

	mu         sync.Mutex
	counts     map[string]int // guarded by mu: "section/name" → count
	violations []string       // guarded by mu
	notes      []string       // guarded by mu: failures worth reading, a few of each kind
	noted      map[string]int // guarded by mu: notes kept per kind
}

func newTally() *tally {
	return &tally{start: time.Now(), counts: map[string]int{}, noted: map[string]int{}}
}

func (t *tally) add(section, name string, n int) {
	t.mu.Lock()
	t.counts[section+"/"+name] += n
	t.mu.Unlock()
}

func (t *tally) inc(section, name string) { t.add(section, name, 1) }

func (t *tally) get(section, name string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.counts[section+"/"+name]
}

// violate records a broken invariant. The soak fails if there is any.
func (t *tally) violate(format string, args ...any) {
	msg := fmt.Sprintf("%6.1fs ", time.Since(t.start).Seconds()) + fmt.Sprintf(format, args...)
	t.mu.Lock()
	t.violations = append(t.violations, msg)
	t.mu.Unlock()
	fmt.Println("VIOLATION", msg)
}

// note keeps an example of something worth reading in the report, at most
// a few per kind.
func (t *tally) note(kind, format string, args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.noted[kind] >= 3 {
		return
	}
	t.noted[kind]++
	t.notes = append(t.notes, fmt.Sprintf("%6.1fs %s: ", time.Since(t.start).Seconds(), kind)+fmt.Sprintf(format, args...))
}

func (t *tally) violationCount() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.violations)
}

// section returns the counts of one section, by name.
func (t *tally) section(section string) map[string]int {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := map[string]int{}
	for k, v := range t.counts {
		if name, ok := strings.CutPrefix(k, section+"/"); ok {
			out[name] = v
		}
	}
	return out
}

// line formats a section as "name n, name n, ..." in name order.
func (t *tally) line(section string) string {
	m := t.section(section)
	if len(m) == 0 {
		return "none"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func (t *tally) sum(section string) int {
	n := 0
	for _, v := range t.section(section) {
		n += v
	}
	return n
}

func (t *tally) printViolations(w io.Writer) {
	t.mu.Lock()
	defer t.mu.Unlock()
	fmt.Fprintf(w, "invariant violations: %d\n", len(t.violations))
	for _, v := range t.violations {
		fmt.Fprintln(w, "  ", v)
	}
	if len(t.notes) > 0 {
		fmt.Fprintln(w, "examples of failures (not violations):")
		for _, n := range t.notes {
			fmt.Fprintln(w, "  ", n)
		}
	}
}
