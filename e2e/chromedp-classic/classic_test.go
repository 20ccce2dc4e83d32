// Package classic drives the relay with the classic chromedp API,
// chromedp.NewRemoteAllocator, from chromedp v0.14. It is a module of its
// own because that chromedp and the one the main module tests with cannot
// share a build; it starts its own relay and browser.
package classic

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/cdprelay/cdprelay/internal/testenv"
)

var env *testenv.Env

func TestMain(m *testing.M) {
	code := func() int {
		if testenv.Require(false) != "" {
			return m.Run() // each test reports the skip, or in CI the failure
		}
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		var err error
		if env, err = testenv.Start(ctx, testenv.Options{}); err != nil {
			println("chromedp-classic: start:", err.Error())
			return 1
		}
		defer env.Close()
		return m.Run()
	}()
	os.Exit(code)
}

func TestClassicRemoteAllocator(t *testing.T) {
	testenv.SkipOrFail(t, false)
	if env == nil {
		t.Fatal("the end-to-end environment did not start")
	}
	for _, tt := range []struct{ name, endpoint string }{
		{"http", env.HTTPEndpoint()},
		{"ws", env.WSEndpoint()},
	} {
		t.Run(tt.name, func(t *testing.T) { run(t, tt.endpoint) })
	}
}

func run(t *testing.T, endpoint string) {
	main := env.Pages.Main
	deadline, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	allocCtx, cancelAlloc := chromedp.NewRemoteAllocator(deadline, endpoint)
	defer cancelAlloc()
	ctx, cancelTab := chromedp.NewContext(allocCtx)
	defer cancelTab()

	var title, out string
	var n int
	var png []byte
	err := chromedp.Run(ctx,
		chromedp.Navigate(main+"/form.html"),
		chromedp.Title(&title),
		chromedp.SendKeys("#name", "relay"),
		chromedp.Click("#go"),
		chromedp.Text("#out", &out),
		chromedp.Evaluate("6 * 7", &n),
		chromedp.CaptureScreenshot(&png),
	)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if title != "Form" || out != "Hello, relay" || n != 42 || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Fatalf("title %q, text %q, evaluate %d, screenshot %d bytes", title, out, n, len(png))
	}
	t.Log("ok - navigate, title, type, click, evaluate, screenshot")

	mine := chromedp.FromContext(ctx).Target.TargetID
	infos, err := chromedp.Targets(ctx)
	if err != nil || !has(infos, mine) || len(infos) < 2 {
		t.Fatalf("targets %v (%v) without %s and the shared tab", infos, err, mine)
	}

	second, cancelSecond := chromedp.NewContext(ctx)
	if err := chromedp.Run(second, chromedp.Navigate(main+"/"), chromedp.Title(&title)); err != nil || title != "cdprelay test page" {
		t.Fatalf("second tab %q: %v", title, err)
	}
	other := chromedp.FromContext(second).Target.TargetID
	cancelSecond()
	infos, err = chromedp.Targets(ctx)
	if err != nil || has(infos, other) {
		t.Fatalf("the second tab is still a target (%v)", err)
	}
	t.Log("ok - second tab opened and closed by cancelling its context")

	if err := chromedp.Cancel(ctx); err != nil {
		t.Fatalf("cancel: %v", err)
	}
	waitGone(t, string(mine))
	t.Log("ok - context cancel closed the tab")
}

func has(infos []*target.Info, id target.ID) bool {
	for _, in := range infos {
		if in.TargetID == id {
			return true
		}
	}
	return false
}

func waitGone(t *testing.T, targetID string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		gone := true
		for _, tab := range env.Relay.Default().Status().Tabs {
			if strings.EqualFold(tab.TargetID, targetID) {
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
