package denylist

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
)

// Explain describes the policy for people, as `cdprelay check-config`
// prints it.
func (e *Effective) Explain() string {
	var b strings.Builder
	if e.profile == "" {
		b.WriteString("global policy\n")
	} else {
		fmt.Fprintf(&b, "profile %q\n", e.profile)
	}

	b.WriteString("  method rules (deny wins over ack-and-drop; any other method is allowed):\n")
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	defaults := map[string]bool{}
	if !e.cfg.NoDefaults {
		for _, r := range defaultRules {
			defaults[r.Rule] = true
		}
	}
	for _, m := range slices.Sorted(maps.Keys(e.methods)) {
		en := e.methods[m]
		switch en.kind {
		case methodURL:
			fmt.Fprintf(tw, "    url fence\t%s\tparams.%s goes through the URL fence\n", m, en.param.name)
		case methodWhenParams:
			fmt.Fprintf(tw, "    %s\t%s\twhen params carry %s: %s%s\n", en.d.Verdict, m, strings.Join(en.keys, " or "), en.d.Reason, origin(defaults[en.d.Rule]))
		case methodWhen:
			fmt.Fprintf(tw, "    %s\t%s\twhen %s: %s%s\n", en.d.Verdict, m, en.cond, en.d.Reason, origin(defaults[en.d.Rule]))
		default:
			fmt.Fprintf(tw, "    %s\t%s\t%s%s\n", en.d.Verdict, m, en.d.Reason, origin(defaults[en.d.Rule]))
		}
	}
	for _, g := range e.denyGlobs {
		fmt.Fprintf(tw, "    deny\t%s\tevery method matching this glob\n", g.pattern)
	}
	for _, g := range e.ackGlobs {
		fmt.Fprintf(tw, "    ack-and-drop\t%s\tevery method matching this glob\n", g.pattern)
	}
	tw.Flush()
	if e.cfg.NoDefaults {
		b.WriteString("  the default method rules are off (no_defaults)\n")
	}

	fmt.Fprintf(&b, "  schemes allowed: %s; about:blank and about:srcdoc always\n", strings.Join(slices.Sorted(maps.Keys(e.schemes)), ", "))
	if e.allowed.empty() {
		b.WriteString("  hosts allowed: any\n")
	} else {
		fmt.Fprintf(&b, "  hosts allowed: only %s\n", strings.Join(e.allowed.entries, ", "))
	}
	if e.blocked.empty() {
		b.WriteString("  hosts blocked: none\n")
	} else {
		fmt.Fprintf(&b, "  hosts blocked: %s (blocked wins over allowed)\n", strings.Join(e.blocked.entries, ", "))
	}
	e.explainTiers(&b)
	e.explainAsk(&b)
	if len(e.uploads) == 0 {
		b.WriteString("  uploads: refused (no uploads_dir)\n")
	} else {
		fmt.Fprintf(&b, "  uploads: only files inside %s (symlinks and .. resolved first)\n", strings.Join(e.uploads, ", "))
	}
	if e.blockPrivate {
		b.WriteString("  private addresses: refused (IP literals that are not public, and localhost names; names resolved by DNS are not checked)\n")
	} else {
		b.WriteString("  private addresses: not refused by address\n")
	}
	return b.String()
}

func origin(isDefault bool) string {
	if isDefault {
		return " [default]"
	}
	return ""
}

// Explain describes the global policy and every profile.
func (p *Policy) Explain() string {
	var b strings.Builder
	b.WriteString(p.global.Explain())
	for _, name := range p.Profiles() {
		b.WriteString("\n")
		b.WriteString(p.profiles[name].Explain())
	}
	return b.String()
}
