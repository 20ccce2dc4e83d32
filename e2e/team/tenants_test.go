package team

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/cdprelay/cdprelay/internal/app"
	"github.com/cdprelay/cdprelay/internal/ingress"
	"github.com/cdprelay/cdprelay/internal/testenv"
	"github.com/cdprelay/cdprelay/relay"
)

// teamTokens: the operator, and alice and bob with an agent's, a
// browser's and a watcher's token each. Each token is its name.
var teamTokens = []ingress.Token{
	{Name: "ops", Scopes: []string{"admin", "cdp", "viewer"}},
	{Name: "alice-cdp", Scopes: []string{"cdp"}, Tenant: "alice"},
	{Name: "alice-browser", Scopes: []string{"extension", "pair"}, Tenant: "alice"},
	{Name: "alice-watch", Scopes: []string{"viewer-interactive", "admin"}, Tenant: "alice"},
	{Name: "bob-cdp", Scopes: []string{"cdp"}, Tenant: "bob"},
	{Name: "bob-browser", Scopes: []string{"extension", "pair"}, Tenant: "bob"},
	{Name: "bob-watch", Scopes: []string{"viewer", "admin"}, Tenant: "bob"},
}

func teamFile() app.File {
	var f app.File
	for _, t := range teamTokens {
		t.SHA256 = ingress.HashToken(t.Name)
		f.Tokens = append(f.Tokens, t)
	}
	return f
}

// client talks to a relay (or a front door) with tokens.
type client struct {
	t    *testing.T
	base string
}

