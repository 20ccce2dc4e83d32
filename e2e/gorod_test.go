package e2e

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/cdp"
	"github.com/go-rod/rod/lib/launcher"
	"github.com/go-rod/rod/lib/proto"
)

// TestRod drives the relay with go-rod, whose client sends
// "Sec-WebSocket-Key: nil". It never launches or downloads a browser: it
// is given the relay's URL.
func TestRod(t *testing.T) {
	requireEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// launcher.ResolveURL reads /json/version, as rod does for an http URL.
	u, err := launcher.ResolveURL(env.HTTPEndpoint())
	if err != nil {
		t.Fatalf("resolve: %v", err)
	}
	// rod's own client, kept so that the test can leave the browser
	// running: rod's Close would close the whole browser.
	ws := &cdp.WebSocket{}
	if err := ws.Connect(ctx, u, nil); err != nil {
		t.Fatalf("dial: %v", err)
	}
	browser := rod.New().Context(ctx).Client(cdp.New().Start(ws))
	if err := browser.Connect(); err != nil {
		t.Fatalf("connect: %v", err)
	}
	if _, err := browser.Version(); err != nil {
		t.Fatalf("version: %v", err)
	}
	main := env.Pages.Main

	page, err := browser.Page(protoTarget(main + "/form.html"))
	if err != nil {
		t.Fatalf("page: %v", err)
	}
	if err := page.WaitLoad(); err != nil {
		t.Fatalf("load: %v", err)
	}
	info, err := page.Info()
	if err != nil || info.Title != "Form" {
		t.Fatalf("title %+v: %v", info, err)
	}
	el, err := page.Element("#name")
	if err != nil {
		t.Fatal(err)
	}
	if err := el.Input("relay"); err != nil {
		t.Fatalf("input: %v", err)
	}
	btn, err := page.Element("#go")
	if err != nil {
		t.Fatal(err)
	}
	if err := btn.Click("left", 1); err != nil {
		t.Fatalf("click: %v", err)
	}
	out, err := page.Element("#out")
	if err != nil {
		t.Fatal(err)
	}
	if text, err := out.Text(); err != nil || text != "Hello, relay" {
		t.Fatalf("after the click: %q, %v", text, err)
	}
	v, err := page.Eval(`() => 6 * 7`)
	if err != nil || v.Value.Int() != 42 {
		t.Fatalf("eval: %v, %v", v, err)
	}
	png, err := page.Screenshot(false, nil)
	if err != nil || len(png) < 1000 || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Fatalf("screenshot: %d bytes, %v", len(png), err)
	}
	t.Log("ok - page, title, input, click, eval, screenshot")

	pages, err := browser.Pages()
	if err != nil || len(pages) < 2 {
		t.Fatalf("pages: %d, %v", len(pages), err)
	}
	second, err := browser.Page(protoTarget(main + "/"))
	if err != nil {
		t.Fatalf("second page: %v", err)
	}
	if err := second.WaitLoad(); err != nil {
		t.Fatal(err)
	}
	id := string(second.TargetID)
	if err := second.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	waitGone(t, id)
	id = string(page.TargetID)
	if err := page.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	waitGone(t, id)
	t.Log("ok - second page opened and both closed")
	ws.Close()
	assertTabsKept(t)
}

func protoTarget(url string) proto.TargetCreateTarget {
	return proto.TargetCreateTarget{URL: url}
}
