package denylist

import (
	"net/netip"
	"strings"
)

// privateV4 are the IPv4 ranges that lead into the relay's own machine or
// network rather than to the public internet.
var privateV4 = []struct {
	prefix netip.Prefix
	kind   string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "an unspecified"},
	{netip.MustParsePrefix("10.0.0.0/8"), "a private"},
	{netip.MustParsePrefix("100.64.0.0/10"), "a shared (CGNAT)"},
	{netip.MustParsePrefix("127.0.0.0/8"), "a loopback"},
	{netip.MustParsePrefix("169.254.0.0/16"), "a link-local"},
	{netip.MustParsePrefix("172.16.0.0/12"), "a private"},
	{netip.MustParsePrefix("192.168.0.0/16"), "a private"},
	{netip.MustParsePrefix("224.0.0.0/4"), "a multicast"},
	{netip.MustParsePrefix("240.0.0.0/4"), "a reserved or broadcast"},
}

var privateV6 = []struct {
	prefix netip.Prefix
	kind   string
}{
	{netip.MustParsePrefix("::/128"), "an unspecified"},
	{netip.MustParsePrefix("::1/128"), "a loopback"},
	// IPv4-compatible addresses are deprecated; no public host uses one.
	{netip.MustParsePrefix("::/96"), "an IPv4-compatible"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "a local-use NAT64"},
	{netip.MustParsePrefix("fc00::/7"), "a unique local"},
	{netip.MustParsePrefix("fe80::/10"), "a link-local"},
	{netip.MustParsePrefix("fec0::/10"), "a site-local"},
	{netip.MustParsePrefix("ff00::/8"), "a multicast"},
}

var (
	nat64   = netip.MustParsePrefix("64:ff9b::/96")
	sixToV4 = netip.MustParsePrefix("2002::/16")
)

// privateKind says what kind of non-public address a is, or "" for a
// public one. IPv6 forms that carry an IPv4 address (mapped, NAT64, 6to4)
// are judged by that address, since that is where the packets go.
func privateKind(a netip.Addr) string {
	a = a.Unmap()
	if a.Is6() {
		b := a.As16()
		switch {
		case nat64.Contains(a):
			a = netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
		case sixToV4.Contains(a):
			a = netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]})
		default:
			for _, r := range privateV6 {
				if r.prefix.Contains(a) {
					return r.kind
				}
			}
			return ""
		}
	}
	for _, r := range privateV4 {
		if r.prefix.Contains(a) {
			return r.kind
		}
	}
	return ""
}

// localName reports the names Chrome resolves to loopback itself, without
// asking DNS.
func localName(host string) bool {
	switch host {
	case "localhost", "localhost.localdomain", "localhost6", "localhost6.localdomain6":
		return true
	}
	return strings.HasSuffix(host, ".localhost")
}
