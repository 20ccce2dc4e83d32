package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cdprelay/cdprelay/internal/ingress"
	"github.com/cdprelay/cdprelay/internal/testenv"
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
	for in, want := range map[string]string{"0.0.0.0:9222": "127.0.0.1:9222", "[::]:80": "127.0.0.1:80", "192.0.2.1:1": "192.0.2.1:1", "[::1]:2": "[::1]:2"} {
		if got := localAddr(fakeAddr(in)); got != want {
			t.Errorf("localAddr(%s) = %s, want %s", in, got, want)
		}
	}
}

type fakeAddr string

func (a fakeAddr) Network() string { return "tcp" }
func (a fakeAddr) String() string  { return string(a) }

func TestHashTokenCommand(t *testing.T) {
	tests := []struct {
		in       string
		code     int
		out, err string
	}{
		{"cdpr_0123456789abcdefghijklmnopqrstuvwxyz\n", 0, ingress.HashToken("cdpr_0123456789abcdefghijklmnopqrstuvwxyz") + "\n", ""},
		{"cdpr_0123456789abcdefghijklmnopqrstuvwxyz\r\n", 0, ingress.HashToken("cdpr_0123456789abcdefghijklmnopqrstuvwxyz") + "\n", ""},
		{"short", 0, ingress.HashToken("short") + "\n", "short"},
		{"", 1, "", "empty"},
		{"\n", 1, "", "empty"},
		{"two words\n", 1, "", "escaping"},
		{"two\nlines\n", 1, "", "escaping"},
	}
	for _, tt := range tests {
		var out, errb bytes.Buffer
		code := hashToken(nil, strings.NewReader(tt.in), &out, &errb)
		if code != tt.code || out.String() != tt.out || !strings.Contains(errb.String(), tt.err) {
			t.Errorf("hash-token < %q = %d %q %q", tt.in, code, out.String(), errb.String())
		}
	}
	if code := hashToken([]string{"secret"}, strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{}); code != 2 {
		t.Errorf("a token as an argument (it would land in shell history): %d", code)
	}
}

func TestGenTokenCommand(t *testing.T) {
	var out, errb bytes.Buffer
	if code := genToken([]string{"-name", "ci", "-scopes", "cdp,viewer-interactive"}, &out, &errb); code != 0 {
		t.Fatalf("gen-token: %d %s", code, errb.String())
	}
	lines := strings.SplitN(out.String(), "\n", 2)
	tok, ok := strings.CutPrefix(lines[0], "token: ")
	if !ok || ingress.CheckTokenText(tok) != "" {
		t.Fatalf("first line %q", lines[0])
	}
	// The entry it prints, pasted under tokens:, grants the token.
	p := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(p, []byte("tokens:\n"+lines[1]), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := loadConfig(p, policyFlags{})
	if err != nil {
		t.Fatalf("the printed entry: %v\n%s", err, out.String())
	}
	if len(cfg.Tokens) != 1 || cfg.Tokens[0].Name != "ci" || cfg.Tokens[0].SHA256 != ingress.HashToken(tok) || strings.Join(cfg.Tokens[0].Scopes, ",") != "cdp,viewer-interactive" {
		t.Errorf("entry %+v", cfg.Tokens)
	}
	if code := genToken([]string{"-scopes", "root"}, &bytes.Buffer{}, &errb); code != 2 || !strings.Contains(errb.String(), "unknown scope") {
		t.Errorf("bad scope: %d %s", code, errb.String())
	}
}

// served runs newFront's server on a loopback port, as runServe does.
type served struct {
	fr   *front
	srv  *relay.Server
	addr string
}

func serveFront(t *testing.T, f serveFlags, cfg *fileConfig) *served {
	t.Helper()
	srv, err := relay.New(relay.Config{})
	if err != nil {
		t.Fatal(err)
	}
	fr, err := newFront(f, cfg, srv, prometheus.NewRegistry(), nil)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := fr.server()
	go fr.serve(hs, ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Close(ctx)
		hs.Close()
	})
	return &served{fr: fr, srv: srv, addr: ln.Addr().String()}
}

