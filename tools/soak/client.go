package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cdprelay/cdprelay/internal/testenv"
)

// opLine is one line of e2e/soak-client.mjs.
type opLine struct {
	Op       string  `json:"op"`
	OK       bool    `json:"ok"`
	MS       float64 `json:"ms"`
	Hang     bool    `json:"hang"`
	Error    string  `json:"error"`
	N        *int    `json:"n"`        // evaluate: how often this evaluation ran in the page
	Count    *int    `json:"count"`    // evaluate: the page's counter after it
	Clicks   *int    `json:"clicks"`   // click: the page's click count after it
	Expected *int    `json:"expected"` // the counter (or click count) it should be, when known
	Event    bool    `json:"event"`    // not an operation: its page closed, or its connection ended
	URL      string  `json:"url"`      // a closed page's URL
}

// latencies keeps the duration of each successful operation, by kind.
type latencies struct {
	mu sync.Mutex
	ms map[string][]float64 // guarded by mu
}

func (l *latencies) add(op string, ms float64) {
	l.mu.Lock()
	if l.ms == nil {
		l.ms = map[string][]float64{}
	}
	l.ms[op] = append(l.ms[op], ms)
	l.mu.Unlock()
}

// summary is "op: p50 x ms, p95 y ms, max z ms" for each kind.
func (l *latencies) summary() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, op := range slices.Sorted(maps.Keys(l.ms)) {
		v := slices.Clone(l.ms[op])
		slices.Sort(v)
		q := func(p float64) float64 { return v[int(p*float64(len(v)-1))] }
		out = append(out, fmt.Sprintf("%-14s n=%-5d p50 %6.1f ms  p95 %7.1f ms  max %7.1f ms", op, len(v), q(0.5), q(0.95), v[len(v)-1]))
	}
	return out
}

// runClient runs the Playwright client for d and checks each of its
// operations as it reports them. It returns when the client has ended.
func runClient(ctx context.Context, t *tally, lat *latencies, sv *survival, endpoint, pageURL string, d, deadline time.Duration, verbose bool) error {
	cmd := exec.CommandContext(ctx, "node", "soak-client.mjs", endpoint, pageURL,
		strconv.Itoa(int(d.Seconds())), strconv.Itoa(int(deadline.Milliseconds())))
	cmd.Dir = testenv.E2EDir()
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start the Playwright client: %w", err)
	}
	lines := make(chan []byte)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			lines <- slices.Clone(sc.Bytes())
		}
	}()
	// Every operation ends by its deadline, so a client silent for much
	// longer than that is stuck somewhere no deadline reaches.
	silence := deadline + 15*time.Second
	timer := time.NewTimer(silence)
	defer timer.Stop()
	ended := false
	for {
		select {
		case b, ok := <-lines:
			if !ok {
				err := cmd.Wait()
				if !ended {
					t.violate("the Playwright client ended without finishing its run: %v", err)
				}
				return nil
			}
			timer.Reset(silence)
			if verbose {
				fmt.Printf("client %s\n", b)
			}
			var l opLine
			if err := json.Unmarshal(b, &l); err != nil {
				t.note("client-output", "%s", b)
				continue
			}
			if l.Op == "end" {
				ended = true
				continue
			}
			if l.Event {
				sv.clientEvent(l)
				continue
			}
			checkOp(t, lat, l, deadline)
		case <-timer.C:
			t.violate("the Playwright client printed nothing for %v", silence)
			cmd.Process.Kill()
			io.Copy(io.Discard, out)
			cmd.Wait()
			return nil
		}
	}
}

// checkOp counts one operation and checks it against the invariants: an
// answer or a clear error by the deadline, and nothing run twice.
func checkOp(t *tally, lat *latencies, l opLine, deadline time.Duration) {
	if l.OK {
		t.inc("ops", l.Op+" ok")
		lat.add(l.Op, l.MS)
	} else {
		t.inc("ops", l.Op+" failed")
		c := cause(l.Error)
		if l.Hang {
			c = "hang"
		}
		t.inc("failed", c)
		t.note("failed "+c, "%s after %.0f ms: %s", l.Op, l.MS, l.Error)
	}
	switch {
	case l.Hang:
		t.violate("client %s: neither an answer nor an error within %v", l.Op, deadline)
	case time.Duration(l.MS*float64(time.Millisecond)) > deadline+2*time.Second:
		t.violate("client %s took %.0f ms, past its deadline", l.Op, l.MS)
	case !l.OK && strings.TrimSpace(l.Error) == "":
		t.violate("client %s failed without a message", l.Op)
	case !l.OK && cause(l.Error) == "timeout":
		// Playwright gave up waiting: a reply or an event it waited for
		// never came, which the relay must not let happen.
		t.violate("client %s: Playwright timed out: %s", l.Op, l.Error)
	}
	if !l.OK {
		return
	}
	if l.N != nil {
		t.inc("checks", "evaluations")
		if *l.N != 1 {
			t.violate("an evaluation ran %d times in the page", *l.N)
		}
	}
	if l.Clicks != nil {
		t.inc("checks", "clicks")
	}
	got := l.Count
	if got == nil {
		got = l.Clicks
	}
	if got != nil && l.Expected != nil {
		switch {
		case *got > *l.Expected:
			t.violate("%s: the page counted %d, expected %d: a command ran twice", l.Op, *got, *l.Expected)
		case *got < *l.Expected:
			// The document was replaced under the client (a reload it did
			// not ask for): not a double, but worth a look.
			t.inc("checks", "counter reset")
			t.note("counter reset", "%s: %d, expected %d", l.Op, *got, *l.Expected)
		}
	}
}

// cause names why an operation failed, from Playwright's message.
func cause(msg string) string {
	has := func(subs ...string) bool {
		for _, s := range subs {
			if strings.Contains(msg, s) {
				return true
			}
		}
		return false
	}
	switch {
	case has("Extension disconnected", "Extension not connected", "replaced by a new extension connection"):
		return "extension gone"
	case has("All controlled tabs detached"):
		return "tabs detached"
	case has("Another CDP client"):
		return "second client"
	case has("cdprelay: rate limit", "commands are already waiting"):
		return "relay limit"
	case has("Timeout ") && has("exceeded"):
		return "timeout"
	case has("has been closed", "Target closed", "Session closed", "detached", "Browser closed", "browser has disconnected"):
		return "closed"
	case has("Execution context was destroyed", "frame was detached", "navigation"):
		return "navigation"
	case has("net::ERR_"):
		return "network"
	case has("WebSocket", "ECONNREFUSED", "socket hang up", "ECONNRESET"):
		return "connection"
	}
	return "other"
}
