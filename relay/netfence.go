package relay

import (
	"encoding/json"
	"slices"
)

// The first-request fence: the policy's URL fence as rules the browser
// applies to every request of the shared tabs, and of tabs not yet known,
// before it leaves (NetworkRuler). Our extension says it can install them
// (feature "navigation-fence" in extension.info); the stock one cannot,
// and then the Fetch backstop is the only fence. The rules are in force
// while a client is connected: the person's own browsing is not fenced
// when no automation runs.

const featureNetFence = "navigation-fence"

// networkRules returns the rules of this instance's policy, or nil.
func (in *Instance) networkRules() []byte {
	if r, ok := in.srv.policy.load().(NetworkRuler); ok {
		return r.NetworkRules(in.profile)
	}
	return nil
}

// setNetFence sends x the rules in force for a client (nil: none). It
// does not wait.
func (in *Instance) setNetFence(x *extConn, on bool) {
	st := in.lock()
	ok := st.features[featureNetFence]
	in.unlock()
	if x == nil || !ok {
		return
	}
	var rules json.RawMessage
	if on {
		rules = in.networkRules()
	}
	if rules == nil {
		rules = json.RawMessage("null")
	}
	x.fireCall("extension.setNavigationFence", rules)
}

// refreshNetFences brings every instance with a client in line with the
// policy after it changed.
func (s *Server) refreshNetFences() {
	for _, in := range s.Instances() {
		st := in.lock()
		x, c := st.ext, st.client
		in.unlock()
		if c != nil {
			in.setNetFence(x, true)
		}
	}
}

// featuresOf reads the features an extension.info lists.
func featuresOf(list []string) map[string]bool {
	m := map[string]bool{}
	for _, f := range slices.Compact(slices.Sorted(slices.Values(list))) {
		m[f] = true
	}
	return m
}
