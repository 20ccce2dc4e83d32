package e2e

import (
	"testing"

	"github.com/cdprelay/cdprelay/denylist"
	"github.com/cdprelay/cdprelay/internal/relaypolicy"
	"github.com/cdprelay/cdprelay/relay"
)

// TestPolicyFence swaps the running relay's policy, as a SIGHUP reload
// does, to one that allows only the main test origin, and drives it with
// Playwright.
func TestPolicyFence(t *testing.T) {
	requireEnv(t)
	p, err := denylist.Compile(denylist.Config{AllowedHosts: []string{"127.0.0.1"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	env.Relay.SetPolicy(relaypolicy.Adapter{P: p})
	defer resetPolicy()
	before := env.Pages.Hits(env.Pages.Other, "/target.html")
	runNode(t, "policy.mjs", env.HTTPEndpoint(), env.Pages.Main, env.Pages.Other)
	if n := env.Pages.Hits(env.Pages.Other, "/target.html") - before; n != 0 {
		t.Fatalf("the host outside the allowed list served %d requests", n)
	}
	if n := env.Pages.Hits(env.Pages.Main, "/redirect"); n == 0 {
		t.Fatal("the redirect was never requested: the test did not test it")
	}
	_ = relay.Allow
}
