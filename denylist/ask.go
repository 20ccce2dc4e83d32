package denylist

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gobwas/glob"
)

// Rule ids of the Ask verdict.
const (
	RuleAskDomain = "ask:domain"
	RuleAskSubmit = "ask:submit"
)

// askRulePrefix starts the rule id of an AskMethods entry.
const askRulePrefix = "ask:method:"

func (e *Effective) compileAsk(c Config, fail func(string, int, string, error)) {
	e.askMethods = map[string]bool{}
	for i, p := range c.AskMethods {
		pat := strings.TrimSpace(p)
		if err := checkMethodPattern(pat); err != nil {
			fail(fieldAskMethods, i, p, err)
			continue
		}
		if !strings.ContainsAny(pat, globMeta) {
			e.askMethods[pat] = true
			continue
		}
		g, err := glob.Compile(pat)
		if err != nil {
			fail(fieldAskMethods, i, p, err)
			continue
		}
		e.askGlobs = append(e.askGlobs, methodGlob{g: g, pattern: pat, rule: askRulePrefix + pat})
	}
	e.askHosts = compileHostList(c.AskDomains, func(i int, entry string, err error) { fail(fieldAskDomains, i, entry, err) })
	e.askSubmit = c.AskSubmit
}

// ask is the verdict of the ask list for a method the method rules let
// through.
func (e *Effective) ask(method string) Decision {
	if len(e.askMethods) == 0 && len(e.askGlobs) == 0 {
		return Decision{}
	}
	if e.askMethods[method] {
		return Decision{Verdict: Ask, Rule: askRulePrefix + method, Reason: method + " is on the ask list"}
	}
	for _, g := range e.askGlobs {
		if g.g.Match(method) {
			return Decision{Verdict: Ask, Rule: g.rule, Reason: clip(method) + " matches " + g.pattern + " on the ask list"}
		}
	}
	return Decision{}
}

// askURL is the verdict of AskDomains for a navigation the fence lets
// through.
func (e *Effective) askURL(raw string) Decision {
	if e.askHosts.empty() {
		return Decision{}
	}
	u, err := ParseURL(raw)
	if err != nil || u.Host == "" {
		return Decision{}
	}
	if entry, ok := e.askHosts.match(u.Host, u.Addr); ok {
		return Decision{Verdict: Ask, Rule: RuleAskDomain, Reason: "navigating to " + clip(u.Host) + " is asked first (ask_domains entry " + clip(entry) + ")"}
	}
	return Decision{}
}

// AskNavigation is the verdict of AskDomains for a navigation to raw that
// no command announced (a redirect, a link, the page's own): Ask, or
// Allow.
func (e *Effective) AskNavigation(raw string) Decision { return e.askURL(raw) }

// AsksNavigation reports whether any host is asked about.
func (e *Effective) AsksNavigation() bool { return !e.askHosts.empty() }

// AsksSubmit reports whether a click on a form's submit control, or Enter
// in a form's field, is asked first.
func (e *Effective) AsksSubmit() bool { return e.askSubmit }

// Asks reports whether anything is asked first.
func (e *Effective) Asks() bool {
	return e.askSubmit || len(e.askMethods) > 0 || len(e.askGlobs) > 0 || !e.askHosts.empty()
}

func (e *Effective) askRules() []string {
	out := []string{RuleAskDomain, RuleAskSubmit}
	for m := range e.askMethods {
		out = append(out, askRulePrefix+m)
	}
	for _, g := range e.askGlobs {
		out = append(out, g.rule)
	}
	return out
}

// explainAsk describes what a person approves first.
func (e *Effective) explainAsk(b *strings.Builder) {
	if !e.Asks() {
		b.WriteString("  approvals: nothing is asked first\n")
		return
	}
	b.WriteString("  approvals (held until a person approves in the live view):\n")
	var methods []string
	for m := range e.askMethods {
		methods = append(methods, m)
	}
	for _, g := range e.askGlobs {
		methods = append(methods, g.pattern)
	}
	if len(methods) > 0 {
		fmt.Fprintf(b, "    methods: %s (input events when they act: press, key down, touch start)\n", strings.Join(slices.Sorted(slices.Values(methods)), ", "))
	}
	if !e.askHosts.empty() {
		fmt.Fprintf(b, "    navigations to: %s\n", strings.Join(e.askHosts.entries, ", "))
	}
	if e.askSubmit {
		b.WriteString("    clicks on a form's submit control, Enter in a form's field, clicks into frames of another origin\n")
	}
}
