package e2e

import (
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/denylist"
)

// TestPopupFenceCost measures what the first-request fence (the host
// rules our extension gives Chrome while a client is connected) adds to
// a popup's first navigation: the time from the client's window.open to
// the popup's first request reaching the site, with the fence on (both
// test sites allowed) and off, in alternating blocks. It is a
// measurement, not a test of speed: `make bench-popup` runs it and prints
// the figures; `make test` skips it.
func TestPopupFenceCost(t *testing.T) {
	requireEnv(t)
	if os.Getenv("CDPRELAY_E2E_MEASURE") == "" {
		t.Skip("a measurement: make bench-popup")
	}
	const blocks, perBlock = 6, 8
	ctx := testCtx(t, 3*time.Minute)
	a := newAttacker(ctx, t)
	_, session := a.newTab(env.Pages.Main + "/hostile/landing/popup-cost-opener")
	fenced := denylist.Config{AllowedHosts: []string{"127.0.0.1", "127.0.0.2"}}
	t.Cleanup(resetPolicy)
	var took [2][]time.Duration // [0] off, [1] on
	n := 0
	for b := 0; b < 2*blocks; b++ {
		on := b % 2
		if on == 1 {
			setPolicy(t, fenced)
		} else {
			resetPolicy()
		}
		time.Sleep(300 * time.Millisecond) // the extension's rules follow the policy
		for i := 0; i < perBlock; i++ {
			n++
			path := fmt.Sprintf("/hostile/landing/popup-cost-%d", n)
			start := time.Now()
			if _, err := a.eval(session, "window.__w = window.open("+quote(env.Pages.Other+path)+"), true"); err != nil {
				t.Fatal(err)
			}
			for env.Pages.HitsUnder(env.Pages.Other, path) == 0 {
				if time.Since(start) > 10*time.Second {
					t.Fatalf("the popup's first request to %s never came (fence on: %v)", path, on == 1)
				}
				time.Sleep(200 * time.Microsecond)
			}
			took[on] = append(took[on], time.Since(start))
			a.eval(session, "window.__w.close(), true")
		}
	}
	pct := func(d []time.Duration, p int) time.Duration {
		s := slices.Clone(d)
		slices.Sort(s)
		return s[(len(s)-1)*p/100]
	}
	for on, name := range []string{"fence off", "fence on"} {
		fmt.Printf("popup first request, %s: n=%d p50 %v p95 %v\n", name, len(took[on]), pct(took[on], 50).Round(10*time.Microsecond), pct(took[on], 95).Round(10*time.Microsecond))
	}
	fmt.Printf("popup first request, fence on − off: p50 %+v\n", (pct(took[1], 50) - pct(took[0], 50)).Round(10*time.Microsecond))
}
