package main

import (
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/internal/app"
)

// TestAwayTimeoutFlag: --away-timeout as the relay takes it: a wait is
// passed on, and 0 (or less) is none, not the relay's default.
func TestAwayTimeoutFlag(t *testing.T) {
	for _, c := range []struct{ flag, want time.Duration }{
		{time.Minute, time.Minute},
		{90 * time.Second, 90 * time.Second},
		{0, -1},
		{-time.Second, -1},
	} {
		cfg := serveFlags{awayTimeout: c.flag}.appConfig(&app.File{}, "g", nil, nil)
		if got := cfg.Relay.SuspendTimeout; got != c.want {
			t.Errorf("--away-timeout %v: SuspendTimeout %v, want %v", c.flag, got, c.want)
		}
	}
}
