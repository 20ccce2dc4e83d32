package denylist

import (
	"errors"
	"fmt"
	"strings"
)

// Tiers: what automation may do on a site, by the host of the page a tab
// (or frame) shows right now.
//
//   - full: everything the rest of the policy allows;
//   - read-only: the automation may read the page but not act on it;
//   - blind: the automation sees nothing of the page and may only leave.
//
// Tier rules list hosts in the syntax of AllowedHosts. When a host matches
// rules of several tiers, the strictest wins (blind, then read-only);
// a host no rule matches has DefaultTier. Only http and https pages have a
// tier of their own; the relay decides what the others are.

// Tier names.
const (
	TierFull     = "full"
	TierReadOnly = "read-only"
	TierBlind    = "blind"
)

// Rule ids of refusals by tier.
const (
	RuleTierBlind    = "tier:blind"
	RuleTierReadOnly = "tier:read-only"
)

// TierRule gives hosts a tier.
type TierRule struct {
	// Hosts are host entries, as in AllowedHosts.
	Hosts []string `json:"hosts" yaml:"hosts"`
	// Tier is "blind" or "read-only" ("full" is what no rule says).
	Tier string `json:"tier" yaml:"tier"`
}

// tierList is the compiled tier rules of one Effective.
type tierList struct {
	blind, readOnly hostList
	def             string
}

func compileTiers(rules []TierRule, def string, fail func(field string, i int, entry string, err error)) tierList {
	var tl tierList
	var blind, readOnly []string
	for i, r := range rules {
		switch strings.TrimSpace(r.Tier) {
		case TierBlind:
			blind = append(blind, r.Hosts...)
		case TierReadOnly:
			readOnly = append(readOnly, r.Hosts...)
		case TierFull:
			fail(fieldTiers, i, r.Tier, errors.New("a tier rule gives blind or read-only; full is what no rule says (use default_tier)"))
		default:
			fail(fieldTiers, i, r.Tier, errors.New("a tier is blind or read-only"))
		}
		if len(r.Hosts) == 0 {
			fail(fieldTiers, i, r.Tier, errors.New("a tier rule needs hosts"))
		}
	}
	tl.blind = compileHostList(blind, func(i int, entry string, err error) { fail(fieldTiers, i, entry, err) })
	tl.readOnly = compileHostList(readOnly, func(i int, entry string, err error) { fail(fieldTiers, i, entry, err) })
	switch d := strings.TrimSpace(def); d {
	case "", TierFull:
		tl.def = TierFull
	case TierReadOnly, TierBlind:
		tl.def = d
	default:
		fail(fieldDefaultTier, 0, def, errors.New("default_tier is full, read-only or blind"))
	}
	return tl
}

// Tier returns the tier of the page at raw, the rule id a refusal by it
// carries, and the host it was decided for. A URL without a network host
// (about:blank, an error page) is full, as is one that does not parse:
// the URL fence and the relay judge those.
func (e *Effective) Tier(raw string) (tier, rule, host string) {
	// A blob: or filesystem: URL's content is its origin's.
	for _, p := range []string{"blob:", "filesystem:"} {
		if len(raw) > len(p) && strings.EqualFold(raw[:len(p)], p) {
			raw = raw[len(p):]
			break
		}
	}
	u, err := ParseURL(raw)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return TierFull, "", ""
	}
	if _, ok := e.tiers.blind.match(u.Host, u.Addr); ok {
		return TierBlind, RuleTierBlind, u.Host
	}
	if _, ok := e.tiers.readOnly.match(u.Host, u.Addr); ok {
		return TierReadOnly, RuleTierReadOnly, u.Host
	}
	switch e.tiers.def {
	case TierBlind:
		return TierBlind, RuleTierBlind, u.Host
	case TierReadOnly:
		return TierReadOnly, RuleTierReadOnly, u.Host
	}
	return TierFull, "", u.Host
}

// HasTiers reports whether any page can be other than full.
func (e *Effective) HasTiers() bool {
	return !e.tiers.blind.empty() || !e.tiers.readOnly.empty() || e.tiers.def != TierFull
}

// explainTiers describes the tiers for people.
func (e *Effective) explainTiers(b *strings.Builder) {
	if !e.HasTiers() {
		b.WriteString("  tiers: every site is full (no tiers)\n")
		return
	}
	b.WriteString("  tiers (by the host of the page a tab or frame shows now; the strictest match wins):\n")
	if !e.tiers.blind.empty() {
		fmt.Fprintf(b, "    blind: %s — nothing of these pages reaches automation or the live view; it may only navigate away, detach, or close a tab it opened\n", strings.Join(e.tiers.blind.entries, ", "))
	}
	if !e.tiers.readOnly.empty() {
		fmt.Fprintf(b, "    read-only: %s — automation may read these pages, not act on them (no input, navigation, DOM writes, or script with side effects)\n", strings.Join(e.tiers.readOnly.entries, ", "))
	}
	fmt.Fprintf(b, "    every other site: %s\n", e.tiers.def)
}
