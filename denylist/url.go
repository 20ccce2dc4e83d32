package denylist

import (
	"net/netip"
	"strings"
	"unicode/utf8"
)

// ParsedURL is what the URL fence judges in a URL: the parts Chrome acts
// on when it navigates, normalised the way Chrome's parser (the WHATWG URL
// standard) normalises them.
type ParsedURL struct {
	// Scheme is lower case, without the colon. For a view-source: URL it
	// is the scheme of the URL inside.
	Scheme string
	// ViewSource reports that the URL was wrapped in view-source:.
	ViewSource bool
	// Host is set for the schemes the host fence applies to (http, https,
	// ws, wss, ftp): lower-case ASCII, IDNs in punycode, no trailing dot;
	// IPv4 in dotted decimal; IPv6 in brackets, compressed, lower case.
	Host string
	// Addr is the address when Host is an IP literal.
	Addr netip.Addr
	// Port is the port the URL reaches, for the schemes Host is set for:
	// the one it names, or its scheme's default (80 for http and ws, 443
	// for https and wss, 21 for ftp), as Chrome connects.
	Port uint16
	// Opaque is what follows "about:", up to any query or fragment.
	Opaque string
}

// Rule ids of the URL fence.
const (
	RuleURLEmpty          = "url:empty"
	RuleURLRelative       = "url:relative"
	RuleURLUnparseable    = "url:unparseable"
	RuleURLScheme         = "url:scheme"
	RuleURLAbout          = "url:about"
	RuleURLBlockedHost    = "url:blocked-host"
	RuleURLHostNotAllowed = "url:host-not-allowed"
	RuleURLPrivate        = "url:private-address"
	// RuleURLParams is a URL-bearing command whose params carry no usable
	// URL: absent, not a string, given twice, or params that are not a
	// JSON object.
	RuleURLParams = "url:params"
)

// urlRules lists the rule ids above, for Policy.Rules.
var urlRules = []string{
	RuleURLEmpty, RuleURLRelative, RuleURLUnparseable, RuleURLScheme, RuleURLAbout,
	RuleURLBlockedHost, RuleURLHostNotAllowed, RuleURLPrivate, RuleURLParams,
}

// URLError is why a URL could not be parsed.
type URLError struct {
	Rule   string
	Reason string
}

func (e *URLError) Error() string { return e.Reason }

func urlErr(rule, reason string) *URLError { return &URLError{Rule: rule, Reason: reason} }

const unparseablePrefix = "the URL cannot be parsed: "

func unparseable(why string) *URLError {
	return urlErr(RuleURLUnparseable, unparseablePrefix+why)
}

// hostScheme reports the special schemes whose URLs name a network host.
// file is special too, but its host is a share name, not something the
// host lists speak about.
func hostScheme(s string) bool {
	switch s {
	case "http", "https", "ws", "wss", "ftp":
		return true
	}
	return false
}

// ParseURL parses raw the way the fence does. It refuses what Chrome would
// refuse and also whatever this parser is not sure Chrome reads the same
// way; a refused URL is never allowed by the fence.
func ParseURL(raw string) (ParsedURL, error) {
	u, rest, err := splitURL(raw)
	if err != nil {
		return u, err
	}
	return u, u.parseRest(rest)
}

// splitURL cleans raw, unwraps view-source: and splits off the scheme: what
// the scheme fence needs, before the host is looked at.
func splitURL(raw string) (u ParsedURL, rest string, err error) {
	s := cleanURL(raw)
	if s == "" {
		return u, "", urlErr(RuleURLEmpty, "the URL is empty")
	}
	if !utf8.ValidString(s) {
		return u, "", unparseable("it is not valid UTF-8")
	}
	scheme, rest, ok := splitScheme(s)
	if !ok {
		return u, "", urlErr(RuleURLRelative, "the URL has no scheme (a relative URL)")
	}
	if scheme == "view-source" {
		// Chrome navigates to the inner URL and shows its source; the
		// inner URL is parsed on its own, leading spaces and all.
		u.ViewSource = true
		s = cleanURL(rest)
		if s == "" {
			return u, "", unparseable("view-source: wraps nothing")
		}
		if scheme, rest, ok = splitScheme(s); !ok {
			return u, "", unparseable("view-source: wraps a relative URL")
		}
		if scheme == "view-source" {
			return u, "", unparseable("view-source: wraps another view-source: URL")
		}
	}
	u.Scheme = scheme
	return u, rest, nil
}

