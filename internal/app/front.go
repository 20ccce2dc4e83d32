package app

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"

	"github.com/cdprelay/cdprelay/internal/ingress"
)

// checkExposure refuses the combinations in which a CDP endpoint, full
// control of a logged-in browser, would be open to the network: off
// loopback, a token is required of every request, and tokens and pages
// travel encrypted unless the operator says a proxy in front does that.
func checkExposure(addr string, tokens int, tlsOn, insecureNoTLS bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--addr %q: %w", addr, err)
	}
	if isLoopback(host) {
		return nil
	}
	if tokens == 0 {
		return fmt.Errorf("--addr %s is not a loopback address: configure tokens (see docs/CONFIG.md) so that only their holders reach the shared tabs", addr)
	}
	if !tlsOn && !insecureNoTLS {
		return fmt.Errorf("--addr %s is not a loopback address: serve TLS (--tls-cert, --tls-key), or pass --insecure-no-tls when a TLS-terminating proxy on a trusted network is in front", addr)
	}
	return nil
}

// checkPublicExposure: a public URL off loopback means a front door
// passes other machines' requests on, all of them from its own address;
// without tokens the relay would take every one of them for this
// machine's.
func checkPublicExposure(public *url.URL, tokens int) error {
	if public == nil || isLoopback(public.Hostname()) || tokens > 0 {
		return nil
	}
	return fmt.Errorf("--public-url %s is not a loopback address: configure tokens (see docs/CONFIG.md); behind a front door every request comes from its address, loopback included", public)
}

// stripPrefix is r with prefix (clean, no trailing slash) taken off its
// path, when the path is the prefix or starts with it and a slash; r
// itself otherwise. What is left is judged as any other path: a dot
// segment after the prefix is still refused.
func stripPrefix(r *http.Request, prefix string) *http.Request {
	p := r.URL.Path
	rest, ok := strings.CutPrefix(p, prefix)
	if !ok || rest != "" && rest[0] != '/' {
		return r
	}
	if rest == "" {
		rest = "/"
	}
	r2 := new(http.Request)
	*r2 = *r
	u := *r.URL
	u.Path = rest
	u.RawPath = ""
	if raw, ok := strings.CutPrefix(r.URL.RawPath, prefix); ok && (raw == "" || raw[0] == '/') {
		if raw == "" {
			raw = "/"
		}
		u.RawPath = raw
	}
	r2.URL = &u
	r2.RequestURI = u.RequestURI()
	return r2
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// bindHosts are the names the relay answers to because the listen
// address names them: a specific address or name the operator chose to
// listen on.
func bindHosts(addr string) []string {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || host == "" || isLoopback(host) {
		return nil
	}
	if ip, err := netip.ParseAddr(host); err == nil && ip.IsUnspecified() {
		return nil
	}
	return []string{host}
}

// tlsFiles are the certificate and key in force: Config's, else the
// file's tls section.
func tlsFiles(cfg *Config) (cert, key string, err error) {
	cert, key = cfg.File.TLS.Cert, cfg.File.TLS.Key
	if cfg.TLSCert != "" || cfg.TLSKey != "" {
		cert, key = cfg.TLSCert, cfg.TLSKey
	}
	if (cert == "") != (key == "") {
		return "", "", errors.New("TLS needs both a certificate and a key (--tls-cert and --tls-key, or tls.cert and tls.key)")
	}
	return cert, key, nil
}

// certStore holds the certificate served, so that a reload can replace it
// (a renewed certificate) without a restart.
type certStore struct {
	cur atomic.Pointer[tls.Certificate]
}

func loadCertificate(certFile, keyFile string) (*tls.Certificate, error) {
	c, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("TLS certificate: %w", err)
	}
	return &c, nil
}

func (s *certStore) tlsConfig() *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			return s.cur.Load(), nil
		},
	}
}

// launchTokenName names the token the relay mints for the browser the
// process launches, so that its extension pairs when tokens are
// configured.
const launchTokenName = "launched-browser"

func launchToken() (token string, entry ingress.Token) {
	token = ingress.GenerateToken()
	return token, ingress.Token{Name: launchTokenName, SHA256: ingress.HashToken(token), Scopes: []string{ingress.ScopeExtension.String()}}
}

// TLSConfig is the TLS configuration to serve with, or nil for plain
// HTTP. It serves the certificate in force, which Reload may replace.
func (a *App) TLSConfig() *tls.Config {
	if a.certs == nil {
		return nil
	}
	return a.certs.tlsConfig()
}

// Schemes are the URL schemes of the relay's pages and sockets.
func (a *App) Schemes() (page, socket string) {
	if a.certs != nil {
		return "https", "wss"
	}
	return "http", "ws"
}

// Certificate is the leaf certificate served, or nil for plain HTTP: a
// browser the process launches trusts it, and it only.
func (a *App) Certificate() *x509.Certificate {
	if a.certs == nil {
		return nil
	}
	return a.certs.cur.Load().Leaf
}

// LaunchToken is the token minted for a launched browser's extension (it
// has the extension scope only), or "" without Config.Launch.
func (a *App) LaunchToken() string { return a.launchToken }
