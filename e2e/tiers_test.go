package e2e

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/denylist"
	"github.com/cdprelay/cdprelay/internal/testenv"
)

// The per-origin tiers end to end: real Chromium with our extension, real
// Playwright and Puppeteer, raw CDP clients and a live-view viewer, on
// local sites of the three tiers (tiers_harness_test.go).

// attemptReport is one attempt of a node script: it worked (and gave
// value) or failed with error.
type attemptReport struct {
	OK    bool            `json:"ok"`
	Value json.RawMessage `json:"value"`
	Error string          `json:"error"`
}

func (a attemptReport) String() string {
	if a.OK {
		return "ok " + string(a.Value)
	}
	return "failed: " + a.Error
}

// tierScript runs tiers.mjs (or another script with its arguments) through
// a tap, and returns its report, its output folder and what it printed.
func tierScript(t *testing.T, tp *tap, name string, args ...string) (report map[string]json.RawMessage, out, stdout string) {
	t.Helper()
	out = t.TempDir()
	stdout = runNode(t, name, append(append([]string{}, args...), out)...)
	b, err := os.ReadFile(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatalf("%s wrote no report: %v", name, err)
	}
	if err := json.Unmarshal(b, &report); err != nil {
		t.Fatalf("%s: report.json: %v", name, err)
	}
	return report, out, stdout
}

// attempts reads a group of attempts from a report.
func attempts(t *testing.T, report map[string]json.RawMessage, group string) map[string]attemptReport {
	t.Helper()
	var g map[string]json.RawMessage
	json.Unmarshal(report[group], &g)
	out := map[string]attemptReport{}
	for k, v := range g {
		var a attemptReport
		if json.Unmarshal(v, &a) == nil && (a.OK || a.Error != "") {
			out[k] = a
		}
	}
	return out
}

// noNodeLeaks searches what a node client received through the tap, what
// it printed and every file it wrote for the needles.
func noNodeLeaks(t *testing.T, tp *tap, out, stdout string, ns ...string) {
	t.Helper()
	if l := leakIn(tp.Frames(), 0, ns...); l != "" {
		t.Errorf("the client received the blind page's content:\n\t%s", l)
	}
	if l := leakIn([][]byte{[]byte(stdout)}, 0, ns...); l != "" {
		t.Errorf("the client printed the blind page's content:\n\t%s", l)
	}
	files, _ := os.ReadDir(out)
	for _, f := range files {
		b, _ := os.ReadFile(filepath.Join(out, f.Name()))
		if l := leakIn([][]byte{b}, 0, ns...); l != "" {
			t.Errorf("the client wrote the blind page's content to %s:\n\t%s", f.Name(), l)
		}
	}
}

