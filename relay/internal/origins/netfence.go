package origins

import (
	"encoding/json"

	"github.com/cdprelay/cdprelay/relay/internal/api"
)

// The first-request fence: the policy's URL fence as rules the browser
// applies to every request of the shared tabs, and of tabs not yet known,
// before it leaves (api.NetworkRuler), and the rules that keep those tabs
// off the relay's own origins (Origins.WithOwnRules). Our extension says
// it can install them (FeatureNetFence in extension.info); the stock one
// cannot, and then the Fetch backstop is the only fence. The rules
// stage's netfence.go gives them to the extension while a client is
// connected.

// FeatureNetFence is the feature of extension.info by which an extension
// says it installs the first-request rules.
const FeatureNetFence = "navigation-fence"

// NetFenceRules are the first-request rules of a client of profile: pol's
// (when it is an api.NetworkRuler) and those of own, the relay's own
// origins, as the JSON array the extension installs, or JSON null for
// none. When own's rules cannot be added to the policy's (err, which says
// why), the policy's are returned alone.
func NetFenceRules(pol api.Policy, profile string, own *Origins) (json.RawMessage, error) {
	var policy []byte
	if r, ok := pol.(api.NetworkRuler); ok {
		policy = r.NetworkRules(profile)
	}
	rules, err := own.WithOwnRules(policy)
	if err != nil {
		rules = policy
	}
	if len(rules) == 0 {
		rules = json.RawMessage("null")
	}
	return rules, err
}