func writeConfig(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestFrontTLSAndReload(t *testing.T) {
	dir := t.TempDir()
	cert1, err := testenv.NewCert()
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
	f := serveFlags{addr: "0.0.0.0:0", config: cfgPath, launch: true}
	cfg, err := loadConfig(cfgPath, policyFlags{})
	if err != nil {
		t.Fatal(err)
	}
	s := serveFront(t, f, cfg)

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
	if code != 200 || wsURL != "wss://"+s.addr+"/devtools/browser/"+s.srv.Default().GUID() {
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
	if code, _, _ := get(trust1, ext, s.fr.launchToken); code != 404 {
		t.Errorf("launch token on an unknown guid: %d", code)
	}
	if code, _, _ := get(trust1, "/json/version", s.fr.launchToken); code != 403 {
		t.Errorf("launch token on discovery: %d", code)
	}
	if args := s.fr.browserArgs(); len(args) != 1 || !strings.HasPrefix(args[0], "--ignore-certificate-errors-spki-list=") {
		t.Errorf("browserArgs = %q", args)
	}

	// A reload with a new token and a new certificate.
	cert2, err := testenv.NewCert()
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := cert2.WriteFiles(dir); err != nil {
		t.Fatal(err)
	}
	writeConfig(t, cfgPath, "tokens:\n  - {name: b, sha256: "+ingress.HashToken(tokB)+", scopes: [cdp]}\ntls:\n  cert: "+certFile+"\n  key: "+keyFile+"\n")
	cfg, err = loadConfig(cfgPath, policyFlags{})
	if err != nil {
		t.Fatal(err)
	}
	apply, err := s.fr.prepareReload(f, cfg)
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
		cfg, err := loadConfig(cfgPath, policyFlags{})
		if err == nil {
			_, err = s.fr.prepareReload(f, cfg)
		}
		if err == nil {
			t.Errorf("%s: reload accepted", name)
		}
	}
	// With --insecure-no-tls the TLS check passes, but TLS still cannot be
	// turned off without a restart.
	f.insecureNoTLS = true
	writeConfig(t, cfgPath, "tokens:\n  - {name: b, sha256: "+ingress.HashToken(tokB)+", scopes: [cdp]}\n")
	cfg, _ = loadConfig(cfgPath, policyFlags{})
	if _, err := s.fr.prepareReload(f, cfg); err == nil || !strings.Contains(err.Error(), "restart") {
		t.Errorf("TLS off by reload: %v", err)
	}
	if code, _, _ := get(trust2, "/json/version", tokB); code != 200 {
		t.Errorf("after refused reloads: %d", code)
	}
}

// TestLaunchTokenKeepsZeroConfig: the token minted for a launched browser
// must not make a relay without configured tokens ask clients for one.
func TestLaunchTokenKeepsZeroConfig(t *testing.T) {
	s := serveFront(t, serveFlags{addr: "127.0.0.1:0", launch: true}, &fileConfig{})
	if s.fr.launchToken == "" {
		t.Fatal("no launch token")
	}
	if s.fr.guard.TokensConfigured() {
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
	if got := withToken("ws://h/extension/g", "t"); got != "ws://h/extension/g?token=t" {
		t.Errorf("withToken = %s", got)
	}
	if got := withToken("ws://h/x?a=1", "t"); got != "ws://h/x?a=1&token=t" {
		t.Errorf("withToken = %s", got)
	}
}

func TestNewFrontRefuses(t *testing.T) {
	tokens := &fileConfig{}
	tokens.Tokens = append(tokens.Tokens, ingress.Token{Name: "a", SHA256: ingress.HashToken("x"), Scopes: []string{"cdp"}})
	for name, tc := range map[string]struct {
		f   serveFlags
		cfg *fileConfig
	}{
		"open to the network": {serveFlags{addr: "0.0.0.0:9222"}, &fileConfig{}},
		"tokens without TLS":  {serveFlags{addr: "0.0.0.0:9222"}, tokens},
		"missing certificate": {serveFlags{addr: "127.0.0.1:0", tlsCert: "/nonexistent.pem", tlsKey: "/nonexistent.key"}, &fileConfig{}},
		"certificate, no key": {serveFlags{addr: "127.0.0.1:0", tlsCert: "/nonexistent.pem"}, &fileConfig{}},
	} {
		if _, err := newFront(tc.f, tc.cfg, http.NotFoundHandler(), nil, nil); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
