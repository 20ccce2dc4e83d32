package denylist

import (
	"net/netip"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// idnaLookup has the UTS #46 options of the URL standard's "domain to
// ASCII", which Chrome follows: non-transitional, no STD3 rules, no hyphen
// checks, Bidi and joiner checks on.
var idnaLookup = idna.New(idna.MapForLookup(), idna.StrictDomainName(false),
	idna.CheckHyphens(false), idna.CheckJoiners(true), idna.BidiRule(), idna.Transitional(false))

// parseHost normalises a host the way the URL standard's host parser does
// for special schemes, and refuses what it accepts only in corners where
// browsers and versions have differed: hosts are returned only when every
// byte is a letter, digit, '-', '_' or '.', with no empty label.
func parseHost(h string) (string, netip.Addr, error) {
	if strings.HasPrefix(h, "[") {
		return parseIPv6(h)
	}
	if strings.ContainsAny(h, "[]") {
		return "", netip.Addr{}, unparseable("a bracket outside an IPv6 address")
	}
	if strings.IndexByte(h, '%') >= 0 {
		h = percentDecode(h)
		if !utf8.ValidString(h) {
			return "", netip.Addr{}, unparseable("the percent-decoded host is not valid UTF-8")
		}
	}
	var err error
	if h, err = domainToASCII(h); err != nil {
		return "", netip.Addr{}, err
	}
	for i := 0; i < len(h); i++ {
		if !hostByte(h[i]) {
			return "", netip.Addr{}, unparseable("the host has a character other than a letter, digit, '-', '_' or '.': " + strconv.QuoteRune(rune(h[i])))
		}
	}
	trimmed := strings.TrimRight(h, ".")
	if trimmed == "" {
		return "", netip.Addr{}, unparseable("the host is empty")
	}
	if strings.HasPrefix(trimmed, ".") || strings.Contains(trimmed, "..") {
		return "", netip.Addr{}, unparseable("the host has an empty label")
	}
	last := trimmed[strings.LastIndexByte(trimmed, '.')+1:]
	if !numericLabel(last) {
		return trimmed, netip.Addr{}, nil
	}
	// The standard reads a host whose last label is a number as IPv4,
	// dropping one trailing dot; with more dots it would be a domain name,
	// which resolvers may still read as an address.
	if len(h)-len(trimmed) > 1 {
		return "", netip.Addr{}, unparseable("a numeric host with more than one trailing dot")
	}
	addr, ok := parseIPv4(trimmed)
	if !ok {
		return "", netip.Addr{}, unparseable("the host ends in a number but is not an IPv4 address")
	}
	return addr.String(), addr, nil
}

func hostByte(c byte) bool {
	return 'a' <= c && c <= 'z' || isDigit(c) || c == '-' || c == '_' || c == '.'
}

// percentDecode decodes every valid %XX and leaves any other '%' as it is,
// as the URL standard does; the '%' left is then refused.
func percentDecode(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
			continue
		}
		b = append(b, s[i])
	}
	return string(b)
}