// parseRest parses what follows the scheme, for the schemes whose rest the
// fence looks at.
func (u *ParsedURL) parseRest(rest string) error {
	switch {
	case hostScheme(u.Scheme):
		host, port, err := authorityHost(rest)
		if err != nil {
			return err
		}
		h, addr, err := parseHost(host)
		if err != nil {
			return err
		}
		u.Host, u.Addr, u.Port = h, addr, defaultPort(u.Scheme)
		if port >= 0 {
			u.Port = uint16(port)
		}
	case u.Scheme == "about":
		if i := strings.IndexAny(rest, "?#"); i >= 0 {
			rest = rest[:i]
		}
		u.Opaque = rest
	}
	return nil
}

// cleanURL drops what Chrome drops before parsing: leading and trailing C0
// controls and spaces, and every tab and newline.
func cleanURL(s string) string {
	s = strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
	if !strings.ContainsAny(s, "\t\n\r") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\t', '\n', '\r':
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// splitScheme returns the lower-case scheme and what follows its colon, or
// false when s does not start with a scheme (a relative URL).
func splitScheme(s string) (scheme, rest string, ok bool) {
	if s == "" || !isAlpha(s[0]) {
		return "", "", false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case isAlpha(c) || isDigit(c) || c == '+' || c == '-' || c == '.':
		case c == ':':
			return lowerASCII(s[:i]), s[i+1:], true
		default:
			return "", "", false
		}
	}
	return "", "", false
}

// authorityHost returns the host part of a special URL's authority and its
// port (-1 for none): leading slashes of either kind skipped, the authority
// ending at the first /, \, ? or #, the userinfo up to the last @ dropped,
// the port checked and read.
func authorityHost(rest string) (string, int, error) {
	i := 0
	for i < len(rest) && (rest[i] == '/' || rest[i] == '\\') {
		i++
	}
	auth := rest[i:]
	if end := strings.IndexAny(auth, "/\\?#"); end >= 0 {
		auth = auth[:end]
	}
	if at := strings.LastIndexByte(auth, '@'); at >= 0 {
		auth = auth[at+1:]
	}
	host, port := auth, ""
	if strings.HasPrefix(auth, "[") {
		end := strings.IndexByte(auth, ']')
		if end < 0 {
			return "", 0, unparseable("an IPv6 address without its closing bracket")
		}
		host = auth[:end+1]
		switch after := auth[end+1:]; {
		case after == "":
		case after[0] == ':':
			port = after[1:]
		default:
			return "", 0, unparseable("characters after an IPv6 address")
		}
	} else if c := strings.IndexByte(auth, ':'); c >= 0 {
		host, port = auth[:c], auth[c+1:]
	}
	if host == "" {
		return "", 0, unparseable("the host is empty")
	}
	n, ok := parsePort(port)
	if !ok {
		return "", 0, unparseable("the port is not a number from 0 to 65535")
	}
	return host, n, nil
}

// parsePort reads a URL's port: decimal digits, leading zeros allowed, at
// most 65535; -1 for none (empty, as Chrome reads "host:").
func parsePort(p string) (int, bool) {
	if p == "" {
		return -1, true
	}
	n := 0
	for i := 0; i < len(p); i++ {
		if !isDigit(p[i]) {
			return 0, false
		}
		if n = n*10 + int(p[i]-'0'); n > 65535 {
			return 0, false
		}
	}
	return n, true
}

// defaultPort is the port a special scheme's URL without one reaches.
func defaultPort(scheme string) uint16 {
	switch scheme {
	case "https", "wss":
		return 443
	case "ftp":
		return 21
	}
	return 80
}

func isAlpha(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool { return '0' <= c && c <= '9' }
func isHex(c byte) bool   { return isDigit(c) || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

// lowerASCII lower-cases s without allocating when it already is.
func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}