func (c client) do(method, path, token string) (int, string, http.Header) {
	c.t.Helper()
	req, _ := http.NewRequest(method, c.base+path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	hc := &http.Client{Timeout: 10 * time.Second}
	resp, err := hc.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

func (c client) mint(token string) relay.NewInstanceInfo {
	c.t.Helper()
	code, body, _ := c.do("POST", "/v1/instances", token)
	var info relay.NewInstanceInfo
	if code != http.StatusCreated || json.Unmarshal([]byte(body), &info) != nil {
		c.t.Fatalf("mint with %s: %d %s", token, code, body)
	}
	return info
}

// waitTabs waits until the instance is ready and shows a tab whose URL
// starts with prefix ("" for any number of tabs), as the operator sees it.
func (c client) waitTabs(ctx context.Context, id, prefix string) relay.Status {
	c.t.Helper()
	for {
		code, body, _ := c.do("GET", "/v1/instances/"+id, "ops")
		var st relay.Status
		if code == 200 && json.Unmarshal([]byte(body), &st) == nil && st.Ready {
			if prefix == "" {
				return st
			}
			for _, tab := range st.Tabs {
				if strings.HasPrefix(tab.URL, prefix) {
					return st
				}
			}
		}
		select {
		case <-ctx.Done():
			c.t.Fatalf("instance %s: not ready with a tab at %q: %d %s", id, prefix, code, body)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// handshake is a WebSocket handshake's whole answer, less its date.
func handshake(t *testing.T, url, token string) string {
	t.Helper()
	c, resp, err := websocket.DefaultDialer.Dial(url, http.Header{"Authorization": {"Bearer " + token}})
	if err == nil {
		c.Close()
		return "101"
	}
	if resp == nil {
		t.Fatalf("dial %s: %v", url, err)
	}
	b, _ := io.ReadAll(resp.Body)
	h := resp.Header.Clone()
	h.Del("Date")
	hb, _ := json.Marshal(h)
	return fmt.Sprintf("%d %s %q", resp.StatusCode, hb, b)
}

// TestTenants: two people share one relay, each with their own browser
// (two Chromium profiles) and extension token, their own agent and their
// own live view. Neither reaches, nor sees, the other's.
func TestTenants(t *testing.T) {
	testenv.SkipOrFail(t, true)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	logf, err := os.CreateTemp("", "cdprelay-team-*.log")
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		logf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("relay and browsers log (%s):\n%s", logf.Name(), tail(string(b), 80))
		}
	}()
	a, err := app.New(app.Config{Addr: "127.0.0.1:0", File: teamFile(), Logger: slog.New(slog.NewTextHandler(logf, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: a, ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(ln)
	defer func() {
		cctx, ccancel := context.WithTimeout(context.Background(), 5*time.Second)
		a.Close(cctx)
		ccancel()
		hs.Close()
	}()
	base := "http://" + ln.Addr().String()
	rc := client{t, base}
	pages, err := testenv.StartPages()
	if err != nil {
		t.Fatal(err)
	}
	defer pages.Close()

	// Each pairs their own browser: their browser's token mints the
	// instance its extension then pairs with. Alice shares what she picks
	// (her agent's tabs), so that her live view, opened in the same
	// browser, is not shared itself.
	alice, bob := rc.mint("alice-browser"), rc.mint("bob-browser")
	ab, err := testenv.StartBrowser(ctx, alice.ExtensionURL+"?token=alice-browser", testenv.BrowserOptions{Share: "pick", Output: logf})
	if err != nil {
		t.Fatal(err)
	}
	defer ab.Close()
	bb, err := testenv.StartBrowser(ctx, bob.ExtensionURL+"?token=bob-browser", testenv.BrowserOptions{Output: logf})
	if err != nil {
		t.Fatal(err)
	}
	defer bb.Close()
	rc.waitTabs(ctx, alice.InstanceID, "")
	rc.waitTabs(ctx, bob.InstanceID, "")
	t.Logf("alice's instance %s and bob's %s are paired", alice.InstanceID, bob.InstanceID)

	// Each one's agent, with only the relay's address and its token:
	// discovery answers for that person's own instance.
	aliceURL, bobURL := pages.Main+"/", pages.Other+"/form.html"
	node(t, "team.mjs", "drive", base, "alice-cdp", aliceURL)
	node(t, "team.mjs", "drive", base, "bob-cdp", bobURL)
	rc.waitTabs(ctx, alice.InstanceID, aliceURL)
	rc.waitTabs(ctx, bob.InstanceID, bobURL)

	// Alice's discovery names her instance; her token on bob's socket
	// gets what a guid nobody has gets, byte for byte.
	_, body, _ := rc.do("GET", "/json/version", "alice-cdp")
	if !strings.Contains(body, alice.CDPURL) {
		t.Errorf("alice's /json/version: %s, want %s", body, alice.CDPURL)
	}
	_, body, _ = rc.do("GET", "/json/list", "alice-cdp")
	if !strings.Contains(body, aliceURL) || strings.Contains(body, pages.Other) {
		t.Errorf("alice's /json/list: %s", body)
	}
	wsBase := "ws://" + ln.Addr().String()
	theirs := handshake(t, bob.CDPURL, "alice-cdp")
	none := handshake(t, wsBase+"/devtools/browser/"+relay.NewGUID(), "alice-cdp")
	if theirs != none || !strings.HasPrefix(none, "404 ") {
		t.Errorf("alice's token on bob's socket: %s; on an unknown one: %s", theirs, none)
	}
	if got := handshake(t, bob.CDPURL, "bob-cdp"); got != "101" {
		t.Errorf("bob's token on bob's socket: %s", got)
	}

	// Alice's live view, in her own browser: her tab, not bob's.
	shot := os.Getenv("TENANTS_SCREENSHOT")
	if shot == "" {
		shot = filepath.Join(t.TempDir(), "tenants-liveview.png")
	}
	node(t, "team.mjs", "liveview", ab.WS, base, "alice-watch", aliceURL, pages.Other, shot)
	if fi, err := os.Stat(shot); err != nil || fi.Size() < 10000 {
		t.Errorf("screenshot %s: %v", shot, err)
	}
	// The operator's, in the same browser: the default instance, alice's
	// and bob's.
	node(t, "team.mjs", "liveview", ab.WS, base, "ops", aliceURL, pages.Other, filepath.Join(t.TempDir(), "operator.png"), "3")

	// Alice's audit is hers; the operator's has both.
	audit := func(token string) (tenants map[string]int) {
		_, body, _ := rc.do("GET", "/v1/audit?limit=1000", token)
		var v struct {
			Records []struct{ Tenant, Instance, Kind string }
		}
		if err := json.Unmarshal([]byte(body), &v); err != nil {
			t.Fatalf("audit: %v %s", err, body)
		}
		tenants = map[string]int{}
		for _, r := range v.Records {
			tenants[r.Tenant]++
		}
		return tenants
	}
	if got := audit("alice-watch"); got["alice"] == 0 || len(got) != 1 {
		t.Errorf("alice's audit: records by tenant %v", got)
	}
	if got := audit("ops"); got["alice"] == 0 || got["bob"] == 0 {
		t.Errorf("the operator's audit: records by tenant %v", got)
	}
	_, body, _ = rc.do("GET", "/v1/instances", "ops")
	if !strings.Contains(body, alice.InstanceID) || !strings.Contains(body, bob.InstanceID) {
		t.Errorf("the operator's /v1/instances lacks one of them: %s", body)
	}
	_, body, _ = rc.do("GET", "/v1/instances", "bob-watch")
	if strings.Contains(body, alice.InstanceID) || !strings.Contains(body, bob.InstanceID) {
		t.Errorf("bob's /v1/instances: %s", body)
	}
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