// TestTierSitesPlaywright: Playwright, unmodified, on one site of each
// tier (tiers.mjs). On the full site it reads and acts; on the read-only
// one its reads work and its acts fail with the tier's reason, and the
// page stays as it was; on the blind one (the person's tab) evaluate,
// screenshot and click fail and no byte of the page — its text, its
// title, its address — reaches Playwright, raw or in anything it printed
// or wrote. Then the same Page object goes to a full site and works
// again, without a new connection; and so does a page of Playwright's own
// that followed a link into the blind site.
func TestTierSitesPlaywright(t *testing.T) {
	requireEnv(t)
	useTiers(t)
	ctx := testCtx(t, 2*time.Minute)
	p := newPerson(ctx, t)
	mFull, mRO, mBlind, mLeft, mLink, mAgain := newMark(), newMark(), newMark(), newMark(), newMark(), newMark()
	p.openTab(siteURL(env.Pages.Third, mBlind, true))
	actsBefore := env.Pages.HitsUnder(env.Pages.Other, "/tier/act/")
	tp := newTap(t)
	roSite := siteURL(env.Pages.Other, mRO, false)
	addresses, _ := json.Marshal(map[string]string{
		"full":         siteURL(env.Pages.Main, mFull, false),
		"readOnly":     roSite,
		"blindOrigin":  env.Pages.Third,
		"leaveTo":      siteURL(env.Pages.Main, mLeft, false),
		"links":        env.Pages.Main + "/tier/links.html?to=" + url.QueryEscape(siteURL(env.Pages.Third, mLink, true)),
		"leaveAgainTo": siteURL(env.Pages.Main, mAgain, false),
	})
	report, out, stdout := tierScript(t, tp, "tiers.mjs", "sites", tp.endpoint(), string(addresses))

	t.Run("full", func(t *testing.T) {
		for name, a := range attempts(t, report, "full") {
			if !a.OK {
				t.Errorf("%s %s", name, a)
			}
		}
		var after string
		json.Unmarshal(report["full"], &struct{ After *string }{&after})
		if after != "changed by a click" {
			t.Errorf("the page after fill and click reads %q", after)
		}
	})
	t.Run("read-only reads", func(t *testing.T) {
		ro := attempts(t, report, "readOnly")
		want := map[string]string{
			"title":        quote("Tier " + testenv.TierContent(mRO)),
			"url":          quote(roSite),
			"textContent":  quote(testenv.TierContent(mRO)),
			"innerText":    quote(testenv.TierContent(mRO)),
			"getAttribute": quote(testenv.TierContent(mRO)),
			"count":        "4",
			"isVisible":    "true",
			"screenshot":   "",
			"ariaSnapshot": "",
		}
		for name, v := range want {
			a, ok := ro[name]
			switch {
			case !ok:
				t.Errorf("%s was not tried", name)
			case !a.OK:
				t.Errorf("the read %s %s", name, a)
			case v != "" && string(a.Value) != v:
				t.Errorf("%s gave %s, want %s", name, a.Value, v)
			}
		}
	})
	t.Run("read-only acts", func(t *testing.T) {
		acts := attempts(t, report, "readOnlyActs")
		for _, name := range []string{"click", "fill", "press", "goto", "evaluate", "setInputFiles"} {
			if a, ok := acts[name]; !ok || a.OK {
				t.Errorf("the act %s: %s", name, a)
			}
		}
		var after struct {
			Out, URL string
			Inputs   int
		}
		json.Unmarshal(report["readOnlyAfter"], &after)
		if after.Out != "untouched" || after.URL != roSite || after.Inputs != 4 {
			t.Errorf("the page changed: %+v", after)
		}
		if n := env.Pages.HitsUnder(env.Pages.Other, "/tier/act/") - actsBefore; n != 0 {
			t.Errorf("%d requests of an act reached the site", n)
		}
	})
	t.Run("read-only refusals say why", func(t *testing.T) {
		acts := attempts(t, report, "readOnlyActs")
		// Not the click: Playwright retries an input event's protocol
		// error until its timeout, so the refusal's reason is not in the
		// error it reports (the README says so); what the click did not
		// do is checked above.
		for _, name := range []string{"fill", "press", "goto", "evaluate", "setInputFiles"} {
			if a := acts[name]; !a.OK && !strings.Contains(a.Error, "read-only") {
				t.Errorf("%s failed without the tier's reason: %s", name, a.Error)
			}
		}
	})
	t.Run("blind", func(t *testing.T) {
		var blindURL string
		json.Unmarshal(report["blindURL"], &blindURL)
		if blindURL != env.Pages.Third+"/" {
			t.Errorf("Playwright has the blind page at %q, want its origin", blindURL)
		}
		blind := attempts(t, report, "blind")
		for _, name := range []string{"evaluate", "screenshot", "click"} {
			if a, ok := blind[name]; !ok || a.OK {
				t.Errorf("%s %s", name, a)
			}
		}
		// The link's page names the blind page's address itself: of that
		// page, only its content is searched for.
		noNodeLeaks(t, tp, out, stdout, append(needles(mBlind), testenv.TierContent(mLink))...)
	})
	t.Run("blind refusals say why", func(t *testing.T) {
		for name, a := range attempts(t, report, "blind") {
			if !a.OK && !strings.Contains(a.Error, "blind") {
				t.Errorf("%s failed without the tier's reason: %s", name, a.Error)
			}
		}
	})
	leftWorks := func(t *testing.T, group, m string) {
		left := attempts(t, report, group)
		for _, name := range []string{"goto", "textContent", "click", "evaluate"} {
			if a, ok := left[name]; !ok || !a.OK {
				t.Errorf("%s %s", name, a)
			}
		}
		if a := left["textContent"]; a.OK && string(a.Value) != quote(testenv.TierContent(m)) {
			t.Errorf("the page reads %s", a.Value)
		}
		if a := left["evaluate"]; a.OK && string(a.Value) != quote("changed by a click") {
			t.Errorf("the click did not act: %s", a.Value)
		}
	}
	t.Run("the person's page leaves the blind site", func(t *testing.T) { leftWorks(t, "left", mLeft) })
	// The blind page's commit may come after the client's navigation away
	// was sent: the tab goes blind under it, and its answer still reaches
	// the client.
	t.Run("a page that went blind leaves", func(t *testing.T) { leftWorks(t, "leftAgain", mAgain) })
}