func unhex(c byte) byte {
	switch {
	case isDigit(c):
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

// domainToASCII lower-cases an ASCII host and maps any other through
// UTS #46 to punycode.
func domainToASCII(h string) (string, error) {
	if isASCII(h) {
		h = lowerASCII(h)
		if !hasACELabel(h) {
			return h, nil
		}
		// Punycode labels are decoded and checked, as the standard does;
		// the host stays as written.
		if _, err := idnaLookup.ToASCII(h); err != nil || emptyACELabel(h) {
			return "", unparseable("the host has an invalid punycode label")
		}
		return h, nil
	}
	if strings.ContainsAny(h, deviations) {
		return "", unparseable("the host has a character that browsers map differently (ß, ẞ, ς, zero-width joiners)")
	}
	a, err := idnaLookup.ToASCII(h)
	if err != nil || !isASCII(a) || emptyACELabel(a) {
		return "", unparseable("the host is not a valid internationalised domain name")
	}
	// The punycode form must parse as itself again, or the host judged
	// here and the host a second parser sees could differ (very long
	// labels encode to punycode that the decoder refuses).
	if _, err := idnaLookup.ToASCII(a); err != nil {
		return "", unparseable("the host's punycode form does not parse again")
	}
	return a, nil
}

// deviations are the characters UTS #46 maps differently in transitional
// processing (older Chrome) and non-transitional processing (newer
// Chrome), with ẞ, whose mapping changed in Unicode 16: Chrome's ICU and
// this package's tables may disagree on them, so the same URL could reach
// different hosts.
const deviations = "\u00df\u1e9e\u03c2\u200c\u200d"

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// emptyACELabel finds a label that is the bare prefix "xn--": the
// punycode of nothing, which newer UTS #46 revisions refuse.
func emptyACELabel(h string) bool {
	for label := range strings.SplitSeq(h, ".") {
		if label == "xn--" {
			return true
		}
	}
	return false
}

func hasACELabel(h string) bool {
	for len(h) > 0 {
		if strings.HasPrefix(h, "xn--") {
			return true
		}
		i := strings.IndexByte(h, '.')
		if i < 0 {
			return false
		}
		h = h[i+1:]
	}
	return false
}

// numericLabel is the URL standard's "ends in a number" test on the last
// label: all digits, or 0x followed by hex digits.
func numericLabel(l string) bool {
	if l == "" {
		return false
	}
	if strings.HasPrefix(l, "0x") {
		for i := 2; i < len(l); i++ {
			if !isHex(l[i]) {
				return false
			}
		}
		return true
	}
	for i := 0; i < len(l); i++ {
		if !isDigit(l[i]) {
			return false
		}
	}
	return true
}

// parseIPv4 is the URL standard's IPv4 parser: one to four parts, each
// decimal, octal (leading 0) or hex (0x); the last part fills the
// remaining bytes. h is lower case, without a trailing dot, with no empty
// label.
func parseIPv4(h string) (netip.Addr, bool) {
	var nums [4]uint64
	n := 0
	for part := range strings.SplitSeq(h, ".") {
		if n == 4 {
			return netip.Addr{}, false
		}
		v, ok := parseIPv4Number(part)
		if !ok {
			return netip.Addr{}, false
		}
		nums[n] = v
		n++
	}
	for i := 0; i < n-1; i++ {
		if nums[i] > 255 {
			return netip.Addr{}, false
		}
	}
	if nums[n-1] >= 1<<(8*(5-n)) {
		return netip.Addr{}, false
	}
	v := nums[n-1]
	for i := 0; i < n-1; i++ {
		v += nums[i] << (8 * (3 - i))
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

// parseIPv4Number saturates above 2^32: any such value fails the range
// checks that follow.
func parseIPv4Number(s string) (uint64, bool) {
	if s == "" {
		return 0, false
	}
	base := uint64(10)
	switch {
	case strings.HasPrefix(s, "0x"):
		s, base = s[2:], 16
	case len(s) > 1 && s[0] == '0':
		s, base = s[1:], 8
	}
	var v uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		var d uint64
		switch {
		case isDigit(c):
			d = uint64(c - '0')
		case base == 16 && 'a' <= c && c <= 'f':
			d = uint64(c-'a') + 10
		default:
			return 0, false
		}
		if d >= base {
			return 0, false
		}
		if v = v*base + d; v > 1<<32 {
			v = 1<<32 + 1
		}
	}
	return v, true
}

// parseIPv6 parses a bracketed IPv6 literal. Zones are refused: the URL
// standard has none, and a zone would pick an interface.
func parseIPv6(h string) (string, netip.Addr, error) {
	if len(h) < 2 || h[len(h)-1] != ']' {
		return "", netip.Addr{}, unparseable("an IPv6 address without its closing bracket")
	}
	in := h[1 : len(h)-1]
	for i := 0; i < len(in); i++ {
		if c := in[i]; !isHex(c) && c != ':' && c != '.' {
			return "", netip.Addr{}, unparseable("an IPv6 address with a character other than hex digits, ':' and '.'")
		}
	}
	addr, err := netip.ParseAddr(in)
	if err != nil || !addr.Is6() {
		return "", netip.Addr{}, unparseable("an invalid IPv6 address")
	}
	return formatIPv6(addr), addr, nil
}

// formatIPv6 serialises as the URL standard does: lower-case hex, the
// first longest run of two or more zero pieces compressed, no embedded
// IPv4 notation.
func formatIPv6(a netip.Addr) string {
	b := a.As16()
	var p [8]uint16
	for i := range p {
		p[i] = uint16(b[2*i])<<8 | uint16(b[2*i+1])
	}
	start, length := -1, 1
	for i := 0; i < 8; {
		if p[i] != 0 {
			i++
			continue
		}
		j := i
		for j < 8 && p[j] == 0 {
			j++
		}
		if j-i > length {
			start, length = i, j-i
		}
		i = j
	}
	out := make([]byte, 0, 41)
	out = append(out, '[')
	for i := 0; i < 8; i++ {
		if i == start {
			out = append(out, "::"...)
			i += length - 1
			continue
		}
		if i > 0 && i != start+length {
			out = append(out, ':')
		}
		out = strconv.AppendUint(out, uint64(p[i]), 16)
	}
	return string(append(out, ']'))
}
