package ingress_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/extension"
	"github.com/cdprelay/cdprelay/internal/cdptest"
	"github.com/cdprelay/cdprelay/internal/fakeext"
	"github.com/cdprelay/cdprelay/internal/ingress"
	"github.com/cdprelay/cdprelay/relay"
)

const (
	cdpToken    = "cdpr_drive-me"
	viewerToken = "cdpr_watch-me"
	extToken    = "cdpr_pair-me"
)

func tokens() ingress.Config {
	return ingress.Config{Tokens: []ingress.Token{
		{Name: "client", SHA256: ingress.HashToken(cdpToken), Scopes: []string{"cdp"}},
		{Name: "watcher", SHA256: ingress.HashToken(viewerToken), Scopes: []string{"viewer"}},
		{Name: "browser", SHA256: ingress.HashToken(extToken), Scopes: []string{"extension"}},
	}}
}

// guarded runs a real relay behind a guard on a loopback socket.
func guarded(t *testing.T, tlsOn bool) (*relay.Server, *httptest.Server) {
	t.Helper()
	srv, err := relay.New(relay.Config{})
	if err != nil {
		t.Fatal(err)
	}
	g, err := ingress.New(srv, tokens(), ingress.Options{})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewUnstartedServer(g)
	// The plain-HTTP probe of TestDiscoveryOverTLS makes the server log.
	hs.Config.ErrorLog = log.New(io.Discard, "", 0)
	if tlsOn {
		hs.StartTLS()
	} else {
		hs.Start()
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Close(ctx); err != nil {
			t.Errorf("relay close: %v", err)
		}
		hs.Close()
	})
	return srv, hs
}

var dateLine = regexp.MustCompile(`(?m)^Date: .*\r\n`)

// rawResponse sends one request on its own connection and returns the
// response's bytes as they came, less the Date line.
func rawResponse(t *testing.T, addr, path string, header map[string]string) []byte {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	var req bytes.Buffer
	req.WriteString("GET " + path + " HTTP/1.1\r\nHost: " + addr + "\r\nConnection: close\r\n")
	keys := make([]string, 0, len(header))
	for k := range header {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		req.WriteString(k + ": " + header[k] + "\r\n")
	}
	req.WriteString("\r\n")
	if _, err := conn.Write(req.Bytes()); err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(bufio.NewReader(conn))
	if err != nil {
		t.Fatal(err)
	}
	return dateLine.ReplaceAll(b, nil)
}

// TestUnknownGUIDLooksLikeWrongToken: on capability URLs, whoever lacks a
// token of the right scope gets exactly the bytes an unknown guid gets.
func TestUnknownGUIDLooksLikeWrongToken(t *testing.T) {
	srv, hs := guarded(t, false)
	addr := hs.Listener.Addr().String()
	known := srv.Default().GUID()
	unknown := relay.NewGUID()
	upgrade := map[string]string{
		"Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
	}
	with := func(base map[string]string, k, v string) map[string]string {
		m := map[string]string{}
		for a, b := range base {
			m[a] = b
		}
		if k != "" {
			m[k] = v
		}
		return m
	}
	for _, form := range []struct {
		path  func(guid string) string
		right string
		wrong string // a valid token of another scope
	}{
		{func(g string) string { return "/devtools/browser/" + g }, cdpToken, viewerToken},
		{func(g string) string { return "/cdp/" + g }, cdpToken, extToken},
		{func(g string) string { return "/cdp/" + g + "/json/version" }, cdpToken, viewerToken},
		{func(g string) string { return "/extension/" + g }, extToken, cdpToken},
	} {
		for _, base := range []map[string]string{{}, upgrade} {
			ref := rawResponse(t, addr, form.path(unknown), with(base, "Authorization", "Bearer "+form.right))
			if !bytes.HasPrefix(ref, []byte("HTTP/1.1 404 ")) {
				t.Fatalf("%s with the right token: %q", form.path("<unknown>"), ref)
			}
			cases := map[string][]byte{
				"no token":         rawResponse(t, addr, form.path(known), base),
				"wrong token":      rawResponse(t, addr, form.path(known), with(base, "Authorization", "Bearer cdpr_guess")),
				"wrong query":      rawResponse(t, addr, form.path(known)+"?token=cdpr_guess", base),
				"other scope":      rawResponse(t, addr, form.path(known), with(base, "Authorization", "Bearer "+form.wrong)),
				"basic":            rawResponse(t, addr, form.path(known), with(base, "Authorization", "Basic YTpi")),
				"unknown no token": rawResponse(t, addr, form.path(unknown), base),
			}
			for name, got := range cases {
				if !bytes.Equal(got, ref) {
					t.Errorf("%s (%s, upgrade %v):\n%q\nunknown guid with the right token:\n%q", form.path("<known>"), name, len(base) > 0, got, ref)
				}
			}
		}
	}
}

