package main

import (
	"crypto/tls"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/cdprelay/cdprelay/internal/app"
	"github.com/cdprelay/cdprelay/internal/chromium"
)

const readHeaderTimeout = 10 * time.Second

// httpServer serves h over HTTP/1.1 only: every long-lived connection
// here is a WebSocket, which gorilla/websocket upgrades from HTTP/1.1,
// and a browser that negotiated HTTP/2 for the page would otherwise try
// to open its sockets over it.
func httpServer(h http.Handler, tlsCfg *tls.Config) *http.Server {
	hs := &http.Server{Handler: h, ReadHeaderTimeout: readHeaderTimeout, TLSConfig: tlsCfg}
	hs.Protocols = new(http.Protocols)
	hs.Protocols.SetHTTP1(true)
	return hs
}

// serveOn serves hs on ln, over TLS when hs has a TLS config.
func serveOn(hs *http.Server, ln net.Listener) error {
	if hs.TLSConfig != nil {
		return hs.ServeTLS(ln, "", "")
	}
	return hs.Serve(ln)
}

// withToken adds ?token= to a URL.
func withToken(u, token string) string {
	sep := "?"
	if strings.Contains(u, "?") {
		sep = "&"
	}
	return u + sep + "token=" + token
}

// localAddr is how this machine reaches the listener: an unspecified
// address (0.0.0.0, ::) is reached on loopback.
func localAddr(a net.Addr) string {
	ap, err := netip.ParseAddrPort(a.String())
	if err != nil || !ap.Addr().IsUnspecified() {
		return a.String()
	}
	return netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), ap.Port()).String()
}

// browserArgs make the launched browser trust the relay's certificate,
// and that certificate only: an operator's certificate rarely names
// 127.0.0.1, and may be self-signed.
func browserArgs(a *app.App) []string {
	if c := a.Certificate(); c != nil {
		return []string{chromium.TrustCertificateFlag(c)}
	}
	return nil
}

// tokenHint is what a printed URL or instruction needs when tokens are
// configured: the relay knows their hashes only, so it can name the scope
// but not the token.
func tokenHint(tokens bool, prefix, scope string) string {
	if !tokens {
		return ""
	}
	return prefix + "<a token with scope " + scope + ">"
}
