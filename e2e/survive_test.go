package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/extension"
	"github.com/cdprelay/cdprelay/internal/testenv"
	"github.com/cdprelay/cdprelay/relay"
)

// A client's page lives as long as its tab: Playwright's page goes on
// through what the person's Chrome does in passing (detour.mjs), the
// person acting through the browser's own debugging port.

// detour runs detour.mjs beside the test and talks to it line by line.
type detour struct {
	t     *testing.T
	in    io.WriteCloser
	lines chan string
	out   strings.Builder // everything it printed, for failures
	cmd   *exec.Cmd
	errb  strings.Builder
}

func startDetour(t *testing.T, endpoint, mode string) *detour {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 280*time.Second)
	t.Cleanup(cancel)
	d := &detour{t: t, lines: make(chan string, 64)}
	d.cmd = exec.CommandContext(ctx, "node", "detour.mjs", endpoint, env.Pages.Main, mode)
	d.cmd.Dir = testenv.E2EDir()
	d.cmd.Stderr = &d.errb
	var err error
	if d.in, err = d.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := d.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			d.lines <- sc.Text()
		}
		close(d.lines)
	}()
	t.Cleanup(func() {
		d.in.Close()
		d.cmd.Wait()
	})
	return d
}

// expect waits for a line that starts with prefix and returns the rest.
func (d *detour) expect(prefix string) string {
	d.t.Helper()
	timer := time.NewTimer(90 * time.Second)
	defer timer.Stop()
	for {
		select {
		case l, ok := <-d.lines:
			if !ok {
				d.cmd.Wait()
				d.t.Fatalf("detour.mjs ended before %q:\n%s%s", prefix, d.out.String(), d.errb.String())
			}
			d.out.WriteString(l + "\n")
			if rest, found := strings.CutPrefix(l, prefix); found {
				return strings.TrimSpace(rest)
			}
		case <-timer.C:
			d.t.Fatalf("detour.mjs: no %q:\n%s%s", prefix, d.out.String(), d.errb.String())
		}
	}
}

// do sends one line and waits for the answer that starts with want.
func (d *detour) do(line, want string) string {
	d.t.Helper()
	if _, err := io.WriteString(d.in, line+"\n"); err != nil {
		d.t.Fatalf("detour.mjs: %v\n%s%s", err, d.out.String(), d.errb.String())
	}
	return d.expect(want)
}

// personTab finds the person's target whose URL is url.
func (p *person) personTab(url string) string {
	p.t.Helper()
	for _, pt := range p.pages() {
		if pt.URL == url {
			return pt.TargetID
		}
	}
	p.t.Fatalf("no tab at %s: %+v", url, p.pages())
	return ""
}

