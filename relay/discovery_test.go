package relay

import (
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/cdprelay/cdprelay/relay/internal/cdp"
	"github.com/cdprelay/cdprelay/relay/internal/config"

	"github.com/gorilla/websocket"

	"github.com/cdprelay/cdprelay/internal/cdptest"
	"github.com/cdprelay/cdprelay/internal/fakeext"
)

// get fetches path from the harness's server with Host set to host ("" for
// the real one) and returns the status and body.
func (h *harness) get(path, host string) (int, string) {
	h.t.Helper()
	req, err := http.NewRequestWithContext(h.ctx, http.MethodGet, h.hs.URL+path, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	if resp.StatusCode == http.StatusOK && resp.Header.Get("Content-Type") != "application/json; charset=UTF-8" {
		h.t.Errorf("%s: Content-Type %q", path, resp.Header.Get("Content-Type"))
	}
	return resp.StatusCode, string(b)
}

func TestDiscoveryVersion(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config.Config{})
	minted, err := h.srv.NewInstance()
	if err != nil {
		t.Fatal(err)
	}
	h.ext(fakeext.Options{Tabs: twoTabs})
	h.waitFor("the extension's handshake", func() bool { return h.srv.Default().Status().Ready })
	realHost := h.hs.Listener.Addr().String()
	version := func(host, guid, product, ua string) string {
		return fmt.Sprintf(`{"Browser":%q,"Protocol-Version":"1.3","User-Agent":%q,"V8-Version":"","WebKit-Version":"","webSocketDebuggerUrl":"ws://%s/devtools/browser/%s"}`, product, ua, host, guid)
	}
	def := h.srv.Default().GUID()
	tests := []struct {
		name, path, host, want string
	}{
		// chromedp asks without the slash, Playwright with it.
		{"root", "/json/version", "", version(realHost, def, fakeProduct, fakeUA)},
		{"trailing slash", "/json/version/", "", version(realHost, def, fakeProduct, fakeUA)},
		{"the Host the client used", "/json/version", "localhost:9222", version("localhost:9222", def, fakeProduct, fakeUA)},
		{"an IPv6 Host", "/json/version", "[::1]:9222", version("[::1]:9222", def, fakeProduct, fakeUA)},
		{"default instance by guid", "/cdp/" + def + "/json/version", "", version(realHost, def, fakeProduct, fakeUA)},
		// No extension on it yet: Chrome with no UA known.
		{"minted instance", "/cdp/" + minted.GUID() + "/json/version/", "", version(realHost, minted.GUID(), "Chrome", "")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := h.get(tt.path, tt.host)
			if code != http.StatusOK {
				t.Fatalf("status %d: %s", code, body)
			}
			mustMatch(t, []byte(body), tt.want)
		})
	}

	// The advertised URL is one a client can connect to.
	_, body := h.get("/json/version/", "")
	var v struct{ WebSocketDebuggerURL string }
	mustDecode(t, body, &v)
	c, err := cdptest.Dial(h.ctx, v.WebSocketDebuggerURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	h.call(c, "", "Browser.getVersion", nil)
}

func TestDiscoveryList(t *testing.T) {
	t.Parallel()
	for _, x := range extensions {
		t.Run(x.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, config.Config{})
			// The stock extension does not say the target ids: the relay
			// learns them before the handshake ends.
			h.ext(x.with(fakeext.Options{Tabs: twoTabs}))
			if err := h.srv.Default().WaitReady(h.ctx); err != nil {
				t.Fatal(err)
			}
			entry := func(base string, id int, title, url string) string {
				return fmt.Sprintf(`{"description":"","id":%q,"title":%q,"type":"page","url":%q,"webSocketDebuggerUrl":%q}`,
					tid(id), title, url, base+"/devtools/page/"+tid(id))
			}
			root := h.wsBase()
			other := root + "/cdp/" + h.srv.Default().GUID()
			for _, path := range []string{"/json", "/json/", "/json/list", "/json/list/"} {
				code, body := h.get(path, "")
				if code != http.StatusOK {
					t.Fatalf("%s: status %d", path, code)
				}
				mustMatch(t, []byte(body), "["+entry(root, 1, "A", "https://a.example/")+","+entry(root, 2, "B", "https://b.example/")+"]")
			}
			// The instance's own path gives its own page URLs.
			code, body := h.get("/cdp/"+h.srv.Default().GUID()+"/json/list", "")
			if code != http.StatusOK {
				t.Fatalf("status %d", code)
			}
			mustMatch(t, []byte(body), "["+entry(other, 1, "A", "https://a.example/")+","+entry(other, 2, "B", "https://b.example/")+"]")
			// Learning did not leave the debugger on the person's tabs.
			if e := h.srv.Default().Status(); e.Tabs[0].Attached || e.Tabs[1].Attached {
				t.Errorf("tabs left attached: %+v", e.Tabs)
			}
		})
	}
}

