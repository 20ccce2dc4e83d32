package e2e

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/cdprelay/cdprelay/extension"
	"github.com/cdprelay/cdprelay/internal/ingress"
	"github.com/cdprelay/cdprelay/internal/testenv"
)

// TestIngressOverTLS runs a relay of its own, over TLS with a self-signed
// certificate and tokens, with a browser of its own whose extension pairs
// over wss:// with an extension token. The shared browser is idle
// meanwhile (the tests of this package run one at a time), so no more
// than two run at once.
func TestIngressOverTLS(t *testing.T) {
	testenv.SkipOrFail(t, true)
	cert, err := testenv.NewCert()
	if err != nil {
		t.Fatal(err)
	}
	certFile, _, err := cert.WriteFiles(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tok := map[string]string{}
	var cfg ingress.Config
	for _, scope := range []string{"cdp", "viewer", "admin", "extension"} {
		tok[scope] = ingress.GenerateToken()
		cfg.Tokens = append(cfg.Tokens, ingress.Token{Name: scope, SHA256: ingress.HashToken(tok[scope]), Scopes: []string{scope}})
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	senv, err := testenv.Start(ctx, testenv.Options{
		TLS:            &cert.TLS,
		ExtensionToken: tok["extension"],
		Wrap: func(h http.Handler) http.Handler {
			g, err := ingress.New(h, cfg, ingress.Options{})
			if err != nil {
				panic(err) // validated above
			}
			return g
		},
	})
	if err != nil {
		t.Fatalf("relay over TLS with tokens, and its browser: %v", err)
	}
	defer senv.Close()
	defer func() {
		if t.Failed() && senv.LogPath != "" {
			b, _ := os.ReadFile(senv.LogPath)
			t.Logf("relay and browser log (%s):\n%s", senv.LogPath, tail(string(b), 80))
		}
	}()
	// testenv.Start returned: the extension is connected, over wss:// (the
	// relay speaks nothing else) with its token.
	guid := senv.Relay.Default().GUID()
	base := senv.HTTPEndpoint()
	wsBase := "wss://" + senv.Addr

	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: cert.Pool}}}
	dialer := &websocket.Dialer{TLSClientConfig: &tls.Config{RootCAs: cert.Pool}, HandshakeTimeout: 10 * time.Second}
	get := func(path, host, token string) int {
		t.Helper()
		req, _ := http.NewRequest("GET", base+path, nil)
		if host != "" {
			req.Host = host
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	dial := func(path, origin, token string) int {
		t.Helper()
		h := http.Header{}
		if origin != "" {
			h.Set("Origin", origin)
		}
		if token != "" {
			h.Set("Authorization", "Bearer "+token)
		}
		conn, resp, err := dialer.DialContext(ctx, wsBase+path, h)
		if err == nil {
			conn.Close()
			return http.StatusSwitchingProtocols
		}
		if resp == nil {
			t.Fatalf("dial %s: %v", path, err)
		}
		return resp.StatusCode
	}

	cdpWS := "/devtools/browser/" + guid
	_, relayPort, _ := net.SplitHostPort(senv.Addr)
	otherExtension := "chrome-extension://" + strings.Repeat("b", 32)
	tests := []struct {
		name string
		got  func() int
		want int
	}{
		{"wrong Host", func() int { return get("/json/version", "evil.example", tok["cdp"]) }, 403},
		{"wrong Host (rebinding name on our port)", func() int { return get("/json/version", "127.0.0.1.evil.example:"+relayPort, tok["cdp"]) }, 403},
		{"wrong Origin on the CDP socket", func() int { return dial(cdpWS, "https://evil.example", tok["cdp"]) }, 403},
		{"another extension's Origin on the extension socket", func() int { return dial("/extension/"+guid, otherExtension, tok["extension"]) }, 403},
		{"missing token, discovery", func() int { return get("/json/version", "", "") }, 401},
		{"missing token, CDP socket", func() int { return dial(cdpWS, "", "") }, 404},
		{"wrong token, CDP socket", func() int { return dial(cdpWS, "", "cdpr_not-a-token") }, 404},
		{"wrong scope (admin) on discovery", func() int { return get("/json/version", "", tok["admin"]) }, 403},
		{"viewer token on discovery", func() int { return get("/json/version", "", tok["viewer"]) }, 403},
		{"viewer token on the CDP socket", func() int { return dial(cdpWS, "", tok["viewer"]) }, 404},
		{"viewer token on /cdp/<guid>", func() int { return dial("/cdp/"+guid, "", tok["viewer"]) }, 404},
		{"extension token on the CDP socket", func() int { return dial(cdpWS, "", tok["extension"]) }, 404},
		{"cdp token on the extension socket", func() int {
			return dial("/extension/"+guid, "chrome-extension://"+extension.ID, tok["cdp"])
		}, 404},
		{"missing token, admin", func() int { return get("/v1/instances", "", "") }, 401},
		{"cdp token, admin", func() int { return get("/v1/instances", "", tok["cdp"]) }, 403},
		{"right token, discovery", func() int { return get("/json/version", "", tok["cdp"]) }, 200},
	}
	for _, tt := range tests {
		if got := tt.got(); got != tt.want {
			t.Errorf("%s: %d, want %d", tt.name, got, tt.want)
		}
	}

	// /json/version under TLS names a wss:// socket.
	req, _ := http.NewRequest("GET", base+"/json/version", nil)
	req.Header.Set("Authorization", "Bearer "+tok["cdp"])
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		URL string `json:"webSocketDebuggerUrl"`
	}
	err = json.NewDecoder(resp.Body).Decode(&v)
	resp.Body.Close()
	if err != nil || v.URL != wsBase+cdpWS {
		t.Errorf("webSocketDebuggerUrl %q (%v), want %s", v.URL, err, wsBase+cdpWS)
	}

	nctx, ncancel := context.WithTimeout(ctx, 60*time.Second)
	defer ncancel()
	out, err := testenv.Node(nctx, "security.mjs", []string{"NODE_EXTRA_CA_CERTS=" + certFile},
		base, tok["cdp"], tok["viewer"], senv.Pages.Main)
	t.Logf("security.mjs:\n%s", out)
	if err != nil {
		t.Fatalf("security.mjs: %v", err)
	}
}
