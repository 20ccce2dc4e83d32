package denylist

import (
	"errors"
	"net/netip"
	"strings"

	"github.com/gobwas/glob"
)

// hostList is one compiled AllowedHosts or BlockedHosts list.
type hostList struct {
	// entries are the normalised entries in configuration order, for
	// Explain.
	entries []string
	exact   map[string]string // domain → entry as configured
	addrs   map[netip.Addr]string
	suffix  []namedString // leading-dot entries, without the dot
	globs   []namedGlob
	nets    []namedPrefix
}

type namedString struct{ s, entry string }
type namedGlob struct {
	g     *glob.Pattern
	entry string
}
type namedPrefix struct {
	p     netip.Prefix
	entry string
}

// match reports the configured entry that host matches. Domain entries
// (exact, leading dot) never match an IP literal; globs match domains and
// dotted-decimal IPv4, IPv4-mapped IPv6 included.
func (l *hostList) match(host string, addr netip.Addr) (string, bool) {
	if addr.IsValid() {
		a := addr.Unmap()
		if e, ok := l.addrs[a]; ok {
			return e, true
		}
		for _, n := range l.nets {
			if n.p.Contains(a) {
				return n.entry, true
			}
		}
		if !a.Is4() {
			return "", false
		}
		host = a.String()
	} else {
		if e, ok := l.exact[host]; ok {
			return e, true
		}
		for _, s := range l.suffix {
			if host == s.s || len(host) > len(s.s) && host[len(host)-len(s.s)-1] == '.' && host[len(host)-len(s.s):] == s.s {
				return s.entry, true
			}
		}
	}
	for _, g := range l.globs {
		if g.g.Match(host) {
			return g.entry, true
		}
	}
	return "", false
}

func compileHostList(list []string, fail func(i int, entry string, err error)) hostList {
	l := hostList{exact: map[string]string{}, addrs: map[netip.Addr]string{}}
	for i, e := range list {
		norm, err := l.add(e)
		if err != nil {
			fail(i, e, err)
			continue
		}
		l.entries = append(l.entries, norm)
	}
	return l
}

// add compiles one entry and returns its normalised form.
func (l *hostList) add(entry string) (string, error) {
	e := strings.TrimSpace(entry)
	switch {
	case e == "":
		return "", errors.New("an empty host entry")
	case strings.Contains(e, "://"):
		return "", errors.New("a host entry is a host name, not a URL")
	case strings.Contains(e, "/"):
		p, err := parsePrefix(e)
		if err != nil {
			return "", err
		}
		l.nets = append(l.nets, namedPrefix{p, entry})
		return p.String(), nil
	case strings.HasPrefix(e, "."):
		h, addr, err := parseHost(e[1:])
		if err != nil {
			return "", hostEntryError(err)
		}
		if addr.IsValid() {
			return "", errors.New("a leading-dot entry needs a domain name, not an IP address")
		}
		l.suffix = append(l.suffix, namedString{h, entry})
		return "." + h, nil
	case strings.ContainsAny(e, globMeta) && !ipv6Literal(e):
		p, err := normaliseGlob(e)
		if err != nil {
			return "", err
		}
		g, err := glob.Compile(p, '.')
		if err != nil {
			return "", err
		}
		l.globs = append(l.globs, namedGlob{g, entry})
		return p, nil
	}
	if strings.Count(e, ":") >= 2 && !strings.HasPrefix(e, "[") {
		e = "[" + e + "]"
	}
	if strings.Contains(e, ":") && !strings.HasPrefix(e, "[") {
		return "", errors.New("a host entry has no port: hosts match on any port")
	}
	h, addr, err := parseHost(e)
	if err != nil {
		return "", hostEntryError(err)
	}
	if addr.IsValid() {
		l.addrs[addr.Unmap()] = entry
		if addr.Is4In6() {
			return addr.Unmap().String(), nil
		}
		return h, nil
	}
	l.exact[h] = entry
	return h, nil
}

// hostEntryError words a host parse error for a configuration entry.
func hostEntryError(err error) error {
	return errors.New("not a valid host: " + strings.TrimPrefix(err.Error(), unparseablePrefix))
}

const globMeta = "*?[]{}\\"

// ipv6Literal tells a bracketed IPv6 entry from a glob that starts with a
// character class: an address has a colon inside the brackets.
func ipv6Literal(e string) bool {
	end := strings.IndexByte(e, ']')
	return strings.HasPrefix(e, "[") && end > 0 && strings.Contains(e[:end], ":")
}

// parsePrefix reads a CIDR entry; an IPv4-mapped IPv6 prefix becomes the
// IPv4 prefix it covers, as addresses are compared unmapped.
func parsePrefix(e string) (netip.Prefix, error) {
	e = strings.Replace(strings.Replace(e, "[", "", 1), "]", "", 1)
	p, err := netip.ParsePrefix(e)
	if err != nil {
		return p, errors.New("not a valid CIDR prefix (like 10.0.0.0/8 or fd00::/8)")
	}
	p = p.Masked()
	if p.Addr().Is4In6() && p.Bits() >= 96 {
		p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
	}
	return p, nil
}

// normaliseGlob brings a host glob to the form hosts are compared in:
// lower case, no trailing dot, literal non-ASCII labels in punycode.
func normaliseGlob(p string) (string, error) {
	if !isASCII(p) {
		labels := strings.Split(p, ".")
		for i, label := range labels {
			if isASCII(label) {
				continue
			}
			if strings.ContainsAny(label, globMeta) {
				return "", errors.New("a glob label mixes wildcards and non-ASCII characters: write that label in punycode (xn--...)")
			}
			a, err := domainToASCII(label)
			if err != nil {
				return "", hostEntryError(err)
			}
			labels[i] = a
		}
		p = strings.Join(labels, ".")
	}
	p = strings.TrimRight(lowerASCII(p), ".")
	for i := 0; i < len(p); i++ {
		if c := p[i]; !hostByte(c) && !strings.ContainsRune(globMeta+",!", rune(c)) {
			return "", errors.New("a host glob may hold letters, digits, '-', '_', '.' and the glob characters * ? [ ] { } , ! \\")
		}
	}
	if p == "" {
		return "", errors.New("an empty host glob")
	}
	return p, nil
}

func (l *hostList) empty() bool { return len(l.entries) == 0 }