// TestTierPersonNavigatesIntoBlind: the person takes a tab that a raw
// client (with every domain Playwright uses on) and a live-view viewer
// both watch to a blind site. From the first event of the new page on,
// the client is told the tab is blind, its commands are refused at once,
// and nothing of the page reaches it — nor the viewer, whose list shows
// the tab as blind at its origin and which gets no frame of it.
func TestTierPersonNavigatesIntoBlind(t *testing.T) {
	requireEnv(t)
	useTiers(t)
	ctx := testCtx(t, 90*time.Second)
	p := newPerson(ctx, t)
	a := newAttacker(ctx, t)
	target, session := a.personTab(p, siteURL(env.Pages.Main, newMark(), true))
	a.enableAll(session)
	tabID := tabIDOf(t, target)
	v := dialViewer(t, liveViewServer(t))
	vfrom := v.subscribe(tabID)
	v.wait(vfrom, "a frame of the full page", func(m viewerMsg) bool { return m.Type == "frame" && m.Tab == tabID })

	m := newMark()
	mark, from := a.mark(), len(a.c.Messages())
	vmark := len(v.messages())
	p.navigate(target, siteURL(env.Pages.Third, m, true))
	a.accessChanged(from, session, "blind")
	if err := a.refused(session, "Runtime.evaluate", map[string]any{"expression": "document.title", "returnByValue": true}); err != nil && !strings.Contains(err.Error(), "blind") {
		t.Errorf("evaluate on the blind tab: %v", err)
	}
	vnext := v.waitListed(vmark, tabID, "blind")
	// What the relay says of the tab itself (its origin, an empty main
	// world) comes with the change; the tab's own events would come after.
	a.roundTrip()
	next := len(a.c.Messages())
	p.waitTicks(target, 5)
	a.roundTrip()
	if l := leakIn(a.c.Frames(), mark, needles(m)...); l != "" {
		t.Errorf("the client received the blind page:\n\t%s", l)
	}
	for _, msg := range a.c.Messages()[next:] {
		if msg.SessionID == session && msg.Method != "" && !strings.HasPrefix(msg.Method, "CDPRelay.") {
			t.Errorf("an event of the blind tab reached the client: %.300s", msg.Raw)
			break
		}
	}
	v.roundTrip()
	if l := v.leak(vmark, needles(m)...); l != "" {
		t.Errorf("the viewer received the blind page:\n\t%s", l)
	}
	if n := v.frames(vnext, tabID); n != 0 {
		t.Errorf("the viewer got %d frames of the blind tab", n)
	}
	if lt, _ := v.listed(tabID); lt.Access != "blind" || strings.TrimSuffix(lt.URL, "/") != env.Pages.Third || lt.Title != "" {
		t.Errorf("the live view lists the blind tab as %+v", lt)
	}
}

