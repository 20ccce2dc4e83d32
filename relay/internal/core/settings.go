package core

import "github.com/cdprelay/cdprelay/relay/internal/access"

// The client's settings of a tab, under tiers: which are lifted where,
// refused or kept is the tiers' table (relay/internal/tiers/settings.go);
// how the lifted ones are kept is the replay's (relay/internal/replay).

// ruleTierSetting is the rule id of a setting refused while the policy
// has tiers.
const ruleTierSetting = access.RuleSetting

// SwitchOnly reports whether m only switches a domain's events on or off.
func SwitchOnly(m *MethodInfo) bool {
	return (m.Enable || m.Disable) && !access.HasEffect(m.Name)
}
