package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/relay"
)

// TestExtensionReconnectsAfterRelayRestart restarts the relay under the
// running browser: the extension reconnects by itself and a client works
// again. It runs last among the tests that share env: go test
// runs files in name order, and this one is named to come last.
func TestExtensionReconnectsAfterRelayRestart(t *testing.T) {
	requireEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	if err := env.RestartRelay(ctx, relay.Config{}); err != nil {
		t.Fatalf("the extension did not reconnect: %v", err)
	}
	t.Logf("extension reconnected %v after the restart", time.Since(start).Round(time.Millisecond))
	runNode(t, "playwright.mjs", env.HTTPEndpoint(), env.Pages.Main, env.Pages.Other)
}
