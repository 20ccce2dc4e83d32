package e2e

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/remote"
)

// TestChromedp drives the relay with chromedp v0.23's remote allocator,
// from the http:// discovery URL and from the ws:// browser URL.
func TestChromedp(t *testing.T) {
	requireEnv(t)
	for _, tt := range []struct{ name, endpoint string }{
		{"http", env.HTTPEndpoint()},
		{"ws", env.WSEndpoint()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			runChromedp(t, tt.endpoint)
			assertTabsKept(t)
		})
	}
}

func runChromedp(t *testing.T, endpoint string) {
	main := env.Pages.Main
	deadline, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	allocCtx, cancelAlloc := remote.NewAllocator(deadline, endpoint)
	defer cancelAlloc()
	ctx, cancelTab := chromedp.NewContext(allocCtx)
	defer cancelTab()

	// Open a page (chromedp's own tab), read the title, type and click.
	if err := chromedp.Do(ctx, chromedp.Navigate(main+"/form.html")); err != nil {
		t.Fatalf("navigate: %v", err)
	}
	title, err := chromedp.Run(ctx, chromedp.Title())
	if err != nil || title != "Form" {
		t.Fatalf("title %q: %v", title, err)
	}
	if err := chromedp.Do(ctx, chromedp.SendKeys("#name", "relay"), chromedp.Click("#go")); err != nil {
		t.Fatalf("type and click: %v", err)
	}
	out, err := chromedp.Run(ctx, chromedp.Text("#out"))
	if err != nil || out != "Hello, relay" {
		t.Fatalf("after the click: %q, %v", out, err)
	}
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int]("6 * 7"))
	if err != nil || n != 42 {
		t.Fatalf("evaluate: %d, %v", n, err)
	}
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil || len(png) < 1000 || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Fatalf("screenshot: %d bytes, %v", len(png), err)
	}
	t.Log("ok - navigate, title, type, click, evaluate, screenshot")

	// Targets lists the shared tabs, chromedp's own among them.
	mine := chromedp.FromContext(ctx).Target.TargetID
	infos, err := chromedp.Targets(ctx)
	if err != nil {
		t.Fatalf("targets: %v", err)
	}
	if !hasTarget(infos, mine) || len(infos) < 2 {
		t.Fatalf("targets %v do not include %s and the shared tab", infos, mine)
	}

	// A second tab, then its context cancelled: the tab closes.
	second, cancelSecond := chromedp.NewContext(ctx)
	if err := chromedp.Do(second, chromedp.Navigate(main+"/")); err != nil {
		t.Fatalf("second tab: %v", err)
	}
	title, err = chromedp.Run(second, chromedp.Title())
	if err != nil || title != "cdprelay test page" {
		t.Fatalf("second tab title %q: %v", title, err)
	}
	other := chromedp.FromContext(second).Target.TargetID
	cancelSecond()
	if err := chromedp.Cancel(second); err != nil && err != context.Canceled {
		t.Logf("cancel: %v", err)
	}
	infos, err = chromedp.Targets(ctx)
	if err != nil {
		t.Fatalf("targets: %v", err)
	}
	if hasTarget(infos, other) {
		t.Fatalf("the second tab is still a target after its context was cancelled")
	}
	t.Log("ok - second tab opened and closed by cancelling its context")

	// Cancelling the first context closes chromedp's tab cleanly.
	if err := chromedp.Cancel(ctx); err != nil {
		t.Fatalf("cancel: %v", err)
	}
	waitGone(t, string(mine))
	t.Log("ok - context cancel closed the tab")
}

func hasTarget(infos []*target.Info, id target.ID) bool {
	for _, in := range infos {
		if in.TargetID == id {
			return true
		}
	}
	return false
}

// waitGone waits until the relay no longer shares a tab with targetID.
func waitGone(t *testing.T, targetID string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		gone := true
		for _, tab := range env.Relay.Default().Status().Tabs {
			if tab.TargetID == targetID {
				gone = false
			}
		}
		if gone {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("tab %s is still open", targetID)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