// TestTierReadOnlyTable checks the README's table of what works on a
// read-only site, cell by cell, against real Playwright (tiers.mjs table)
// and Puppeteer (tiers-puppeteer.mjs): each "works" cell must work, each
// "refused" one must leave the page and the site as they were (a client
// may not say so: Playwright's route.continue and Puppeteer's interception
// calls swallow a refusal).
func TestTierReadOnlyTable(t *testing.T) {
	requireEnv(t)
	useTiers(t)
	for _, client := range []struct {
		name, script string
		works        []string
		refused      []string
	}{
		{"playwright", "tiers.mjs",
			[]string{"locator.textContent", "locator.innerText", "locator.getAttribute", "locator.isVisible", "locator.count", "page.content()", "page.title()", "page.screenshot()", "aria snapshots", "page.url()", "network events"},
			[]string{"click", "fill", "type", "press", "check", "selectOption", "setInputFiles", "goto", "reload", "goBack", "setContent", "route.fulfill", "route.continue with changes", "addInitScript", "setViewportSize"}},
		{"puppeteer", "tiers-puppeteer.mjs",
			[]string{"$eval", "$$eval", "page.screenshot()", "page.title()"},
			[]string{"click", "type", "goto", "reload", "setContent", "request.respond", "request.continue with changes", "evaluateOnNewDocument", "setViewport"}},
	} {
		t.Run(client.name, func(t *testing.T) {
			mRO := newMark()
			roSite := siteURL(env.Pages.Other, mRO, true)
			u, _ := url.Parse(roSite)
			before := env.Pages.Hits(env.Pages.Other, u.Path)
			actsBefore := env.Pages.HitsUnder(env.Pages.Other, "/tier/act/")
			tp := newTap(t)
			addresses, _ := json.Marshal(map[string]string{"full": siteURL(env.Pages.Main, newMark(), false), "readOnly": roSite})
			report, _, _ := tierScript(t, tp, client.script, "table", tp.endpoint(), string(addresses))
			works, refused := attempts(t, report, "works"), attempts(t, report, "refused")
			for _, cell := range client.works {
				if a, ok := works[cell]; !ok || !a.OK {
					t.Errorf("README says %q works on a read-only site: %s", cell, a)
				}
			}
			for _, cell := range client.refused {
				a, ok := refused[cell]
				switch {
				case !ok:
					t.Errorf("%s was not tried", cell)
				case a.OK:
					t.Logf("%s: the client reports success (%s); the page and the site say whether it acted", cell, a)
				case !strings.Contains(a.Error, "read-only"):
					t.Logf("%s is refused without the tier's reason: %s", cell, a.Error)
				}
			}
			for cell, a := range attempts(t, report, "depends") {
				t.Logf("depends: %s %s", cell, a)
			}
			var after struct {
				URL, Out, Marker, Name, Pick, API string
				Agree                             any
			}
			json.Unmarshal(report["after"], &after)
			if after.URL != roSite || after.Out != "untouched" || after.Marker != testenv.TierContent(mRO) || after.Name != "" ||
				(client.name == "playwright" && (after.Agree != false || after.Pick != "a")) || strings.Contains(after.API, "forged") {
				t.Errorf("the read-only page changed: %+v", after)
			}
			if n := env.Pages.Hits(env.Pages.Other, u.Path) - before; n != 1 {
				t.Errorf("the read-only page was loaded %d times, want once (a reload, or a navigation back to it)", n)
			}
			if n := env.Pages.HitsUnder(env.Pages.Other, "/tier/act/") - actsBefore; n != 0 {
				t.Errorf("%d requests of an act reached the read-only site", n)
			}
		})
	}
}

// TestTierLiveViewAfterReload: a policy reload (what SIGHUP does) makes a
// tab that a viewer watches blind. The viewer's list shows it as blind at
// its origin and it gets no more frames; and a viewer that subscribes to
// it afterwards gets none either — not even the last frame from before,
// which shows the page that is now blind.
func TestTierLiveViewAfterReload(t *testing.T) {
	requireEnv(t)
	setPolicy(t, denylist.Config{})
	ctx := testCtx(t, 90*time.Second)
	p := newPerson(ctx, t)
	m := newMark()
	target := p.openTab(siteURL(env.Pages.Third, m, true))
	tabID := tabIDOf(t, target)
	base := liveViewServer(t)
	first := dialViewer(t, base)
	from := first.subscribe(tabID)
	first.wait(from, "a frame of the page", func(v viewerMsg) bool { return v.Type == "frame" && v.Tab == tabID })

	mark := len(first.messages())
	useTiers(t)
	first.waitListed(mark, tabID, "blind")
	after := first.roundTrip()
	p.waitTicks(target, 5)
	first.roundTrip()
	if n := first.frames(after, tabID); n != 0 {
		t.Errorf("the viewer got %d frames of the tab after it went blind", n)
	}
	if l := first.leak(mark, needles(m)...); l != "" {
		t.Errorf("the viewer's messages hold the blind page:\n\t%s", l)
	}

	second := dialViewer(t, base)
	second.subscribe(tabID)
	second.roundTrip()
	if n := second.frames(0, tabID); n != 0 {
		t.Errorf("a viewer that subscribed to the blind tab got %d frames of it (the last one from before it went blind)", n)
	}
	if lt, _ := second.listed(tabID); lt.Access != "blind" || strings.TrimSuffix(lt.URL, "/") != env.Pages.Third || lt.Title != "" {
		t.Errorf("the live view lists the blind tab as %+v", lt)
	}
	if l := second.leak(0, needles(m)...); l != "" {
		t.Errorf("the second viewer's messages hold the blind page:\n\t%s", l)
	}
}

