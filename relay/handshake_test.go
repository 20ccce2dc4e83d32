package relay

import (
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/cdprelay/cdprelay/internal/fakeext"
	"github.com/cdprelay/cdprelay/relay/internal/config"
)

func TestTrafficHeldUntilExtensionInitialized(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config.Config{})
	e := h.ext(fakeext.Options{Tabs: twoTabs, HoldInitialized: true})
	c := h.client()
	getVersion := h.send(c, "", "Browser.getVersion", nil)
	autoAttach := h.send(c, "", "Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true})
	// Nothing may happen while the extension is still in its handshake.
	// Only time can show that nothing happens; 100 ms is ages for a relay
	// on loopback.
	time.Sleep(100 * time.Millisecond)
	if msgs := c.Messages(); len(msgs) != 0 {
		t.Fatalf("answered before extension.initialized: %s", describe(msgs))
	}
	if cmds := e.Commands(); len(cmds) != 0 {
		t.Fatalf("the extension got commands before its handshake ended: %+v", cmds)
	}
	e.Initialize()
	m, at := h.reply(c, getVersion)
	if at != 0 || m.Error != nil {
		t.Fatalf("getVersion reply at %d: %s", at, m.Raw)
	}
	mustMatch(t, m.Result, fmt.Sprintf(`{"protocolVersion":"1.3","product":%q,"revision":"","userAgent":%q,"jsVersion":""}`, fakeProduct, fakeUA))
	_, at = h.reply(c, autoAttach)
	if n := len(c.Events("Target.attachedToTarget")); n != 2 || at != 3 {
		t.Errorf("after initialized: %s", describe(c.Messages()))
	}
}

func TestClientBeforeExtensionIsServedWhenItArrives(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config.Config{})
	c := h.client()
	id := h.send(c, "", "Browser.getVersion", nil)
	h.waitFor("the client to be connected", func() bool { return h.srv.Default().Status().Client })
	h.ext(fakeext.Options{Tabs: twoTabs})
	m, _ := h.reply(c, id)
	mustMatch(t, m.Raw, fmt.Sprintf(`{"id":%d,"result":{"protocolVersion":"1.3","product":%q,"revision":"","userAgent":%q,"jsVersion":""}}`, id, fakeProduct, fakeUA))
	if got := h.autoAttach(c); len(got) != 2 {
		t.Errorf("sessions %v", got)
	}
}

func TestClientClosedWhenNoExtensionInTime(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config.Config{ExtensionWait: 300 * time.Millisecond})
	c := h.client()
	start := time.Now()
	h.send(c, "", "Browser.getVersion", nil)
	code, text := h.closed(c)
	if code != websocket.CloseTryAgainLater || text != "Extension not connected" {
		t.Errorf("close frame %d %q", code, text)
	}
	if d := time.Since(start); d < 250*time.Millisecond {
		t.Errorf("closed after %v, before ExtensionWait", d)
	}
	// The instance is free for the next client.
	h.waitFor("the client to be gone", func() bool { return !h.srv.Default().Status().Client })
}

func TestUnclaimedInstanceExpires(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config.Config{UnclaimedTTL: 200 * time.Millisecond})
	minted, err := h.srv.NewInstance()
	if err != nil {
		t.Fatal(err)
	}
	claimed, err := h.srv.NewInstance()
	if err != nil {
		t.Fatal(err)
	}
	h.extAt(h.extURL(claimed), fakeext.Options{Tabs: twoTabs})

	h.waitFor("the unclaimed instance to go", func() bool { return h.srv.lookup(minted.GUID()) == nil })
	for _, path := range []string{"/extension/", "/devtools/browser/", "/cdp/"} {
		if code := httpStatus(t, h.hs.URL+path+minted.GUID(), nil); code != http.StatusNotFound {
			t.Errorf("%s of the expired instance: %d", path, code)
		}
	}
	_, err = fakeext.Dial(h.ctx, h.extURL(minted), fakeext.Options{})
	if !errors.Is(err, websocket.ErrBadHandshake) {
		t.Errorf("extension dial to the expired instance: %v", err)
	}

	// Well past its TTL, the default instance and a claimed one stay.
	time.Sleep(150 * time.Millisecond)
	if h.srv.lookup(h.srv.Default().GUID()) != h.srv.Default() {
		t.Error("the default instance expired")
	}
	if h.srv.lookup(claimed.GUID()) != claimed {
		t.Fatal("a claimed instance expired")
	}
	c := h.clientAt(h.cdpURL(claimed))
	if got := h.autoAttach(c); len(got) != 2 {
		t.Errorf("sessions on the claimed instance %v", got)
	}
	d := h.ext(fakeext.Options{Tabs: twoTabs[:1]})
	if got := h.autoAttach(h.client()); len(got) != 1 || !d.Attached(1) {
		t.Errorf("the default instance does not work: %v", got)
	}
}

// httpStatus GETs url with header and returns the status code.
func httpStatus(t *testing.T, url string, header http.Header) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
