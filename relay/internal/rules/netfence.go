package rules

import (
	"context"
	"encoding/json"
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/core"
	"github.com/cdprelay/cdprelay/relay/internal/origins"
)

// The first-request fence: the policy's URL fence as rules the browser
// applies to every request of the shared tabs, and of tabs not yet known,
// before it leaves, and the rules that keep those tabs off the relay's own
// origins (origins.NetFenceRules builds them). Our extension says it can
// install them (origins.FeatureNetFence in extension.info); the stock one
// cannot, and then the Fetch backstop is the only fence. The rules are in
// force while a client is connected: the person's own browsing is not
// fenced when no automation runs.

// NetFence is the first-request fence's share of an instance's life
// (core.AddLifecycle): its rules go in before a client's first command is
// read, come off when the client leaves, and follow the policy.
func NetFence() core.Lifecycle {
	return core.Lifecycle{
		ClientArriving: setNetFenceWait,
		ClientLeft:     func(in *core.Instance, x core.Upstream) { setNetFence(in, x, false) },
		PolicyChanged:  refreshNetFences,
	}
}

// netFenceWait bounds how long a client's first command waits for the
// extension to have its rules in force.
const netFenceWait = 2 * time.Second

// setNetFence sends x the rules in force for a client (nil: none). It
// does not wait.
func setNetFence(in *core.Instance, x core.Upstream, on bool) {
	if rules, ok := netFenceRules(in, x, on); ok {
		x.FireCall("extension.setNavigationFence", rules)
	}
}

// setNetFenceWait sends x the rules in force for a client and returns once
// the extension has them in force (or after netFenceWait, or ctx): the
// client's commands are read only then, so that nothing it does can open a
// tab before the fence is up.
func setNetFenceWait(ctx context.Context, in *core.Instance, x core.Upstream) {
	rules, ok := netFenceRules(in, x, true)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, netFenceWait)
	defer cancel()
	if _, err := x.Call(ctx, "extension.setNavigationFence", rules); err != nil {
		// The Fetch backstop still fences the shared tabs' navigations.
		in.Log.Warn("the extension did not confirm the first-request fence", "err", err)
	}
}

// netFenceRules are the rules to give x, and whether x takes them.
func netFenceRules(in *core.Instance, x core.Upstream, on bool) (json.RawMessage, bool) {
	st := in.Lock()
	ok := st.Features[origins.FeatureNetFence]
	in.Unlock()
	if x == nil || !ok {
		return nil, false
	}
	if !on {
		return json.RawMessage("null"), true
	}
	// The policy's rules and those of the relay's own origins.
	r, err := origins.NetFenceRules(in.Srv.Policy(), in.ProfileName, in.Srv.Own)
	if err != nil {
		in.Log.Warn("the relay's own origins are left out of the first-request rules", "err", err)
	}
	return r, true
}

// refreshNetFences brings every instance with a client in line with the
// policy after it changed.
func refreshNetFences(s *core.Relay) {
	for _, in := range s.Instances() {
		st := in.Lock()
		x, c := st.Ext, st.Client
		in.Unlock()
		if c != nil {
			setNetFence(in, x, true)
		}
	}
}