// TestTierPersonLeavesBlind: the person takes a blind tab, which a raw
// client and a viewer watch, to a full site. The client is told and may
// use the tab again; neither it nor the viewer learns anything of the
// blind page on the way out — its title above all, which the tab had
// while it was blind.
func TestTierPersonLeavesBlind(t *testing.T) {
	requireEnv(t)
	useTiers(t)
	ctx := testCtx(t, 90*time.Second)
	p := newPerson(ctx, t)
	m := newMark()
	target := p.openTab(siteURL(env.Pages.Third, m, true))
	a := newAttacker(ctx, t)
	session := a.sessionFor(target, 10*time.Second)
	if session == "" {
		t.Fatal("the person's tab was not attached")
	}
	a.enableAll(session)
	tabID := tabIDOf(t, target)
	v := dialViewer(t, liveViewServer(t))
	v.subscribe(tabID)
	p.waitTicks(target, 3)

	full := siteURL(env.Pages.Main, newMark(), false)
	from := len(a.c.Messages())
	p.navigate(target, full)
	a.accessChanged(from, session, "full")
	p.waitComplete(target, full)
	if val, err := a.eval(session, `document.getElementById('change').click(), document.getElementById('out').textContent`); err != nil || val != quote("changed by a click") {
		t.Errorf("the tab on the full site: %s %v", val, err)
	}
	a.roundTrip()
	v.roundTrip()
	if l := leakIn(a.c.Frames(), 0, needles(m)...); l != "" {
		t.Errorf("the client learnt of the blind page:\n\t%s", l)
	}
	if l := v.leak(0, needles(m)...); l != "" {
		t.Errorf("the viewer learnt of the blind page:\n\t%s", l)
	}
}

// TestTierBlindFramesPlaywright: Playwright on a full page with a blind
// frame (tiers.mjs frames). Out of process, the page stays Playwright's to
// read, not to give input to (it could reach the frame), and nothing of
// the frame can be read or done. In process, the tab is as strict as
// its frame: blind. Nothing of the frame reaches Playwright either way.
func TestTierBlindFramesPlaywright(t *testing.T) {
	requireEnv(t)
	useTiers(t)
	tp := newTap(t)
	hops := len(env.Pages.Hops())
	frame := func(parent, frameOrigin string) string {
		return parent + "/tier/frame.html?src=" + url.QueryEscape(frameOrigin+"/tier/hop?live=1")
	}
	addresses, _ := json.Marshal(map[string]string{
		"outOfProcess": frame(env.Pages.Main, env.Pages.Third),
		"inProcess":    frame(tierHost("app"), tierHost("blind")),
	})
	report, out, stdout := tierScript(t, tp, "tiers.mjs", "frames", tp.endpoint(), string(addresses))
	var ns []string
	for _, m := range env.Pages.Hops()[hops:] {
		ns = append(ns, needles(m)...)
	}
	if len(ns) != 4 {
		t.Fatalf("the frames did not load: %d hops", len(ns)/2)
	}
	t.Run("out of process", func(t *testing.T) {
		g := attempts(t, report, "outOfProcess")
		// Input could land in the frame (where the pointer or the focus
		// is): refused on the page while the frame is there (Playwright
		// retries the refusal until its timeout).
		if a := g["page.click"]; a.OK {
			t.Errorf("the full page with a blind frame: click %s", a)
		}
		for _, name := range []string{"frame.evaluate", "frame.textContent", "frame.click"} {
			if a, ok := g[name]; ok && a.OK {
				t.Errorf("the blind frame: %s %s", name, a)
			}
		}
	})
	t.Run("in process", func(t *testing.T) {
		g := attempts(t, report, "inProcess")
		if a := g["page.click"]; a.OK {
			t.Errorf("the page with a blind frame in its process: click %s", a)
		}
		for _, name := range []string{"frame.evaluate", "frame.textContent", "frame.click"} {
			if a, ok := g[name]; ok && a.OK {
				t.Errorf("the blind frame: %s %s", name, a)
			}
		}
	})
	t.Run("nothing of the frames", func(t *testing.T) { noNodeLeaks(t, tp, out, stdout, ns...) })
}
