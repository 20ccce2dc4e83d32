package app

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/internal/chromium"
	"github.com/cdprelay/cdprelay/internal/ingress"
	"github.com/cdprelay/cdprelay/internal/testcert"
	"github.com/cdprelay/cdprelay/relay"
)

func TestCheckExposure(t *testing.T) {
	tests := []struct {
		addr     string
		tokens   int
		tls      bool
		insecure bool
		want     string // part of the error; "" for none
	}{
		{"127.0.0.1:9222", 0, false, false, ""},
		{"[::1]:9222", 0, false, false, ""},
		{"localhost:9222", 0, false, false, ""},
		{"127.0.0.2:9222", 0, false, false, ""},
		{"0.0.0.0:9222", 0, true, false, "configure tokens"},
		{":9222", 1, false, false, "serve TLS"},
		{"192.0.2.1:9222", 1, false, false, "serve TLS"},
		{"192.0.2.1:9222", 1, true, false, ""},
		{"192.0.2.1:9222", 1, false, true, ""},
		{"192.0.2.1:9222", 0, false, true, "configure tokens"},
		{"relay.example.com:443", 2, true, false, ""},
		{"[::]:9222", 0, false, false, "configure tokens"},
		{"nonsense", 0, false, false, "missing port"},
	}
	for _, tt := range tests {
		err := checkExposure(tt.addr, tt.tokens, tt.tls, tt.insecure)
		if (tt.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tt.want) {
			t.Errorf("checkExposure(%s, tokens %d, tls %v, insecure %v) = %v, want %q", tt.addr, tt.tokens, tt.tls, tt.insecure, err, tt.want)
		}
	}
}

func TestBindHosts(t *testing.T) {
	tests := map[string][]string{
		"127.0.0.1:9222":        nil,
		"localhost:9222":        nil,
		"0.0.0.0:9222":          nil,
		"[::]:9222":             nil,
		":9222":                 nil,
		"192.0.2.1:9222":        {"192.0.2.1"},
		"[2001:db8::1]:9222":    {"2001:db8::1"},
		"relay.example.com:443": {"relay.example.com"},
	}
	for addr, want := range tests {
		got := bindHosts(addr)
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("bindHosts(%s) = %q, want %q", addr, got, want)
		}
	}
}

// served is an App on a loopback port, served as cdprelay serve does.
type served struct {
	app  *App
	addr string
}

func serve(t *testing.T, cfg Config) *served {
	t.Helper()
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: a, TLSConfig: a.TLSConfig(), ReadHeaderTimeout: 10 * time.Second}
	// A client that no longer trusts the certificate makes the server log.
	hs.ErrorLog = log.New(io.Discard, "", 0)
	hs.Protocols = new(http.Protocols)
	hs.Protocols.SetHTTP1(true)
	if hs.TLSConfig != nil {
		go hs.ServeTLS(ln, "", "")
	} else {
		go hs.Serve(ln)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := a.Close(ctx); err != nil {
			t.Errorf("close: %v", err)
		}
		hs.Close()
	})
	return &served{app: a, addr: ln.Addr().String()}
}