func TestUnknownGUIDIsNotFound(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config.Config{})
	unknown := cdp.NewGUID()
	for _, path := range []string{
		"/cdp/" + unknown,
		"/cdp/" + unknown + "/json/version",
		"/cdp/" + unknown + "/json/list",
		"/devtools/browser/" + unknown,
		"/extension/" + unknown,
		"/extension/",
		"/devtools/browser/" + h.srv.Default().GUID() + "x",
	} {
		if code, body := h.get(path, ""); code != http.StatusNotFound {
			t.Errorf("%s: %d %s", path, code, body)
		}
	}
	// The same over WebSocket upgrades.
	for _, u := range []string{h.wsBase() + "/devtools/browser/" + unknown, h.wsBase() + "/extension/" + unknown, h.wsBase() + "/cdp/" + unknown} {
		_, resp, err := websocket.DefaultDialer.DialContext(h.ctx, u, nil)
		if err == nil || resp == nil || resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s: %v %v", u, err, resp)
		}
	}
}

func TestForeignHostAndOriginAreRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config.Config{})
	def := h.srv.Default().GUID()
	for _, path := range []string{"/json/version", "/json/list", "/devtools/browser/" + def, "/extension/" + def, "/"} {
		for _, host := range []string{"evil.example:9222", "evil.example", "127.0.0.1.evil.example:9222"} {
			if code, _ := h.get(path, host); code != http.StatusForbidden {
				t.Errorf("%s with Host %s: %d", path, host, code)
			}
		}
	}

	dial := func(path string, origin string) int {
		t.Helper()
		hdr := http.Header{}
		if origin != "" {
			hdr.Set("Origin", origin)
		}
		conn, resp, err := websocket.DefaultDialer.DialContext(h.ctx, h.wsBase()+path, hdr)
		if err == nil {
			conn.Close()
			return http.StatusSwitchingProtocols
		}
		if resp == nil {
			t.Fatalf("%s: %v", path, err)
		}
		return resp.StatusCode
	}
	// A web page in the person's browser must not reach either endpoint.
	for _, origin := range []string{"https://evil.example", "http://127.0.0.1:9222", "null"} {
		if code := dial("/devtools/browser/"+def, origin); code != http.StatusForbidden {
			t.Errorf("CDP upgrade with Origin %s: %d", origin, code)
		}
		if code := dial("/cdp/"+def, origin); code != http.StatusForbidden {
			t.Errorf("CDP upgrade (/cdp/) with Origin %s: %d", origin, code)
		}
	}
	for _, origin := range []string{"https://evil.example", "http://127.0.0.1:9222"} {
		if code := dial("/extension/"+def, origin); code != http.StatusForbidden {
			t.Errorf("extension upgrade with Origin %s: %d", origin, code)
		}
	}
	// A WebSocket handshake with a foreign Host (the dialer sends the
	// "Host" header as the request's Host) is refused as well.
	_, resp, err := websocket.DefaultDialer.DialContext(h.ctx, h.wsBase()+"/devtools/browser/"+def, http.Header{"Host": {"evil.example:9222"}})
	if err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("CDP upgrade with a foreign Host: %v %v", err, resp)
	}
	// What is accepted: no Origin for clients, an extension's for the
	// extension.
	if code := dial("/devtools/browser/"+def, ""); code != http.StatusSwitchingProtocols {
		t.Errorf("CDP upgrade without Origin: %d", code)
	}
}
