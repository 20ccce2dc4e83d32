package link

import (
	"testing"
	"time"
)

// The bucket lets a burst through at once, then perSecond a second, never
// more than the burst after a quiet time; a rate of 0 is no limit.
func TestRate(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	type take struct {
		at   time.Duration
		pass bool
	}
	for _, c := range []struct {
		name      string
		perSecond float64
		burst     int
		takes     []take
	}{
		{"burst then refused", 10, 3, []take{{0, true}, {0, true}, {0, true}, {0, false}, {0, false}}},
		{"refills at the rate", 10, 1, []take{{0, true}, {50 * time.Millisecond, false}, {100 * time.Millisecond, true}, {150 * time.Millisecond, false}, {300 * time.Millisecond, true}}},
		{"a quiet time fills to the burst only", 100, 2, []take{{0, true}, {0, true}, {time.Hour, true}, {time.Hour, true}, {time.Hour, false}}},
		{"unlimited", 0, 0, []take{{0, true}, {0, true}, {0, true}}},
		{"a negative rate is no limit", -1, 0, []take{{0, true}, {0, true}, {0, true}}},
		{"a refused take costs nothing", 1, 1, []take{{0, true}, {0, false}, {500 * time.Millisecond, false}, {time.Second, true}}},
	} {
		b := NewRate(c.perSecond, c.burst)
		for i, tk := range c.takes {
			if got := b.Take(t0.Add(tk.at)); got != tk.pass {
				t.Errorf("%s: take %d at %v: %v, want %v", c.name, i, tk.at, got, tk.pass)
			}
		}
	}
}