func writeConfig(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

func readConfig(t *testing.T, path string) File {
	t.Helper()
	f, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return *f
}

func TestTLSAndReload(t *testing.T) {
	dir := t.TempDir()
	cert1, err := testcert.NewCert()
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile, err := cert1.WriteFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "cdprelay.yaml")
	tokA, tokB := ingress.GenerateToken(), ingress.GenerateToken()
	writeConfig(t, cfgPath, "tokens:\n  - {name: a, sha256: "+ingress.HashToken(tokA)+", scopes: [cdp]}\ntls:\n  cert: "+certFile+"\n  key: "+keyFile+"\n")
	cfg := Config{Addr: "0.0.0.0:0", Launch: true, File: readConfig(t, cfgPath)}
	s := serve(t, cfg)

	get := func(pool *tls.Config, path, token string) (int, string, *http.Response) {
		t.Helper()
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: pool}, Timeout: 5 * time.Second}
		req, _ := http.NewRequest("GET", "https://"+s.addr+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := c.Do(req)
		if err != nil {
			return 0, err.Error(), nil
		}
		defer resp.Body.Close()
		var v struct {
			URL string `json:"webSocketDebuggerUrl"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&v)
		return resp.StatusCode, v.URL, resp
	}
	trust1 := &tls.Config{RootCAs: cert1.Pool}
	code, wsURL, resp := get(trust1, "/json/version", tokA)
	if code != 200 || wsURL != "wss://"+s.addr+"/devtools/browser/"+s.app.Relay().Default().GUID() {
		t.Fatalf("GET /json/version over TLS: %d %q", code, wsURL)
	}
	if resp.Proto != "HTTP/1.1" || resp.TLS.NegotiatedProtocol == "h2" {
		t.Errorf("protocol %s, ALPN %q: the relay serves HTTP/1.1 only", resp.Proto, resp.TLS.NegotiatedProtocol)
	}
	if code, _, _ := get(trust1, "/json/version", ""); code != 401 {
		t.Errorf("no token: %d", code)
	}
	// The launched browser's token pairs an extension, and only that.
	ext := "/extension/" + relay.NewGUID()
	if code, _, _ := get(trust1, ext, s.app.LaunchToken()); code != 404 {
		t.Errorf("launch token on an unknown guid: %d", code)
	}
	if code, _, _ := get(trust1, "/json/version", s.app.LaunchToken()); code != 403 {
		t.Errorf("launch token on discovery: %d", code)
	}
	if c := s.app.Certificate(); c == nil || !strings.HasPrefix(chromium.TrustCertificateFlag(c), "--ignore-certificate-errors-spki-list=") {
		t.Errorf("Certificate = %v", c)
	}
	if page, socket := s.app.Schemes(); page != "https" || socket != "wss" {
		t.Errorf("Schemes = %s, %s", page, socket)
	}

	// A reload with a new token and a new certificate.
	cert2, err := testcert.NewCert()
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := cert2.WriteFiles(dir); err != nil {
		t.Fatal(err)
	}
	writeConfig(t, cfgPath, "tokens:\n  - {name: b, sha256: "+ingress.HashToken(tokB)+", scopes: [cdp]}\ntls:\n  cert: "+certFile+"\n  key: "+keyFile+"\n")
	cfg.File = readConfig(t, cfgPath)
	apply, err := s.app.prepareReload(&cfg)
	if err != nil {
		t.Fatal(err)
	}
	if code, _, _ := get(trust1, "/json/version", tokA); code != 200 {
		t.Errorf("before apply: %d", code)
	}
	apply()
	trust2 := &tls.Config{RootCAs: cert2.Pool}
	if code, _, _ := get(trust2, "/json/version", tokB); code != 200 {
		t.Errorf("new certificate, new token: %d", code)
	}
	if code, _, _ := get(trust2, "/json/version", tokA); code != 401 {
		t.Errorf("the removed token: %d", code)
	}
	if code, msg, _ := get(trust1, "/json/version", tokB); code != 0 || !strings.Contains(msg, "certificate") {
		t.Errorf("the old certificate is still served: %d %s", code, msg)
	}

	// Reloads that would expose the relay, or change what needs a restart.
	for name, body := range map[string]string{
		"no tokens off loopback": "tls:\n  cert: " + certFile + "\n  key: " + keyFile + "\n",
		"TLS off":                "tokens:\n  - {name: b, sha256: " + ingress.HashToken(tokB) + ", scopes: [cdp]}\n",
		"unreadable key":         "tokens:\n  - {name: b, sha256: " + ingress.HashToken(tokB) + ", scopes: [cdp]}\ntls:\n  cert: " + certFile + "\n  key: " + certFile + "\n",
	} {
		writeConfig(t, cfgPath, body)
		cfg.File = readConfig(t, cfgPath)
		if err := s.app.Reload(cfg); err == nil {
			t.Errorf("%s: reload accepted", name)
		}
	}
	// The listen address and --insecure-no-tls are New's: a reload cannot
	// turn TLS off by saying a proxy does it.
	writeConfig(t, cfgPath, "tokens:\n  - {name: b, sha256: "+ingress.HashToken(tokB)+", scopes: [cdp]}\n")
	cfg.File = readConfig(t, cfgPath)
	cfg.InsecureNoTLS = true
	if err := s.app.Reload(cfg); err == nil || !strings.Contains(err.Error(), "restart") {
		t.Errorf("TLS off by reload: %v", err)
	}
	if code, _, _ := get(trust2, "/json/version", tokB); code != 200 {
		t.Errorf("after refused reloads: %d", code)
	}
}

// TestLaunchTokenKeepsZeroConfig: the token minted for a launched browser
// must not make a relay without configured tokens ask clients for one.
func TestLaunchTokenKeepsZeroConfig(t *testing.T) {
	s := serve(t, Config{Addr: "127.0.0.1:0", Launch: true})
	if s.app.LaunchToken() == "" {
		t.Fatal("no launch token")
	}
	if s.app.Guard().TokensConfigured() {
		t.Error("the launch token alone turned tokens on")
	}
	resp, err := http.Get("http://" + s.addr + "/json/version")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("zero-config discovery: %d", resp.StatusCode)
	}
}

func TestNewRefuses(t *testing.T) {
	tokens := File{Tokens: []ingress.Token{{Name: "a", SHA256: ingress.HashToken("x"), Scopes: []string{"cdp"}}}}
	for name, cfg := range map[string]Config{
		"open to the network": {Addr: "0.0.0.0:9222"},
		"tokens without TLS":  {Addr: "0.0.0.0:9222", File: tokens},
		"missing certificate": {Addr: "127.0.0.1:0", TLSCert: "/nonexistent.pem", TLSKey: "/nonexistent.key"},
		"certificate, no key": {Addr: "127.0.0.1:0", TLSCert: "/nonexistent.pem"},
		"no address":          {},
		"a wired relay field": {Addr: "127.0.0.1:0", Relay: relay.Config{CheckHost: func(string) bool { return true }}},
		"an unknown profile":  {Addr: "127.0.0.1:0", File: File{DefaultProfile: "nope"}},
		"a bad audit ring":    {Addr: "127.0.0.1:0", File: File{Audit: AuditConfig{RingSize: -1}}},
		"an unusable relay":   {Addr: "127.0.0.1:0", Relay: relay.Config{MaxMessageBytes: 10}},
	} {
		if a, err := New(cfg); err == nil {
			t.Errorf("%s: accepted", name)
			a.Close(context.Background())
		}
	}
}
