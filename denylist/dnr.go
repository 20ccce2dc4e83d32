package denylist

import (
	"net/netip"
	"regexp"
	"strconv"
	"strings"
)

// The first-request fence.
//
// The relay's navigation backstop (Fetch on the tabs it attaches) cannot
// see every navigation: a popup makes its first request before anything
// can attach to it, a speculation-rules prefetch and the navigation it
// serves bypass Fetch, and an out-of-process frame navigates through a
// session of its own. Chrome's declarativeNetRequest can: its session
// rules act on every request of a tab before it leaves the browser,
// including tabs that do not exist yet. NetworkRules translates the URL
// fence's host rules into such rules, which the relay's own extension
// installs for the shared tabs (and every tab not known to be the
// person's) while automation is connected.
//
// The translation never lets through what the fence refuses. Each host
// entry becomes a rule that names the entry's domain (requestDomains, which
// Chrome matches on the canonical host whatever the URL's userinfo or
// encoding) and, where the entry is narrower than a domain and its
// subdomains, a regular expression over the canonical URL's host. An entry
// that cannot be expressed (an IPv6 prefix) is left out of the allowed
// rules, so that what it would allow is blocked on its first request, and
// widened in the blocked rules (every IPv6 literal). So a first request is
// refused at least as often as the fence would refuse it.

// DNRRule is one chrome.declarativeNetRequest rule, without the tab
// scoping the extension adds.
type DNRRule struct {
	ID        int          `json:"id"`
	Priority  int          `json:"priority"`
	Action    DNRAction    `json:"action"`
	Condition DNRCondition `json:"condition"`
}

// DNRAction is a rule's action.
type DNRAction struct {
	Type string `json:"type"` // "block" or "allow"
}

// DNRCondition is a rule's condition: all of its fields must match.
type DNRCondition struct {
	RegexFilter    string   `json:"regexFilter,omitempty"`
	RequestDomains []string `json:"requestDomains,omitempty"`
	ResourceTypes  []string `json:"resourceTypes"`
}

// Priorities: blocked entries win over allowed ones, which win over the
// block-all that an allow list implies.
const (
	dnrPriorityAll     = 1
	dnrPriorityAllow   = 2
	dnrPriorityBlocked = 3
)

var dnrTypes = []string{"main_frame", "sub_frame"}

// The canonical URL of a network request, around its host: scheme, an
// optional userinfo (Chrome keeps it in the URL rules see), the host, an
// optional trailing dot and port, then the path, query, fragment or end.
const (
	dnrURLPrefix = `^(https?|wss?|ftp)://([^/?#@]*@)?`
	dnrURLSuffix = `\.?(:[0-9]*)?([/?#]|$)`
)

// NetworkRules returns the declarativeNetRequest rules of the fence's host
// rules, or nil when the fence refuses no host (FencesHosts).
func (e *Effective) NetworkRules() []DNRRule {
	if !e.FencesHosts() {
		return nil
	}
	var rules []DNRRule
	add := func(prio int, action string, c DNRCondition) {
		c.ResourceTypes = dnrTypes
		rules = append(rules, DNRRule{ID: len(rules) + 1, Priority: prio, Action: DNRAction{Type: action}, Condition: c})
	}
	if !e.allowed.empty() {
		add(dnrPriorityAll, "block", DNRCondition{RegexFilter: `^(https?|wss?|ftp)://`})
		for _, c := range e.allowed.dnrConditions(false) {
			add(dnrPriorityAllow, "allow", c)
		}
	}
	for _, c := range e.blocked.dnrConditions(true) {
		add(dnrPriorityBlocked, "block", c)
	}
	if e.blockPrivate {
		for _, c := range privateConditions() {
			add(dnrPriorityBlocked, "block", c)
		}
	}
	return rules
}

// dnrConditions expresses the list's entries. widen: the conditions may
// match more than the entries (a block list); otherwise never more (an
// allow list).
func (l *hostList) dnrConditions(widen bool) []DNRCondition {
	var out []DNRCondition
	for h := range l.exact {
		out = append(out, DNRCondition{RequestDomains: []string{h}, RegexFilter: dnrURLPrefix + regexp.QuoteMeta(h) + dnrURLSuffix})
	}
	for _, s := range l.suffix {
		out = append(out, DNRCondition{RequestDomains: []string{s.s}})
	}
	for a := range l.addrs {
		out = append(out, addrCondition(a))
	}
	for _, n := range l.nets {
		if c, ok := prefixCondition(n.p); ok {
			out = append(out, c)
		} else if widen {
			out = append(out, DNRCondition{RegexFilter: dnrURLPrefix + `\[`})
		}
	}
	for _, g := range l.globs {
		re, ok := globRegex(g.entry)
		switch {
		case ok:
			c := DNRCondition{RegexFilter: dnrURLPrefix + re + dnrURLSuffix}
			if d := globDomain(g.entry); d != "" {
				c.RequestDomains = []string{d}
			}
			out = append(out, c)
		case widen:
			if d := globDomain(g.entry); d != "" {
				out = append(out, DNRCondition{RequestDomains: []string{d}})
			}
		}
	}
	return out
}

