package main

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cdprelay/cdprelay/internal/chromium"
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

// tlsFiles are the certificate and key in force: the flags, else the
// config file's tls section.
func tlsFiles(f serveFlags, cfg *fileConfig) (cert, key string, err error) {
	cert, key = cfg.TLS.Cert, cfg.TLS.Key
	if f.tlsCert != "" || f.tlsKey != "" {
		cert, key = f.tlsCert, f.tlsKey
	}
	if (cert == "") != (key == "") {
		return "", "", errors.New("TLS needs both a certificate and a key (--tls-cert and --tls-key, or tls.cert and tls.key)")
	}
	return cert, key, nil
}

// certStore holds the certificate served, so that a SIGHUP can replace it
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

// launchTokenName names the token the relay mints for the browser it
// launches, so that its extension pairs when tokens are configured.
const launchTokenName = "launched-browser"

// withToken adds ?token= to a URL.
func withToken(u, token string) string {
	sep := "?"
	if strings.Contains(u, "?") {
		sep = "&"
	}
	return u + sep + "token=" + token
}

// explainIngress says who may reach the relay under cfg.
func (cfg *fileConfig) explainIngress() string {
	var b strings.Builder
	if len(cfg.Tokens) == 0 {
		b.WriteString("ingress: no tokens; loopback peers may do everything, others may only load the live-view page (a non-loopback --addr is refused)\n")
	} else {
		fmt.Fprintf(&b, "ingress: %d token(s), required on every request but the live-view page, loopback included\n", len(cfg.Tokens))
		for _, t := range cfg.Tokens {
			set, _ := ingress.ParseScopes(t.Scopes)
			fmt.Fprintf(&b, "  %s: %s\n", t.Name, set)
		}
	}
	b.WriteString("  Host: localhost, 127.0.0.0/8, ::1")
	for _, h := range cfg.Hosts {
		b.WriteString(", " + h)
	}
	b.WriteString("\n")
	if len(cfg.Origins.CDP) > 0 {
		fmt.Fprintf(&b, "  CDP endpoints also accept Origin %s\n", strings.Join(cfg.Origins.CDP, ", "))
	}
	ids := cfg.Origins.ExtensionIDs
	if ids == nil {
		ids = ingress.DefaultExtensionIDs
	}
	fmt.Fprintf(&b, "  extensions that may pair: %s\n", strings.Join(ids, ", "))
	if cfg.TLS.Cert != "" {
		fmt.Fprintf(&b, "  TLS: %s, %s (not opened here; serve opens them)\n", cfg.TLS.Cert, cfg.TLS.Key)
	}
	return b.String()
}

const readHeaderTimeout = 10 * time.Second

// front is what stands before the relay: the ingress guard, and the
// certificate when serving TLS.
type front struct {
	guard *ingress.Guard // static
	certs *certStore     // static; nil: plain HTTP
	// extra is what the process adds to every config it loads. Static.
	extra ingressExtra
	// launchToken is the launched browser's extension token; "" without
	// --launch. Static.
	launchToken string
}

// ingressExtra is what the process adds to the file's ingress rules.
type ingressExtra struct {
	hosts  []string
	tokens []ingress.Token
}

func newFront(f serveFlags, cfg *fileConfig, next http.Handler, reg prometheus.Registerer, log *slog.Logger) (*front, error) {
	certFile, keyFile, err := tlsFiles(f, cfg)
	if err != nil {
		return nil, err
	}
	if err := checkExposure(f.addr, len(cfg.Tokens), certFile != "", f.insecureNoTLS); err != nil {
		return nil, err
	}
	fr := &front{extra: ingressExtra{hosts: bindHosts(f.addr)}}
	if certFile != "" {
		c, err := loadCertificate(certFile, keyFile)
		if err != nil {
			return nil, err
		}
		fr.certs = &certStore{}
		fr.certs.cur.Store(c)
	}
	if f.launch {
		// Minted for every launch, tokens configured or not: a reload may
		// add tokens while the browser runs, and its extension must still
		// reconnect.
		fr.launchToken = ingress.GenerateToken()
		fr.extra.tokens = []ingress.Token{{Name: launchTokenName, SHA256: ingress.HashToken(fr.launchToken), Scopes: []string{ingress.ScopeExtension.String()}}}
	}
	fr.guard, err = ingress.New(next, cfg.ingress(fr.extra), ingress.Options{Logger: log, Metrics: ingress.NewMetrics(reg)})
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return fr, nil
}

// bindHosts are the names the relay answers to because --addr names
// them: a specific address or name the operator chose to listen on.
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

// localAddr is how this machine reaches the listener: an unspecified
// address (0.0.0.0, ::) is reached on loopback.
func localAddr(a net.Addr) string {
	ap, err := netip.ParseAddrPort(a.String())
	if err != nil || !ap.Addr().IsUnspecified() {
		return a.String()
	}
	return netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), ap.Port()).String()
}

func (fr *front) server() *http.Server {
	var cfg *tls.Config
	if fr.certs != nil {
		cfg = fr.certs.tlsConfig()
	}
	return httpServer(fr.guard, cfg)
}

func (fr *front) serve(hs *http.Server, ln net.Listener) error {
	if fr.certs != nil {
		return hs.ServeTLS(ln, "", "")
	}
	return hs.Serve(ln)
}

// schemes are the URL schemes of the relay's pages and sockets.
func (fr *front) schemes() (page, socket string) {
	if fr.certs != nil {
		return "https", "wss"
	}
	return "http", "ws"
}

// browserArgs make the launched browser trust the relay's certificate,
// and that certificate only: an operator's certificate rarely names
// 127.0.0.1, and may be self-signed.
func (fr *front) browserArgs() []string {
	if fr.certs == nil {
		return nil
	}
	c := fr.certs.cur.Load()
	if c.Leaf == nil {
		return nil
	}
	return []string{chromium.TrustCertificateFlag(c.Leaf)}
}

// prepareReload checks what a reload would change in front of the relay
// and returns the change, to be applied only once the whole config is
// known to be good.
func (fr *front) prepareReload(f serveFlags, cfg *fileConfig) (apply func(), err error) {
	certFile, keyFile, err := tlsFiles(f, cfg)
	if err != nil {
		return nil, err
	}
	if (certFile != "") != (fr.certs != nil) {
		return nil, errors.New("turning TLS on or off needs a restart")
	}
	if err := checkExposure(f.addr, len(cfg.Tokens), fr.certs != nil, f.insecureNoTLS); err != nil {
		return nil, err
	}
	icfg := cfg.ingress(fr.extra)
	if err := icfg.Validate(); err != nil {
		return nil, err
	}
	var cert *tls.Certificate
	if certFile != "" {
		if cert, err = loadCertificate(certFile, keyFile); err != nil {
			return nil, err
		}
	}
	return func() {
		_ = fr.guard.Reload(icfg) // validated above
		if cert != nil {
			fr.certs.cur.Store(cert)
		}
	}, nil
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
