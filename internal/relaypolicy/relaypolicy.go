package relaypolicy

import (
	"encoding/json"

	"github.com/cdprelay/cdprelay/denylist"
	"github.com/cdprelay/cdprelay/relay"
)

// Adapter is a relay.Policy backed by a denylist.Policy.
type Adapter struct{ P *denylist.Policy }

var _ relay.Policy = Adapter{}

// Command judges one client command by its method rules.
func (a Adapter) Command(profile, method string, params []byte) relay.Decision {
	return convert(a.P.For(profile).Rules(method, params))
}

// MethodURL judges the URL the relay read from a URL-bearing command.
func (a Adapter) MethodURL(profile, method, url string, found bool) relay.Decision {
	return convert(a.P.For(profile).MethodURL(method, url, found))
}

// URL judges a navigation target.
func (a Adapter) URL(profile, url string) relay.Decision {
	return convert(a.P.For(profile).URL(url))
}

// FencesNavigation reports whether the profile's URL fence can refuse a
// host, so that navigations without a command need watching.
func (a Adapter) FencesNavigation(profile string) bool {
	return a.P.For(profile).FencesHosts()
}

// NetworkRules are the fence's first-request rules for the browser, as
// JSON, or nil.
func (a Adapter) NetworkRules(profile string) []byte {
	rules := a.P.For(profile).NetworkRules()
	if rules == nil {
		return nil
	}
	b, err := json.Marshal(rules)
	if err != nil {
		return nil
	}
	return b
}

var _ relay.NetworkRuler = Adapter{}

// Tier is the tier of the page at url.
func (a Adapter) Tier(profile, url string) (tier, rule, host string) {
	return a.P.For(profile).Tier(url)
}

// HasTiers reports whether the profile gives any site another tier than
// full.
func (a Adapter) HasTiers(profile string) bool { return a.P.For(profile).HasTiers() }

var _ relay.TierRuler = Adapter{}

// AsksSubmit reports whether a click on a form's submit control is asked
// first.
func (a Adapter) AsksSubmit(profile string) bool { return a.P.For(profile).AsksSubmit() }

var _ relay.Asker = Adapter{}

// AsksNavigation reports whether the profile asks about any host.
func (a Adapter) AsksNavigation(profile string) bool { return a.P.For(profile).AsksNavigation() }

// AskNavigation is Ask for a navigation to url that a person approves
// first, wherever it started.
func (a Adapter) AskNavigation(profile, url string) relay.Decision {
	return convert(a.P.For(profile).AskNavigation(url))
}

var _ relay.NavigationAsker = Adapter{}

// UploadDirs are the folders the profile lets automation upload from.
func (a Adapter) UploadDirs(profile string) []string {
	return a.P.For(profile).UploadDirs()
}

func convert(d denylist.Decision) relay.Decision {
	switch d.Verdict {
	case denylist.Deny:
		return relay.Decision{Verdict: relay.Deny, Rule: d.Rule, Message: d.Message()}
	case denylist.AckAndDrop:
		return relay.Decision{Verdict: relay.AckAndDrop, Rule: d.Rule}
	case denylist.Ask:
		return relay.Decision{Verdict: relay.Ask, Rule: d.Rule, Message: d.Reason}
	}
	return relay.Decision{}
}
