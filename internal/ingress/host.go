package ingress

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// hostList is the Host allow-list: this machine's loopback names, and the
// names the operator configured. A web page that gets its own name to
// resolve to the relay (DNS rebinding) still sends its own name as Host,
// so it is refused here whatever the address it reached.
type hostList struct {
	names map[string]bool // normalised; immutable
}

func compileHosts(hosts []string) (hostList, error) {
	l := hostList{names: make(map[string]bool, len(hosts))}
	for i, h := range hosts {
		n, err := hostEntry(h)
		if err != nil {
			return hostList{}, fmt.Errorf("hosts[%d] %q: %w", i, h, err)
		}
		l.names[n] = true
	}
	return l, nil
}

// hostEntry validates and normalises a configured host: a DNS name or an
// IP address, without scheme, port, path or wildcard.
func hostEntry(h string) (string, error) {
	if ip, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")); err == nil {
		return ip.Unmap().String(), nil
	}
	n := strings.TrimSuffix(strings.ToLower(h), ".")
	if n == "" || len(n) > 253 {
		return "", fmt.Errorf("not a DNS name or an IP address")
	}
	for label := range strings.SplitSeq(n, ".") {
		if label == "" || len(label) > 63 {
			return "", fmt.Errorf("not a DNS name or an IP address")
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
				return "", fmt.Errorf("a host is a DNS name (IDNs in their xn-- form) or an IP address, without scheme, port, path or wildcard")
			}
		}
	}
	return n, nil
}

// normaliseHost turns a Host header (or a configured host) into the form
// compared: no port, no brackets, lowercase, no trailing dot; an IP
// address in its canonical form.
func normaliseHost(hostport string) string {
	h := hostport
	if host, _, err := net.SplitHostPort(hostport); err == nil {
		h = host
	}
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	h = strings.TrimSuffix(strings.ToLower(h), ".")
	if ip, err := netip.ParseAddr(h); err == nil {
		return ip.Unmap().String()
	}
	return h
}

// allowed reports whether a request's Host names this relay. The port is
// not compared: a rebinding page reaches the relay's own port anyway.
func (l hostList) allowed(hostport string) bool {
	if hostport == "" {
		return true // HTTP/1.0 sends none; no browser does that
	}
	h := normaliseHost(hostport)
	if h == "localhost" || l.names[h] {
		return true
	}
	ip, err := netip.ParseAddr(h)
	// A zone (::1%eth0) is never in a Host a browser sends: refuse it
	// rather than reason about which interface it names.
	return err == nil && ip.Zone() == "" && ip.IsLoopback()
}