// waitTab waits until the relay's status of target's tab satisfies ok.
func waitTab(t *testing.T, what, target string, ok func(relay.TabStatus) bool) relay.TabStatus {
	t.Helper()
	deadline := time.Now().Add(45 * time.Second)
	for {
		for _, ts := range env.Relay.Default().Status().Tabs {
			if ts.TargetID == target && ok(ts) {
				return ts
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %+v", what, env.Relay.Default().Status())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func waiting(ts relay.TabStatus) bool { return ts.Waiting != "" }

// browserPages are the pages Chrome does not let an extension debug that
// the person takes a shared tab to: a browser page, the Web Store (which
// does not load here, offline: Chrome shows its error page at the Web
// Store's address, and still refuses an extension), another extension's
// page.
var browserPages = []struct{ name, url string }{
	{"browser page", "chrome://version"},
	{"Web Store", "https://chromewebstore.google.com/detail/cdprelay-detour"},
	{"another extension's page", "chrome-extension://" + testenv.PasswordManagerID + "/menu.html"},
}

// TestPageLivesThroughDetours: a Playwright page through the detours the
// person takes its tab on: a browser page, the Web Store and another
// extension's page, and back. The page is the same throughout: never
// closed, the client never disconnected; a goto, fill, click, evaluate and
// screenshot work between the detours; an evaluate and a screenshot sent
// while the tab is away succeed once it is back, in the page it came back
// to. At the end the person closes the tab on a browser page: the page
// closes at once.
func TestPageLivesThroughDetours(t *testing.T) {
	requireEnv(t)
	ctx := testCtx(t, 200*time.Second)
	p := newPerson(ctx, t)
	p.spareTab() // the client keeps a tab when this one closes
	d := startDetour(t, env.HTTPEndpoint(), "relay")
	target := p.personTab(d.expect("ready "))
	ps := p.attach(target)
	navigate := func(url string) {
		t.Helper()
		if _, err := p.call(ps, "Page.navigate", map[string]any{"url": url}); err != nil {
			t.Fatalf("the person's navigation to %s: %v", url, err)
		}
	}
	for i, bp := range browserPages {
		d.do("round", "round ok")
		navigate(bp.url)
		ts := waitTab(t, bp.name+": the client's page does not wait", target, waiting)
		t.Logf("%s: the live view says %q", bp.name, ts.Waiting)
		d.do("gap", "sent")
		time.Sleep(500 * time.Millisecond)
		url := fmt.Sprintf("%s/form.html?back-%d", env.Pages.Main, i)
		navigate(url)
		d.do("back "+url, "back ok")
		t.Logf("ok - %s and back: the same page, and what was sent meanwhile went", bp.name)
	}
	d.do("round", "round ok")

	// A tab that really closes closes at once, even while it is away.
	navigate("chrome://version")
	waitTab(t, "the client's page does not wait", target, waiting)
	// Chrome may not close a tab whose browser page is still being
	// committed: the person closes it once it shows.
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		res, err := p.call(ps, "Runtime.evaluate", map[string]any{"expression": "location.href + ' ' + document.readyState", "returnByValue": true})
		if v, _ := evalValue(res); err == nil && v == `"chrome://version/ complete"` {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the tab did not show chrome://version: %s %v", res, err)
		}
	}
	d.do("close", "closing")
	if _, err := p.call("", "Target.closeTarget", map[string]any{"targetId": target}); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(15 * time.Second); slices.ContainsFunc(p.pages(), func(pt pageTarget) bool { return pt.TargetID == target }); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("Chrome did not close the tab")
		}
	}
	ms, _ := strconv.Atoi(d.expect("closed "))
	t.Logf("ok - the tab closed on a browser page: the page closed %d ms later", ms)
	if ms > 3000 {
		t.Errorf("the closed tab's page closed %d ms later", ms)
	}
	d.do("end", "navigations ")
}

// TestPageLivesThroughExtensionRestarts: a Playwright page while our
// extension reloads (chrome.runtime.reload, as its own page does; the
// Reload button of chrome://extensions, as an update does) and while
// Chrome stops its service worker (Target.closeTarget on the worker, as
// chrome://serviceworker-internals does). The page is the same
// throughout, the client never disconnected; a goto sent while the worker
// is stopped succeeds once it is back; the live view says what the client
// waits for.
func TestPageLivesThroughExtensionRestarts(t *testing.T) {
	requireEnv(t)
	ctx := testCtx(t, 200*time.Second)
	p := newPerson(ctx, t)
	d := startDetour(t, env.HTTPEndpoint(), "relay")
	target := p.personTab(d.expect("ready "))

	// The extension reloads, as its own page's chrome.runtime.reload does.
	d.do("round", "round ok")
	ready := readyCount()
	p.reloadExtension()
	waitReconnect(t, ready)
	d.do("gap goto", "sent")
	d.do("back", "back ok")
	t.Log("ok - the extension reloaded: the same page")

	// The person's Reload on chrome://extensions (an update replaces the
	// extension the same way: unloaded, then loaded anew).
	d.do("round", "round ok")
	ready = readyCount()
	ext, closeExt := p.extensionsPage()
	ext(fmt.Sprintf("chrome.developerPrivate.reload(%q, {failQuietly: true}).then(() => 1)", extension.ID))
	waitReconnect(t, ready)
	// The person closes chrome://extensions: the shared tab is in front
	// again (Chrome captures no screenshot of a tab behind another).
	closeExt()
	d.do("gap goto", "sent")
	d.do("back", "back ok")
	t.Log("ok - the extension reloaded from chrome://extensions: the same page")

	// Chrome stops the worker: the socket closes, and the client waits
	// for the worker to come back.
	d.do("round", "round ok")
	ready = readyCount()
	stopped := time.Now()
	p.stopWorker()
	waitTab(t, "the stopped worker: the client's page does not wait", target, waiting)
	if st := env.Relay.Default().Status(); st.Waiting == "" || !st.Client {
		t.Errorf("the live view while the worker is stopped: %+v", st)
	} else {
		t.Logf("the live view while the worker is stopped: %q", st.Waiting)
	}
	d.do("gap goto", "sent")
	waitReconnect(t, ready)
	t.Logf("the worker came back %v after it was stopped", time.Since(stopped).Round(time.Second))
	d.do("back", "back ok")
	d.do("round", "round ok")
	t.Log("ok - Chrome stopped the worker: the same page, and what was sent meanwhile went")
	d.do("end", "navigations ")
}

// readyCount is how many times the default instance's extension has
// connected, as its audit records say.
func readyCount() int {
	n := 0
	for _, ev := range env.Audit.Since(0) {
		if ev.Actor == relay.ActorExtension && ev.Kind == relay.KindConnect {
			n++
		}
	}
	return n
}

// waitReconnect waits until the extension has connected again since
// readyCount said before, and has ended its handshake.
func waitReconnect(t *testing.T, before int) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for readyCount() <= before || !env.Relay.Default().Status().Ready {
		if time.Now().After(deadline) {
			t.Fatalf("the extension did not come back: %+v", env.Relay.Default().Status())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// extensionsPage opens chrome://extensions, as the person would, and
// returns a function that evaluates an expression there (its
// chrome.developerPrivate is what its buttons call), and one that closes
// it.
func (p *person) extensionsPage() (eval func(expr string) string, closePage func()) {
	p.t.Helper()
	res, err := p.call("", "Target.createTarget", map[string]any{"url": "chrome://extensions"})
	if err != nil {
		p.t.Fatalf("open chrome://extensions: %v", err)
	}
	var page struct{ TargetID string }
	json.Unmarshal(res, &page)
	s := p.attach(page.TargetID)
	// The page's chrome.developerPrivate is there once the page has loaded,
	// not as soon as the tab is: wait for it as a person waits for the
	// buttons.
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		res, err := p.call(s, "Runtime.evaluate", map[string]any{"expression": "!!(globalThis.chrome && chrome.developerPrivate)", "returnByValue": true})
		if err == nil {
			if v, err := evalValue(res); err == nil && v == "true" {
				break
			}
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("chrome://extensions did not load: %v", err)
		}
	}
	closePage = func() {
		p.t.Helper()
		if _, err := p.call("", "Target.closeTarget", map[string]any{"targetId": page.TargetID}); err != nil {
			p.t.Fatalf("close chrome://extensions: %v", err)
		}
	}
	return func(expr string) string {
		p.t.Helper()
		res, err := p.call(s, "Runtime.evaluate", map[string]any{"expression": expr, "awaitPromise": true, "returnByValue": true})
		if err != nil {
			p.t.Fatalf("%s: %v", expr, err)
		}
		v, err := evalValue(res)
		if err != nil {
			p.t.Fatalf("%s: %v", expr, err)
		}
		return v
	}, closePage
}

// stopWorker stops our extension's service worker as
// chrome://serviceworker-internals' Stop does: Target.closeTarget on it
// through the browser's own port.
func (p *person) stopWorker() {
	p.t.Helper()
	res, err := p.call("", "Target.getTargets", nil)
	if err != nil {
		p.t.Fatal(err)
	}
	var r struct{ TargetInfos []pageTarget }
	json.Unmarshal(res, &r)
	for _, ti := range r.TargetInfos {
		if ti.Type == "service_worker" && strings.HasPrefix(ti.URL, "chrome-extension://"+extension.ID+"/") {
			if _, err := p.call("", "Target.closeTarget", map[string]any{"targetId": ti.TargetID}); err != nil {
				p.t.Fatal(err)
			}
			return
		}
	}
	p.t.Fatal("our extension's worker is not running")
}

// TestDetoursMatchChrome: the same person's detours, seen by Playwright
// through Chrome's own port and through the relay: the page stays, and
// the navigations the client sees are the same, but for the pages never
// shared, of which the relay's client sees nothing.
func TestDetoursMatchChrome(t *testing.T) {
	requireEnv(t)
	ctx := testCtx(t, 150*time.Second)
	p := newPerson(ctx, t)
	run := func(endpoint, mode string) []string {
		d := startDetour(t, endpoint, mode)
		start := d.expect("ready ")
		target := p.personTab(start)
		ps := p.attach(target)
		defer p.call("", "Target.detachFromTarget", map[string]any{"sessionId": ps})
		for i, bp := range browserPages {
			if _, err := p.call(ps, "Page.navigate", map[string]any{"url": bp.url}); err != nil {
				t.Fatal(err)
			}
			if mode == "relay" {
				waitTab(t, bp.name+": the client's page does not wait", target, waiting)
			} else {
				time.Sleep(time.Second)
			}
			url := fmt.Sprintf("%s/form.html?match-%d", env.Pages.Main, i)
			if _, err := p.call(ps, "Page.navigate", map[string]any{"url": url}); err != nil {
				t.Fatal(err)
			}
			d.do("back "+url, "back ok")
		}
		var navs []string
		json.Unmarshal([]byte(d.do("end", "navigations ")), &navs)
		// The run's own start URL differs between the two.
		for i, u := range navs {
			navs[i] = strings.ReplaceAll(u, start, "<start>")
		}
		return navs
	}
	ref := run(env.BrowserWS, "reference")
	got := run(env.HTTPEndpoint(), "relay")
	t.Logf("Chrome's own port: %q", ref)
	t.Logf("through the relay: %q", got)
	var want []string
	for _, u := range ref {
		if web := strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://"); web && !strings.Contains(u, "chromewebstore") {
			want = append(want, u)
		}
	}
	want = slices.Compact(want)
	if !slices.Equal(slices.Compact(got), want) {
		t.Errorf("the navigations the client saw:\n  Chrome (web pages only): %q\n  relay:                   %q", want, got)
	}
}