// TestThroughTheGuard pairs a fake extension with ?token= and drives it
// with a client that sends Authorization, as the real ones do.
func TestThroughTheGuard(t *testing.T) {
	srv, hs := guarded(t, false)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws := "ws" + strings.TrimPrefix(hs.URL, "http")
	guid := srv.Default().GUID()
	origin := "chrome-extension://" + extension.ID

	if _, err := fakeext.Dial(ctx, ws+"/extension/"+guid, fakeext.Options{Origin: origin}); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("extension without a token: %v", err)
	}
	ext, err := fakeext.Dial(ctx, ws+"/extension/"+guid+"?token="+extToken, fakeext.Options{Origin: origin, Tabs: []fakeext.Tab{{URL: "https://example.com/", Title: "Example"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer ext.Close()
	if err := srv.Default().WaitReady(ctx); err != nil {
		t.Fatal(err)
	}

	if _, err := cdptest.Dial(ctx, ws+"/devtools/browser/"+guid, http.Header{"Authorization": {"Bearer " + viewerToken}}); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("a viewer token on the CDP endpoint: %v", err)
	}
	c, err := cdptest.Dial(ctx, ws+"/devtools/browser/"+guid, http.Header{"Authorization": {"Bearer " + cdpToken}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err := c.Call(ctx, "", "Browser.getVersion", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(res, []byte("HeadlessChrome")) {
		t.Errorf("Browser.getVersion = %s", res)
	}
}

// TestDiscoveryOverTLS: the relay builds its WebSocket URLs from r.TLS,
// which must survive the guard.
func TestDiscoveryOverTLS(t *testing.T) {
	srv, hs := guarded(t, true)
	for _, path := range []string{"/json/version", "/cdp/" + srv.Default().GUID() + "/json/version"} {
		req, _ := http.NewRequest("GET", hs.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+cdpToken)
		resp, err := hs.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var v struct {
			URL string `json:"webSocketDebuggerUrl"`
		}
		err = json.NewDecoder(resp.Body).Decode(&v)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("%s: %d %v", path, resp.StatusCode, err)
		}
		if want := "wss://" + hs.Listener.Addr().String() + "/devtools/browser/" + srv.Default().GUID(); v.URL != want {
			t.Errorf("%s: webSocketDebuggerUrl %q, want %q", path, v.URL, want)
		}
	}
	// Plain HTTP to the TLS port is not served at all.
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{}}}
	if resp, err := c.Get("http://" + hs.Listener.Addr().String() + "/json/version"); err == nil {
		if resp.StatusCode == 200 {
			t.Error("plain HTTP answered on the TLS port")
		}
		resp.Body.Close()
	}
}

// BenchmarkCapabilityRefusal compares, in process, what a capability URL
// costs when refused for its token and when its guid is unknown: the two
// answers must not differ by anything a network could show.
func BenchmarkCapabilityRefusal(b *testing.B) {
	srv, err := relay.New(relay.Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close(context.Background())
	g, err := ingress.New(srv, tokens(), ingress.Options{})
	if err != nil {
		b.Fatal(err)
	}
	known, unknown := srv.Default().GUID(), relay.NewGUID()
	for _, bc := range []struct{ name, guid, token string }{
		{"wrong-token", known, "cdpr_guess"},
		{"other-scope", known, viewerToken},
		{"unknown-guid", unknown, cdpToken},
	} {
		b.Run(bc.name, func(b *testing.B) {
			r := httptest.NewRequest("GET", "http://127.0.0.1:9222/devtools/browser/"+bc.guid, nil)
			r.Header.Set("Authorization", "Bearer "+bc.token)
			for b.Loop() {
				w := httptest.NewRecorder()
				g.ServeHTTP(w, r)
				if w.Code != http.StatusNotFound {
					b.Fatal(w.Code)
				}
			}
		})
	}
}