func addrCondition(a netip.Addr) DNRCondition {
	if a.Is4() {
		return DNRCondition{RequestDomains: []string{a.String()}, RegexFilter: dnrURLPrefix + regexp.QuoteMeta(a.String()) + dnrURLSuffix}
	}
	return DNRCondition{RegexFilter: dnrURLPrefix + `\[` + regexp.QuoteMeta(a.String()) + `\](:[0-9]*)?([/?#]|$)`}
}

// prefixCondition expresses an IPv4 prefix as a pattern over the canonical
// dotted-decimal host. IPv6 prefixes are not expressed.
func prefixCondition(p netip.Prefix) (DNRCondition, bool) {
	if !p.Addr().Is4() {
		return DNRCondition{}, false
	}
	b := p.Addr().As4()
	bits := p.Bits()
	var parts []string
	for i := 0; i < 4; i++ {
		switch {
		case bits >= 8*(i+1):
			parts = append(parts, strconv.Itoa(int(b[i])))
		case bits <= 8*i:
			parts = append(parts, `(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])`)
		default:
			free := 8*(i+1) - bits
			lo := int(b[i])
			hi := lo | (1<<free - 1)
			parts = append(parts, octetRange(lo, hi))
		}
	}
	return DNRCondition{RegexFilter: dnrURLPrefix + strings.Join(parts, `\.`) + dnrURLSuffix}, true
}

// octetRange is an alternation of the decimal numbers lo..hi.
func octetRange(lo, hi int) string {
	var alts []string
	for n := lo; n <= hi; n++ {
		alts = append(alts, strconv.Itoa(n))
	}
	return "(" + strings.Join(alts, "|") + ")"
}

// privateConditions refuse what BlockPrivateAddresses refuses by address:
// the private, loopback, link-local and shared IPv4 ranges, every IPv6
// literal (its private ranges cannot be expressed), and the names Chrome
// resolves to loopback.
func privateConditions() []DNRCondition {
	out := []DNRCondition{{RequestDomains: []string{"localhost"}}, {RegexFilter: dnrURLPrefix + `\[`}}
	for _, s := range []string{"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12", "192.0.0.0/24", "192.0.2.0/24", "192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24", "203.0.113.0/24", "224.0.0.0/3"} {
		c, _ := prefixCondition(netip.MustParsePrefix(s))
		out = append(out, c)
	}
	return out
}

// globRegex translates a normalised host glob: '*' is any run within a
// label, '**' any run of labels, '?' one character of a label, classes and
// alternatives as gobwas/glob reads them.
func globRegex(g string) (string, bool) {
	const label = `[^./?#@:\[\]]`
	var b strings.Builder
	depth := 0
	for i := 0; i < len(g); i++ {
		c := g[i]
		switch {
		case c == '*' && i+1 < len(g) && g[i+1] == '*':
			b.WriteString(`[^/?#@:\[\]]*`)
			i++
		case c == '*':
			b.WriteString(label + "*")
		case c == '?':
			b.WriteString(label)
		case c == '[':
			end := strings.IndexByte(g[i:], ']')
			if end < 0 {
				return "", false
			}
			class := g[i+1 : i+end]
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			if strings.ContainsAny(class, `\[`) {
				return "", false
			}
			b.WriteString("[" + class + "]")
			i += end
		case c == '{':
			depth++
			b.WriteString("(")
		case c == '}' && depth > 0:
			depth--
			b.WriteString(")")
		case c == ',' && depth > 0:
			b.WriteString("|")
		case c == '\\':
			if i+1 >= len(g) {
				return "", false
			}
			i++
			b.WriteString(regexp.QuoteMeta(g[i : i+1]))
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	if depth != 0 {
		return "", false
	}
	return b.String(), true
}

// globDomain is the domain every host a glob matches lies in: the labels
// after its last wildcard, when they make a domain of two labels or more.
func globDomain(g string) string {
	labels := strings.Split(g, ".")
	last := -1
	for i, l := range labels {
		if strings.ContainsAny(l, globMeta+",") {
			last = i
		}
	}
	rest := labels[last+1:]
	if len(rest) < 2 {
		return ""
	}
	return strings.Join(rest, ".")
}
