package e2e

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/viewer"
)

// TestLiveView opens the live-view page in a second headless Chromium
// while Playwright drives a tab through the relay: the page shows the
// tab's frames, follows its navigation, and a click on the canvas after
// taking control clicks the button in the tab (see liveview.mjs).
func TestLiveView(t *testing.T) {
	requireEnv(t)
	vs, err := viewer.New(viewer.Config{Source: viewer.FromRelay(env.Relay), Interactive: asThePerson})
	if err != nil {
		t.Fatal(err)
	}
	// The shared env's relay has no Fallback; the live view gets its own
	// loopback server over the same relay.
	hs := httptest.NewServer(vs)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := vs.Close(ctx); err != nil {
			t.Errorf("live view close: %v", err)
		}
		hs.Close()
	})
	shot := os.Getenv("LIVEVIEW_SCREENSHOT")
	if shot == "" {
		shot = filepath.Join(t.TempDir(), "liveview.png")
	}
	runNode(t, "liveview.mjs", hs.URL+"/", env.HTTPEndpoint(), env.Pages.Main, shot)
	if fi, err := os.Stat(shot); err != nil || fi.Size() < 10000 {
		t.Errorf("screenshot %s: %v", shot, err)
	}
	assertTabsKept(t)
}

// asThePerson makes every viewer of a live view served over the bare
// relay (no ingress, no person key) the person in charge, unless it asks
// for ?mode=view: these tests act as the person; who may is the
// assembly's to decide (TestPersonKey).
func asThePerson(r *http.Request) bool { return r.URL.Query().Get("mode") != "view" }
