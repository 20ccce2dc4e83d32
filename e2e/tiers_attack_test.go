package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"image/png"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/denylist"
	"github.com/cdprelay/cdprelay/internal/cdptest"
	"github.com/cdprelay/cdprelay/internal/testenv"
)

// A hostile raw CDP client against the tiers: each attack either works
// (a bug) or is stopped (and stays a guard). What counts is what the
// client got and what the sites and the person's tab show, never an
// error's wording.

type cdpCall struct {
	method string
	params any
}

// blindReads are the commands that would read a page, or act on it.
func blindReads(frameID string) []cdpCall {
	return []cdpCall{
		{"Runtime.evaluate", map[string]any{"expression": "document.title + document.body.innerText", "returnByValue": true}},
		{"Runtime.evaluate", map[string]any{"expression": "document.title", "returnByValue": true, "contextId": 1}},
		{"DOM.getDocument", map[string]any{"depth": -1, "pierce": true}},
		{"DOM.getOuterHTML", map[string]any{"backendNodeId": 1}},
		{"DOM.querySelector", map[string]any{"nodeId": 1, "selector": "#marker"}},
		{"Page.captureScreenshot", nil},
		{"Page.printToPDF", nil},
		{"Page.printToPDF", map[string]any{"transferMode": "ReturnAsStream"}},
		{"Page.captureSnapshot", nil},
		{"Page.getNavigationHistory", nil},
		{"Page.getResourceTree", nil},
		{"Page.getResourceContent", map[string]any{"frameId": frameID, "url": "x"}},
		{"Page.startScreencast", nil},
		{"Accessibility.getFullAXTree", nil},
		{"DOMSnapshot.captureSnapshot", map[string]any{"computedStyles": []string{}}},
		{"Page.createIsolatedWorld", map[string]any{"frameId": frameID, "worldName": "attack", "grantUniveralAccess": true}},
		{"Input.dispatchMouseEvent", map[string]any{"type": "mousePressed", "x": 50, "y": 50, "button": "left", "clickCount": 1}},
		{"Input.insertText", map[string]any{"text": "typed by automation"}},
		{"Page.reload", nil},
		{"Emulation.setDeviceMetricsOverride", map[string]any{"width": 400, "height": 300, "deviceScaleFactor": 1, "mobile": false}},
	}
}

// TestTierAttackBlindTab: a blind tab the person has open, from every
// session a client can get on it — its own, a further one
// (Target.attachToTarget), a nested command (Target.sendMessageToTarget),
// a non-flat attach, and the page endpoint /devtools/page/<id> — and from
// discovery. Every read and act is refused, discovery shows the origin
// only, and no byte of the page reaches the client.
func TestTierAttackBlindTab(t *testing.T) {
	requireEnv(t)
	useTiers(t)
	ctx := testCtx(t, 2*time.Minute)
	p := newPerson(ctx, t)
	a := newAttacker(ctx, t)
	m := newMark()
	target, session := a.personTab(p, siteURL(env.Pages.Third, m, true))
	// How the tab came to be blind is TestTierPersonNavigatesIntoBlind's
	// business: the attacks start once it is.
	a.roundTrip()
	mark := a.mark()
	a.enableAll(session)

	res, err := a.call("", "Target.attachToTarget", map[string]any{"targetId": target, "flatten": true})
	if err != nil {
		t.Fatalf("a further session on the blind tab: %v", err)
	}
	var further struct{ SessionID string }
	json.Unmarshal(res, &further)
	for _, s := range []string{session, further.SessionID} {
		for _, c := range blindReads(target) {
			a.refused(s, c.method, c.params)
		}
	}
	nested, _ := json.Marshal(map[string]any{"id": 1, "method": "Runtime.evaluate", "params": map[string]any{"expression": "document.title", "returnByValue": true}})
	a.refused("", "Target.sendMessageToTarget", map[string]any{"sessionId": session, "message": string(nested)})
	a.refused("", "Target.attachToTarget", map[string]any{"targetId": target, "flatten": false})

	// What the client may see of it: the origin.
	if res, err := a.call(session, "Page.getFrameTree", nil); err != nil || !strings.Contains(string(res), env.Pages.Third) {
		t.Errorf("Page.getFrameTree of the blind tab: %s %v", res, err)
	}
	res, err = a.call("", "Target.getTargetInfo", map[string]any{"targetId": target})
	var info struct{ TargetInfo struct{ URL, Title string } }
	json.Unmarshal(res, &info)
	if err != nil || strings.TrimSuffix(info.TargetInfo.URL, "/") != env.Pages.Third || info.TargetInfo.Title != "" {
		t.Errorf("Target.getTargetInfo of the blind tab: %s %v", res, err)
	}
	list := get(t, "http://"+env.Addr+"/json/list")
	if l := leakIn([][]byte{list}, 0, needles(m)...); l != "" || !strings.Contains(string(list), env.Pages.Third) {
		t.Errorf("/json/list shows the blind tab as:\n\t%s", l)
	}
	p.waitTicks(target, 5)
	a.roundTrip()
	if l := leakIn(a.c.Frames(), mark, needles(m)...); l != "" {
		t.Errorf("the client received the blind page:\n\t%s", l)
	}
	if w := p.evalMay(target, "innerWidth"); w == "400" {
		t.Errorf("the client's emulation reached the blind page: innerWidth %s", w)
	}

	// The page endpoint: one client per instance, so this one alone.
	a.c.Close()
	waitNoClient(t)
	pc, err := cdptest.Dial(ctx, "ws://"+env.Addr+"/devtools/page/"+target, nil)
	if err != nil {
		t.Fatalf("the blind tab's page endpoint: %v", err)
	}
	defer pc.Close()
	pa := &attacker{t: t, ctx: ctx, c: pc}
	pa.enableAll("")
	for _, c := range blindReads(target) {
		pa.refused("", c.method, c.params)
	}
	p.waitTicks(target, 3)
	pa.call("", "Page.getFrameTree", nil)
	if l := leakIn(pc.Frames(), 0, needles(m)...); l != "" {
		t.Errorf("the page endpoint's client received the blind page:\n\t%s", l)
	}
}

// waitNoClient waits until the relay has seen the client go.
func waitNoClient(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for env.Relay.Default().Status().Client {
		if time.Now().After(deadline) {
			t.Fatal("the client is still connected")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestTierAttackWhatItLearntBefore: a client on a tab that the policy
// then makes blind (the reload a SIGHUP makes) keeps what it learnt while
// the tab was full — a remote object, a node, the ids of requests whose
// bodies are the site's, a stream — and a command still running. None of
// it reads the page once it is blind, and the running command's reply is
// withheld.
func TestTierAttackWhatItLearntBefore(t *testing.T) {
	requireEnv(t)
	setPolicy(t, denylist.Config{})
	ctx := testCtx(t, 90*time.Second)
	p := newPerson(ctx, t)
	a := newAttacker(ctx, t)
	m := newMark()
	target, session := a.personTab(p, siteURL(env.Pages.Third, m, true))
	a.enableAll(session)

	res, err := a.call(session, "Runtime.evaluate", map[string]any{"expression": "document.body"})
	if err != nil {
		t.Fatal(err)
	}
	var body struct{ Result struct{ ObjectID string } }
	json.Unmarshal(res, &body)
	res, err = a.call(session, "DOM.getDocument", map[string]any{"depth": -1})
	if err != nil {
		t.Fatal(err)
	}
	var doc struct{ Root struct{ NodeID int64 } }
	json.Unmarshal(res, &doc)
	// A stream: a PDF of the page, which the relay refuses for good once a
	// secret has been typed in its instance (as the secrets' tests do in
	// this one); then no stream is learnt here.
	var pdf struct{ Stream string }
	res, err = a.call(session, "Page.printToPDF", map[string]any{"transferMode": "ReturnAsStream"})
	switch {
	case err != nil && strings.Contains(err.Error(), "typed secret"):
		t.Logf("no stream to learn: %v", err)
	case err != nil:
		t.Fatal(err)
	default:
		json.Unmarshal(res, &pdf)
	}
	// A request of the site's API, whose body is the page's content.
	apiCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	apiRequests := map[string]bool{}
	api, _, err := a.c.WaitMessage(apiCtx, 0, func(msg cdptest.Message) bool {
		if msg.SessionID != session {
			return false
		}
		if msg.Method == "Network.requestWillBeSent" && strings.Contains(string(msg.Params), "/tier/api") {
			apiRequests[requestID(msg.Params)] = true
		}
		return msg.Method == "Network.loadingFinished" && apiRequests[requestID(msg.Params)]
	})
	cancel()
	if err != nil {
		t.Fatalf("no API request of the page: %v", err)
	}
	apiID := requestID(api.Params)
	if res, err := a.call(session, "Network.getResponseBody", map[string]any{"requestId": apiID}); err != nil || !strings.Contains(string(res), testenv.TierContent(m)) {
		t.Fatalf("the API's body while the tab is full: %s %v", res, err)
	}
	// Still running when the tab goes blind: a read that answers in 1 s.
	running := a.sendRaw(session, "Runtime.evaluate", `{"expression":"new Promise((r) => setTimeout(() => r(document.title + ' ' + document.body.innerText), 1000))","awaitPromise":true,"returnByValue":true}`)

	from := len(a.c.Messages())
	useTiers(t)
	a.accessChanged(from, session, "blind")
	a.roundTrip()
	mark := a.mark()
	for _, c := range []cdpCall{
		{"Runtime.callFunctionOn", map[string]any{"objectId": body.Result.ObjectID, "functionDeclaration": "function() { return this.innerText; }", "returnByValue": true}},
		{"Runtime.getProperties", map[string]any{"objectId": body.Result.ObjectID, "ownProperties": true}},
		{"DOM.resolveNode", map[string]any{"nodeId": doc.Root.NodeID}},
		{"DOM.getOuterHTML", map[string]any{"nodeId": doc.Root.NodeID}},
		{"DOM.requestChildNodes", map[string]any{"nodeId": doc.Root.NodeID, "depth": -1}},
		{"Network.getResponseBody", map[string]any{"requestId": apiID}},
		{"Network.searchInResponseBody", map[string]any{"requestId": apiID, "query": "content"}},
		{"IO.read", map[string]any{"handle": pdf.Stream}},
		{"IO.resolveBlob", map[string]any{"objectId": body.Result.ObjectID}},
	} {
		if c.method == "IO.read" && pdf.Stream == "" {
			continue
		}
		a.refused(session, c.method, c.params)
	}
	replyCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	reply, _, err := a.c.WaitReply(replyCtx, running)
	if err != nil {
		t.Fatalf("the running command got no reply: %v", err)
	}
	if reply.Error == nil && relayThrow(reply.Result) == nil {
		t.Errorf("the command that was running when the tab went blind was answered: %.300s", reply.Raw)
	}
	p.waitTicks(target, 5)
	a.roundTrip()
	if l := leakIn(a.c.Frames(), mark, needles(m)...); l != "" {
		t.Errorf("the client received the blind page:\n\t%s", l)
	}
}

// since counts the requests origin serves for path from now on.
func since(origin, path string) func() int {
	before := env.Pages.Hits(origin, path)
	return func() int { return env.Pages.Hits(origin, path) - before }
}

func requestID(params json.RawMessage) string {
	var ev struct{ RequestID string }
	json.Unmarshal(params, &ev)
	return ev.RequestID
}

// waitComplete waits, as the person, until the tab's document is one at
// prefix and has loaded.
func (p *person) waitComplete(targetID, prefix string) {
	p.t.Helper()
	p.waitFor(targetID, `location.href.startsWith(`+quote(prefix)+`) && document.readyState`, `"complete"`)
}

// TestTierAttackInitScript: a script the client adds to new documents
// while its tab is on a full site runs, in the page's own world, in every
// document the tab shows later. Taken to a read-only site (a navigation
// the client may make) it acts there with the person's session; taken to
// a blind one (by the page itself) it sends the page out.
func TestTierAttackInitScript(t *testing.T) {
	requireEnv(t)
	useTiers(t)
	ctx := testCtx(t, 90*time.Second)
	p := newPerson(ctx, t)
	a := newAttacker(ctx, t)
	source := `addEventListener('DOMContentLoaded', () => {
  const post = (to, body) => { const x = new XMLHttpRequest(); x.open('POST', to, false); x.send(body); };
  if (location.host === ` + quote(host(env.Pages.Other)) + `) post('/tier/act/init-script', 'acted on the read-only site');
  if (location.host === ` + quote(host(env.Pages.Third)) + `) post(` + quote(env.Pages.Main+"/tier/act/init-script") + `, document.title + ' ' + document.body.innerText);
});`

	t.Run("read-only", func(t *testing.T) {
		target, s := a.newTab(siteURL(env.Pages.Main, newMark(), false))
		if _, err := a.call(s, "Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": source}); err != nil {
			t.Fatal(err)
		}
		ro := siteURL(env.Pages.Other, newMark(), false)
		acted := since(env.Pages.Other, "/tier/act/init-script")
		if _, err := a.call(s, "Page.navigate", map[string]any{"url": ro}); err != nil {
			t.Fatalf("navigating to the read-only site: %v", err)
		}
		p.waitComplete(target, ro)
		if n := acted(); n != 0 {
			t.Errorf("a script the client added on a full site acted on the read-only site (%d requests with the person's session)", n)
		}
	})
	t.Run("blind", func(t *testing.T) {
		target, s := a.newTab(siteURL(env.Pages.Main, newMark(), false))
		if _, err := a.call(s, "Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": source}); err != nil {
			t.Fatal(err)
		}
		m := newMark()
		blind := siteURL(env.Pages.Third, m, false)
		from := len(a.c.Messages())
		// The reply may be withheld: the tab went blind while it ran.
		if _, err := a.eval(s, "location.href = "+quote(blind)); err != nil && !strings.Contains(err.Error(), "went to a page automation may not see") {
			t.Fatalf("the page's own navigation: %v", err)
		}
		a.accessChanged(from, s, "blind")
		p.waitComplete(target, blind)
		// That first document races the script's removal, which the
		// relay sends at the first event of the page's own navigation
		// (the README says so); every document after it is without it.
		if env.Pages.Received(testenv.TierContent(m)) {
			t.Logf("the script ran on the first blind document: the race the README names")
		}
		m2 := newMark()
		next := siteURL(env.Pages.Third, m2, false)
		p.evalMay(target, "location.href = "+quote(next))
		p.waitComplete(target, next) // the script would have posted at DOMContentLoaded, before
		if env.Pages.Received(testenv.TierContent(m2)) {
			t.Errorf("a script the client added on a full site ran on a later blind page and sent its content out")
		}
	})
}

// pausedOrBlind waits for the first of: a Fetch.requestPaused on session
// for a request whose URL holds path, or the session's change to access
// want. It returns the pause, or nil.
func (a *attacker) pausedOrBlind(from int, session, path, want string) *cdptest.Message {
	a.t.Helper()
	ctx, cancel := context.WithTimeout(a.ctx, 15*time.Second)
	defer cancel()
	m, _, err := a.c.WaitMessage(ctx, from, func(m cdptest.Message) bool {
		if m.SessionID != session {
			return false
		}
		return (m.Method == "Fetch.requestPaused" && strings.Contains(string(m.Params), path)) ||
			(m.Method == "CDPRelay.accessChanged" && strings.Contains(string(m.Params), `"access":"`+want+`"`))
	})
	if err != nil {
		a.t.Fatalf("neither a pause nor a change to %s: %v", want, err)
	}
	if m.Method == "Fetch.requestPaused" {
		return &m
	}
	return nil
}

// TestTierAttackInterceptNavigation: the client intercepts (Fetch) the
// request of its full tab's navigation into a blind or read-only site.
// The request is the site's, not the full page's: the client must not be
// shown it paused, read the blind page's body from it, or answer it with
// a page of its own making, which would run on the site's origin with
// the person's session.
func TestTierAttackInterceptNavigation(t *testing.T) {
	requireEnv(t)
	useTiers(t)
	ctx := testCtx(t, 2*time.Minute)
	p := newPerson(ctx, t)
	a := newAttacker(ctx, t)
	forged := func(origin string) string {
		return `<!doctype html><title>forged</title><script>const x = new XMLHttpRequest(); x.open('POST', '/tier/act/forged', false); x.send('a page the client made, on ` + origin + `');</script>`
	}
	fulfil := func(t *testing.T, s string, paused *cdptest.Message, origin string) {
		t.Helper()
		body, _ := json.Marshal([]byte(forged(origin)))
		_, err := a.call(s, "Fetch.fulfillRequest", map[string]any{"requestId": requestID(paused.Params), "responseCode": 200,
			"responseHeaders": []map[string]string{{"name": "Content-Type", "value": "text/html"}}, "body": json.RawMessage(body)})
		if err == nil {
			t.Errorf("the client answered the site's request with a page of its own")
		}
	}

	t.Run("blind, the response's body", func(t *testing.T) {
		_, s := a.newTab(siteURL(env.Pages.Main, newMark(), false))
		if _, err := a.call(s, "Fetch.enable", map[string]any{"patterns": []map[string]string{{"urlPattern": "*", "requestStage": "Response", "resourceType": "Document"}}}); err != nil {
			t.Fatal(err)
		}
		m := newMark()
		from := len(a.c.Messages())
		a.eval(s, "location.href = "+quote(siteURL(env.Pages.Third, m, false)))
		paused := a.pausedOrBlind(from, s, m, "blind")
		if paused == nil {
			return
		}
		t.Errorf("the client was shown the blind site's request paused: %.300s", paused.Params)
		res, err := a.call(s, "Fetch.getResponseBody", map[string]any{"requestId": requestID(paused.Params)})
		var b struct {
			Body          string
			Base64Encoded bool
		}
		json.Unmarshal(res, &b)
		if b.Base64Encoded {
			d, _ := base64.StdEncoding.DecodeString(b.Body)
			b.Body = string(d)
		}
		if l := leakIn([][]byte{[]byte(b.Body)}, 0, needles(m)...); err == nil && l != "" {
			t.Errorf("the client read the blind page's body from the paused response:\n\t%s", l)
		}
		a.call(s, "Fetch.continueRequest", map[string]any{"requestId": requestID(paused.Params)})
	})
	t.Run("blind, a page of the client's", func(t *testing.T) {
		target, s := a.newTab(siteURL(env.Pages.Main, newMark(), false))
		if _, err := a.call(s, "Fetch.enable", map[string]any{"patterns": []map[string]string{{"urlPattern": "*", "resourceType": "Document"}}}); err != nil {
			t.Fatal(err)
		}
		m := newMark()
		blind := siteURL(env.Pages.Third, m, false)
		from := len(a.c.Messages())
		acted := since(env.Pages.Third, "/tier/act/forged")
		a.eval(s, "location.href = "+quote(blind))
		paused := a.pausedOrBlind(from, s, m, "blind")
		if paused == nil {
			return
		}
		t.Errorf("the client was shown the blind site's request paused: %.300s", paused.Params)
		fulfil(t, s, paused, env.Pages.Third)
		p.waitComplete(target, blind)
		if n := acted(); n != 0 {
			t.Errorf("a page the client made ran on the blind site's origin (%d requests with the person's session)", n)
		}
	})
	t.Run("read-only, a page of the client's", func(t *testing.T) {
		target, s := a.newTab(siteURL(env.Pages.Main, newMark(), false))
		if _, err := a.call(s, "Fetch.enable", map[string]any{"patterns": []map[string]string{{"urlPattern": "*", "resourceType": "Document"}}}); err != nil {
			t.Fatal(err)
		}
		m := newMark()
		ro := siteURL(env.Pages.Other, m, false)
		from := len(a.c.Messages())
		acted := since(env.Pages.Other, "/tier/act/forged")
		// Chrome answers the navigation once the request is answered.
		a.sendRaw(s, "Page.navigate", `{"url":`+quote(ro)+`}`)
		paused := a.pausedOrBlind(from, s, m, "read-only")
		if paused == nil {
			return
		}
		fulfil(t, s, paused, env.Pages.Other)
		p.waitComplete(target, ro)
		if n := acted(); n != 0 {
			t.Errorf("a page the client made ran on the read-only site's origin (%d requests with the person's session)", n)
		}
	})
}

// TestTierAttackHistory: a tab of the client's goes from a full site to a
// blind one (by its own link) and on to a full one. Its history must not
// tell the client where the blind page was or what it was called, and the
// client may not go back to it; the page going back by itself hides the
// tab again.
func TestTierAttackHistory(t *testing.T) {
	requireEnv(t)
	useTiers(t)
	ctx := testCtx(t, 90*time.Second)
	p := newPerson(ctx, t)
	a := newAttacker(ctx, t)
	target, s := a.newTab(siteURL(env.Pages.Main, newMark(), false))
	m := newMark()
	blind := siteURL(env.Pages.Third, m, false)
	from := len(a.c.Messages())
	a.eval(s, "location.href = "+quote(blind))
	a.accessChanged(from, s, "blind")
	p.waitComplete(target, blind)
	a.roundTrip()
	mark := a.mark()
	from = len(a.c.Messages())
	if _, err := a.call(s, "Page.navigate", map[string]any{"url": siteURL(env.Pages.Main, newMark(), false)}); err != nil {
		t.Fatalf("leaving the blind site: %v", err)
	}
	a.accessChanged(from, s, "full")

	// Asked at the instant the page commits, Chrome may answer that the
	// page is not active yet: ask again.
	res, err := a.call(s, "Page.getNavigationHistory", nil)
	for i := 0; i < 20 && err != nil && strings.Contains(err.Error(), "Not attached to an active page"); i++ {
		time.Sleep(50 * time.Millisecond)
		res, err = a.call(s, "Page.getNavigationHistory", nil)
	}
	if err != nil {
		t.Fatalf("Page.getNavigationHistory: %v", err)
	}
	if l := leakIn([][]byte{res}, 0, needles(m)...); l != "" {
		t.Errorf("the tab's history tells the client of the blind page:\n\t%s", l)
	}
	var h struct {
		Entries []struct {
			ID  int64
			URL string
		}
	}
	json.Unmarshal(res, &h)
	for _, e := range h.Entries {
		if strings.HasPrefix(e.URL, env.Pages.Third) {
			a.refused(s, "Page.navigateToHistoryEntry", map[string]any{"entryId": e.ID})
		}
	}
	from = len(a.c.Messages())
	a.eval(s, "history.back()")
	a.accessChanged(from, s, "blind")
	p.waitComplete(target, blind)
	a.roundTrip()
	if l := leakIn(a.c.Frames(), mark, needles(m)...); l != "" {
		t.Errorf("the client received the blind page:\n\t%s", l)
	}
}

// isolatedWorld creates a world of the client's own in the tab's main
// frame and returns its context id. Runtime is on first, as Playwright and
// Puppeteer have it, so that the relay knows the world.
func (a *attacker) isolatedWorld(session, frameID string) int64 {
	a.t.Helper()
	if _, err := a.call(session, "Runtime.enable", nil); err != nil {
		a.t.Fatal(err)
	}
	res, err := a.call(session, "Page.createIsolatedWorld", map[string]any{"frameId": frameID, "worldName": "attack"})
	if err != nil {
		a.t.Fatalf("Page.createIsolatedWorld: %v", err)
	}
	var w struct{ ExecutionContextID int64 }
	json.Unmarshal(res, &w)
	return w.ExecutionContextID
}

// evalIn evaluates expr in context id and returns its value, or the
// exception's text.
func (a *attacker) evalIn(session string, id int64, expr string) string {
	res, err := a.call(session, "Runtime.evaluate", map[string]any{"expression": expr, "contextId": id, "returnByValue": true, "awaitPromise": true})
	if err != nil {
		return "error: " + err.Error()
	}
	v, err := evalValue(res)
	if err != nil {
		return "error: " + err.Error()
	}
	return v
}

// navigationRequested reports whether the page asked to navigate on
// session (Page.frameRequestedNavigation, which Chrome sends from the task
// that asked) among the messages from index from on.
func (a *attacker) navigationRequested(from int, session string) bool {
	for _, m := range a.c.Messages()[from:] {
		if m.SessionID == session && (m.Method == "Page.frameRequestedNavigation" || m.Method == "Page.frameStartedNavigating") {
			return true
		}
	}
	return false
}

// TestTierAttackReadOnlyWorlds: script on a read-only tab. In the page's
// own world V8's side-effect check holds whatever the params say; in an
// isolated world the relay's guard refuses the common ways to act. The
// subtests try to get around each: the guard's own exception for a tool's
// events, a fresh realm from a same-origin frame, a form sent by script, a
// location assignment (which the README says the guard cannot stop), and
// the DOM and Input domains directly or nested.
func TestTierAttackReadOnlyWorlds(t *testing.T) {
	requireEnv(t)
	useTiers(t)
	ctx := testCtx(t, 2*time.Minute)
	p := newPerson(ctx, t)
	a := newAttacker(ctx, t)
	clickOut := `document.getElementById('out').textContent`

	t.Run("the page's own world", func(t *testing.T) {
		target, s := a.newTab(siteURL(env.Pages.Other, newMark(), false))
		act := `document.getElementById('change').click(); ` + clickOut
		for _, params := range []string{
			`{"expression":` + quote(act) + `,"returnByValue":true}`,
			`{"expression":` + quote(act) + `,"returnByValue":true,"throwOnSideEffect":false}`,
			`{"expression":` + quote(act) + `,"returnByValue":true,"throwOnSid\u0065Effect":false}`,
			`{"expression":` + quote(act) + `,"returnByValue":true,"throwOnSideEffect":false,"throwOnSideEffect":false}`,
			`{"expression":` + quote(act) + `,"returnByValue":true,"replMode":true,"allowUnsafeEvalBlockedByCSP":true,"userGesture":true}`,
		} {
			res, err := a.callRaw(s, "Runtime.evaluate", params)
			if v, _ := evalValue(res); err == nil && v == quote("changed by a click") {
				t.Errorf("Runtime.evaluate %s acted on the read-only page", params)
			}
		}
		res, err := a.call(s, "DOM.getDocument", nil)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct{ Root struct{ NodeID int64 } }
		json.Unmarshal(res, &doc)
		res, _ = a.call(s, "DOM.querySelector", map[string]any{"nodeId": doc.Root.NodeID, "selector": "#change"})
		var q struct{ NodeID int64 }
		json.Unmarshal(res, &q)
		res, _ = a.call(s, "DOM.resolveNode", map[string]any{"nodeId": q.NodeID})
		var obj struct{ Object struct{ ObjectID string } }
		json.Unmarshal(res, &obj)
		res, err = a.call(s, "Runtime.callFunctionOn", map[string]any{"objectId": obj.Object.ObjectID, "functionDeclaration": "function() { this.click(); return " + clickOut + "; }", "returnByValue": true, "throwOnSideEffect": false})
		if v, _ := evalValue(res); err == nil && v == quote("changed by a click") {
			t.Errorf("Runtime.callFunctionOn on a node of the page's own world acted on the read-only page")
		}
		for _, c := range []cdpCall{
			{"DOM.setAttributeValue", map[string]any{"nodeId": q.NodeID, "name": "onclick", "value": "alert(1)"}},
			{"DOM.setOuterHTML", map[string]any{"nodeId": q.NodeID, "outerHTML": "<p>replaced</p>"}},
			{"DOM.removeNode", map[string]any{"nodeId": q.NodeID}},
			{"DOM.focus", map[string]any{"nodeId": q.NodeID}},
			{"DOM.setFileInputFiles", map[string]any{"nodeId": q.NodeID, "files": []string{"/etc/hostname"}}},
			{"Input.dispatchKeyEvent", map[string]any{"type": "keyDown", "key": "Enter"}},
			{"Runtime.addBinding", map[string]any{"name": "attack"}},
			{"Runtime.compileScript", map[string]any{"expression": act, "sourceURL": "", "persistScript": true}},
		} {
			a.refused(s, c.method, c.params)
		}
		nested, _ := json.Marshal(map[string]any{"id": 1, "method": "Input.dispatchMouseEvent", "params": map[string]any{"type": "mousePressed", "x": 50, "y": 50, "button": "left", "clickCount": 1}})
		a.refused("", "Target.sendMessageToTarget", map[string]any{"sessionId": s, "message": string(nested)})
		if got := p.evalMay(target, clickOut); got != quote("untouched") {
			t.Errorf("the read-only page reads %s", got)
		}
	})

	t.Run("the guard's exception for a tool's events", func(t *testing.T) {
		target, s := a.newTab(siteURL(env.Pages.Other, newMark(), false))
		w := a.isolatedWorld(s, target)
		v := a.evalIn(s, w, `String.prototype.startsWith = () => true;
globalThis.CustomEvent = Event;
document.getElementById('change').dispatchEvent(new MouseEvent('click', { bubbles: true }));
`+clickOut)
		if got := p.evalMay(target, clickOut); got != quote("untouched") {
			t.Errorf("a click dispatched from an isolated world acted on the read-only page (%s; the page reads %s)", v, got)
		}
	})

	t.Run("a fresh realm from a same-origin frame", func(t *testing.T) {
		target, s := a.newTab(env.Pages.Other + "/tier/frame.html?src=" + url.QueryEscape("/tier/site.html?m="+newMark()))
		p.waitFor(target, `document.getElementById('f').contentDocument.readyState`, `"complete"`)
		w := a.isolatedWorld(s, target)
		v := a.evalIn(s, w, `const realm = document.getElementById('f').contentWindow;
realm.HTMLElement.prototype.click.call(document.getElementById('pchange'));
document.getElementById('pout').textContent`)
		if got := p.evalMay(target, `document.getElementById('pout').textContent`); got != quote("untouched") {
			t.Errorf("a click with a frame's own click() acted on the read-only page (%s; the page reads %s)", v, got)
		}
	})

	t.Run("a form sent by script", func(t *testing.T) {
		target, s := a.newTab(siteURL(env.Pages.Other, newMark(), false))
		w := a.isolatedWorld(s, target)
		a.call(s, "Page.enable", nil)
		from := len(a.c.Messages())
		acted := since(env.Pages.Other, "/tier/act/submit")
		v := a.evalIn(s, w, `document.getElementById('form').submit(); 'sent'`)
		if a.navigationRequested(from, s) {
			p.waitComplete(target, env.Pages.Other+"/tier/act/submit")
		}
		if n := acted(); n != 0 {
			t.Errorf("form.submit() from an isolated world sent the read-only site's form (%s)", v)
		}
	})

	// A location assignment is not held: no script can redefine location
	// (the README's known gap).
}

// TestTierAttackWindowOpen: a full tab opens the blind site. Cross-site,
// the new tab is blind like any other, and nothing of it reaches the
// client. Same-site (app.tiers.localhost opening blind.tiers.localhost),
// the new tab shares the opener's process, and script in the opener can
// hold its window: the same-origin policy keeps the page's own world out
// of it, but an isolated world the client creates with universal access
// is not held to it.
func TestTierAttackWindowOpen(t *testing.T) {
	requireEnv(t)
	useTiers(t)
	ctx := testCtx(t, 2*time.Minute)
	p := newPerson(ctx, t)
	a := newAttacker(ctx, t)

	t.Run("cross-site", func(t *testing.T) {
		_, s := a.newTab(siteURL(env.Pages.Main, newMark(), false))
		// Through a hop to an address only the blind site knows: the
		// opener's own events name what it opened.
		hops := len(env.Pages.Hops())
		a.roundTrip()
		mark, from := a.mark(), len(a.c.Messages())
		if _, err := a.eval(s, "window.open("+quote(env.Pages.Third+"/tier/hop?live=1")+"), 'opened'"); err != nil {
			t.Fatalf("window.open: %v", err)
		}
		ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		defer cancel()
		att, _, err := a.c.WaitMessage(ctx, from, func(m cdptest.Message) bool {
			return m.Method == "Target.attachedToTarget" && targetOf(m.Params) != "" && m.SessionID == ""
		})
		if err != nil {
			t.Fatalf("the new tab was not attached: %v", err)
		}
		popup := targetOf(att.Params)
		var ev struct{ SessionID string }
		json.Unmarshal(att.Params, &ev)
		p.waitComplete(popup, env.Pages.Third+"/tier/site.html")
		m := env.Pages.Hops()[hops]
		p.waitTicks(popup, 5)
		a.refused(ev.SessionID, "Runtime.evaluate", map[string]any{"expression": "document.title", "returnByValue": true})
		a.roundTrip()
		if l := leakIn(a.c.Frames(), mark, needles(m)...); l != "" {
			t.Errorf("the client received the blind page it opened:\n\t%s", l)
		}
	})

	t.Run("same-site", func(t *testing.T) {
		target, s := a.newTab(siteURL(tierHost("app"), newMark(), false))
		m := newMark()
		blind := siteURL(tierHost("blind"), m, false)
		read := `(async () => {
  const w = window.open(` + quote(blind) + `);
  let last = '';
  // The opener is a background tab now: its timers run at most once a second.
  for (const end = Date.now() + 3000; Date.now() < end;) {
    await new Promise((r) => setTimeout(r, 100));
    try {
      if (w.location.pathname === '/tier/site.html' && w.document.readyState === 'complete') return 'read: ' + w.document.title + ' | ' + w.document.body.innerText;
    } catch (e) { last = String(e); }
  }
  return 'never read it: ' + last;
})()`
		// The page's own world: the same-origin policy holds.
		res, err := a.call(s, "Runtime.evaluate", map[string]any{"expression": read, "awaitPromise": true, "returnByValue": true, "userGesture": true})
		v, _ := evalValue(res)
		if l := leakIn([][]byte{[]byte(v)}, 0, needles(m)...); err == nil && l != "" {
			t.Errorf("the opener's own world read the blind page: %s", v)
		}
		t.Logf("from the page's own world: %.200s %v", v, err)
		// A world with universal access.
		a.call(s, "Runtime.enable", nil)
		res, err = a.call(s, "Page.createIsolatedWorld", map[string]any{"frameId": target, "worldName": "universal", "grantUniveralAccess": true})
		if err != nil {
			t.Fatalf("Page.createIsolatedWorld: %v", err)
		}
		var w struct{ ExecutionContextID int64 }
		json.Unmarshal(res, &w)
		m2 := newMark()
		res, err = a.call(s, "Runtime.evaluate", map[string]any{"expression": strings.Replace(read, m, m2, 1), "contextId": w.ExecutionContextID, "awaitPromise": true, "returnByValue": true, "userGesture": true})
		v, _ = evalValue(res)
		if l := leakIn([][]byte{[]byte(v)}, 0, needles(m2)...); err == nil && l != "" {
			t.Errorf("a world with universal access in the opener read the blind page it opened: %.200s", v)
		}
		t.Logf("from a world with universal access: %.200s %v", v, err)
		// And without a window: the blind site fetched from the full page.
		res, err = a.call(s, "Runtime.evaluate", map[string]any{"expression": `fetch(` + quote(siteURL(tierHost("blind"), m2, false)) + `, { credentials: 'include' }).then((r) => r.text(), (e) => String(e))`, "contextId": w.ExecutionContextID, "awaitPromise": true, "returnByValue": true})
		v, _ = evalValue(res)
		if l := leakIn([][]byte{[]byte(v)}, 0, testenv.TierContent(m2)); err == nil && l != "" {
			t.Errorf("a world with universal access in a full page fetched the blind site's page: %.120s", v)
		}
		t.Logf("a fetch from a world with universal access: %.200s %v", v, err)
	})
}

// waitFrameTicks waits, as the person, until the frame of targetID at
// origin (cross-origin, in the page's process) has loaded the tier site
// and it has ticked n times since.
func (p *person) waitFrameTicks(targetID, origin string, n int) {
	p.t.Helper()
	s := p.attach(targetID)
	defer p.call("", "Target.detachFromTarget", map[string]any{"sessionId": s})
	deadline := time.Now().Add(15 * time.Second)
	start := -1
	for {
		got := -1
		res, _ := p.call(s, "Page.getFrameTree", nil)
		var tree struct {
			FrameTree struct {
				ChildFrames []struct{ Frame struct{ ID, URL string } }
			}
		}
		json.Unmarshal(res, &tree)
		for _, c := range tree.FrameTree.ChildFrames {
			if !strings.HasPrefix(c.Frame.URL, origin+"/tier/site.html") {
				continue
			}
			// A world of the person's own in the frame: their view of it.
			res, err := p.call(s, "Page.createIsolatedWorld", map[string]any{"frameId": c.Frame.ID, "worldName": "person"})
			var w struct{ ExecutionContextID int64 }
			if err == nil && json.Unmarshal(res, &w) == nil {
				res, err = p.call(s, "Runtime.evaluate", map[string]any{"expression": `document.readyState === 'complete' ? Number(document.getElementById('tick').textContent.replace(/.* tick /, '')) || 0 : -1`, "contextId": w.ExecutionContextID, "returnByValue": true})
				if v, err2 := evalValue(res); err == nil && err2 == nil {
					json.Unmarshal([]byte(v), &got)
				}
			}
		}
		if got >= 0 && start < 0 {
			start = got
		}
		if start >= 0 && got >= start+n {
			return
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("the frame at %s did not tick (%d, then %d)", origin, start, got)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestTierBlindFrames: a blind site in a frame of a full page. Out of
// process (cross-site), the frame is never announced and nothing of it
// reaches the client, and the page stays full. In process (a same-site
// frame the page's own session reaches into), the whole tab is as strict
// as the frame — blind — until the frame goes. The frame comes through a
// hop to an address only the blind site knows, so that its address is as
// much the frame's as its content.
func TestTierBlindFrames(t *testing.T) {
	requireEnv(t)
	useTiers(t)
	ctx := testCtx(t, 2*time.Minute)
	p := newPerson(ctx, t)
	a := newAttacker(ctx, t)
	// Like Playwright, the client lets every frame that waits for it go
	// on (Runtime.runIfWaitingForDebugger on its session).
	go func() {
		for i := 0; ; {
			m, n, err := a.c.WaitMessage(ctx, i, func(m cdptest.Message) bool {
				return m.Method == "Target.attachedToTarget" && strings.Contains(string(m.Params), `"waitingForDebugger":true`)
			})
			if err != nil {
				return
			}
			i = n + 1
			var ev struct{ SessionID string }
			json.Unmarshal(m.Params, &ev)
			a.c.Send(ev.SessionID, "Runtime.runIfWaitingForDebugger", nil)
		}
	}()
	framed := func(t *testing.T, parent, frameOrigin string, wait bool) (target, s, hop string, mark int) {
		t.Helper()
		target, s = a.newTab("about:blank")
		a.enableAll(s)
		if _, err := a.call(s, "Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": wait, "flatten": true}); err != nil {
			t.Fatal(err)
		}
		a.roundTrip()
		mark = a.mark()
		hops := len(env.Pages.Hops())
		a.sendRaw(s, "Page.navigate", `{"url":`+quote(parent+"/tier/frame.html?src="+url.QueryEscape(frameOrigin+"/tier/hop?live=1"))+`}`)
		p.waitFor(target, `location.pathname`, `"/tier/frame.html"`)
		deadline := time.Now().Add(10 * time.Second)
		for len(env.Pages.Hops()) == hops {
			if time.Now().After(deadline) {
				t.Fatal("the frame did not load")
			}
			time.Sleep(20 * time.Millisecond)
		}
		return target, s, env.Pages.Hops()[hops], mark
	}

	outOfProcess := func(t *testing.T, wait bool) {
		target, s, hop, mark := framed(t, env.Pages.Main, env.Pages.Third, wait)
		frame := ""
		deadline := time.Now().Add(10 * time.Second)
		for frame == "" {
			res, _ := p.call("", "Target.getTargets", nil)
			var r struct{ TargetInfos []pageTarget }
			json.Unmarshal(res, &r)
			for _, ti := range r.TargetInfos {
				if ti.Type == "iframe" && strings.HasPrefix(ti.URL, env.Pages.Third) {
					frame = ti.TargetID
				}
			}
			if time.Now().After(deadline) {
				t.Fatal("the frame has no target of its own: not out of process")
			}
			time.Sleep(50 * time.Millisecond)
		}
		p.waitComplete(frame, env.Pages.Third+"/tier/site.html")
		p.waitTicks(frame, 5)
		// The page is still the client's to use.
		if v, err := a.eval(s, `document.getElementById('pchange').click(), document.getElementById('pout').textContent`); err != nil || v != quote("changed by a click") {
			t.Errorf("the full page with a blind frame: %s %v", v, err)
		}
		// Every session the client has or can get on the frame is blind.
		var frameSessions []string
		if res, err := a.call("", "Target.attachToTarget", map[string]any{"targetId": frame, "flatten": true}); err == nil {
			var r struct{ SessionID string }
			json.Unmarshal(res, &r)
			frameSessions = append(frameSessions, r.SessionID)
		}
		for _, m := range a.c.Messages() {
			if m.Method == "Target.attachedToTarget" && m.SessionID == s && targetOf(m.Params) == frame {
				var ev struct{ SessionID string }
				json.Unmarshal(m.Params, &ev)
				frameSessions = append(frameSessions, ev.SessionID)
			}
		}
		for _, fs := range frameSessions {
			a.call(fs, "Runtime.enable", nil)
			for _, c := range blindReads(frame) {
				a.refused(fs, c.method, c.params)
			}
		}
		a.call("", "Target.getTargetInfo", map[string]any{"targetId": frame})
		a.call(s, "Page.getFrameTree", nil)
		a.call(s, "DOM.getDocument", map[string]any{"depth": -1, "pierce": true})
		a.roundTrip()
		if l := leakIn(a.c.Frames(), mark, needles(hop)...); l != "" {
			t.Errorf("the client received the blind frame:\n\t%s", l)
		}
		// The page has one frame, the blind one.
		for _, m := range a.c.Messages() {
			if m.Method == "Target.attachedToTarget" && m.SessionID == s && strings.Contains(string(m.Params), `"type":"iframe"`) {
				t.Errorf("the blind frame was announced: %.300s", m.Raw)
			}
		}
		_ = target
	}
	t.Run("out of process, the client's frames wait for it", func(t *testing.T) { outOfProcess(t, true) })
	t.Run("out of process, the client's frames do not wait", func(t *testing.T) { outOfProcess(t, false) })

	t.Run("in process", func(t *testing.T) {
		from := len(a.c.Messages())
		target, s, hop, mark := framed(t, tierHost("app"), tierHost("blind"), true)
		a.accessChanged(from, s, "blind")
		p.waitFrameTicks(target, tierHost("blind"), 5)
		for _, c := range blindReads(target) {
			a.refused(s, c.method, c.params)
		}
		p.waitFrameTicks(target, tierHost("blind"), 3)
		a.roundTrip()
		if l := leakIn(a.c.Frames(), mark, needles(hop)...); l != "" {
			t.Errorf("the client received the blind frame:\n\t%s", l)
		}
		// The frame goes: the page is the client's again.
		from = len(a.c.Messages())
		p.evalMay(target, `document.getElementById('f').remove()`)
		a.accessChanged(from, s, "full")
		if v, err := a.eval(s, `document.getElementById('pchange').click(), document.getElementById('pout').textContent`); err != nil || v != quote("changed by a click") {
			t.Errorf("the page after its blind frame went: %s %v", v, err)
		}
	})
}

// frameTarget waits for the browser's target of an out-of-process frame
// whose URL starts with prefix, as the person sees it, and returns it.
func (p *person) frameTarget(prefix string) string {
	p.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		res, _ := p.call("", "Target.getTargets", nil)
		var r struct{ TargetInfos []pageTarget }
		json.Unmarshal(res, &r)
		for _, ti := range r.TargetInfos {
			if ti.Type == "iframe" && strings.HasPrefix(ti.URL, prefix) {
				return ti.TargetID
			}
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("no out-of-process frame at %s", prefix)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestTierAttackBlindFramePixels: a screenshot of a full page is of the
// whole tab, its out-of-process frames composited in; a blind frame's
// text must not be in it (the relay refuses such a screenshot, saying
// why), whether or not the client attached to the frame.
func TestTierAttackBlindFramePixels(t *testing.T) {
	requireEnv(t)
	useTiers(t)
	ctx := testCtx(t, 90*time.Second)
	p := newPerson(ctx, t)
	a := newAttacker(ctx, t)
	_, s := a.newTab(env.Pages.Main + "/tier/frame.html?src=" + url.QueryEscape(siteURL(env.Pages.Third, newMark(), false)))
	frame := p.frameTarget(env.Pages.Third + "/tier/site.html")
	p.waitComplete(frame, env.Pages.Third)
	v, err := a.eval(s, `JSON.stringify(document.getElementById('f').getBoundingClientRect())`)
	if err != nil {
		t.Fatal(err)
	}
	var rectJSON string
	json.Unmarshal([]byte(v), &rectJSON)
	var r struct{ X, Y, Width, Height float64 }
	json.Unmarshal([]byte(rectJSON), &r)
	res, err := a.call(s, "Page.captureScreenshot", map[string]any{"format": "png"})
	if err != nil {
		// Refused, and told why: no pixels at all.
		if !strings.Contains(err.Error(), "would show its pixels") {
			t.Errorf("a screenshot of the full page: %v", err)
		}
		return
	}
	var shot struct{ Data []byte }
	json.Unmarshal(res, &shot)
	img, err := png.Decode(bytes.NewReader(shot.Data))
	if err != nil {
		t.Fatal(err)
	}
	// The screenshot is in device pixels; the rect in CSS pixels.
	res, _ = a.call(s, "Runtime.evaluate", map[string]any{"expression": "devicePixelRatio", "returnByValue": true})
	dpr := 1.0
	if v, err := evalValue(res); err == nil {
		json.Unmarshal([]byte(v), &dpr)
	}
	dark := 0
	b := img.Bounds()
	for y := int((r.Y + 6) * dpr); y < int((r.Y+r.Height-6)*dpr) && y < b.Max.Y; y++ {
		for x := int((r.X + 6) * dpr); x < int((r.X+r.Width-6)*dpr) && x < b.Max.X; x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			if (cr+cg+cb)/3 < 0x6000 {
				dark++
			}
		}
	}
	if dark > 0 {
		t.Errorf("a screenshot of the full page shows its blind frame: %d dark pixels (its text) where the frame is", dark)
	}
}

// TestTierAttackNavigateIntoBlind: the client may not take a tab to a
// blind site, whatever way it spells the address, nor open one there; a
// redirect from a full site is another way there.
func TestTierAttackNavigateIntoBlind(t *testing.T) {
	requireEnv(t)
	useTiers(t)
	ctx := testCtx(t, 90*time.Second)
	a := newAttacker(ctx, t)
	_, s := a.newTab(siteURL(env.Pages.Main, newMark(), false))
	port := env.Pages.Third[strings.LastIndexByte(env.Pages.Third, ':')+1:]
	for _, u := range []string{
		env.Pages.Third + "/tier/site.html",
		"HTTP://127.0.0.3:" + port + "/tier/site.html",
		"http://127.0.0.3.:" + port + "/tier/site.html",
		"http://2130706435:" + port + "/tier/site.html",
		"http://0x7f000003:" + port + "/tier/site.html",
		"http://0177.0.0.3:" + port + "/tier/site.html",
		"http://person@127.0.0.3:" + port + "/tier/site.html",
		"http://127.0.0.3:" + port + "\\tier/site.html",
		"http://[::ffff:127.0.0.3]:" + port + "/tier/site.html",
	} {
		a.refused(s, "Page.navigate", map[string]any{"url": u})
		a.refused("", "Target.createTarget", map[string]any{"url": u})
	}
	// A full site's redirect is the site's doing, as a link on it is: it
	// takes the tab to the blind site (the README says so), and the tab is
	// blind from the redirect on: nothing of the blind page, not even the
	// address it was sent to, reaches the client.
	hops := len(env.Pages.Hops())
	redirect := env.Pages.Main + "/tier/redirect?to=" + url.QueryEscape(env.Pages.Third+"/tier/hop")
	from := len(a.c.Messages())
	a.call(s, "Page.navigate", map[string]any{"url": redirect})
	if len(env.Pages.Hops()) == hops {
		t.Fatal("the redirect did not reach the blind site")
	}
	a.accessChanged(from, s, "blind")
	if l := leakIn(a.c.Frames(), 0, needles(env.Pages.Hops()[hops])...); l != "" {
		t.Errorf("the client received the blind page it was redirected to:\n\t%s", l)
	}
	a.call(s, "Page.navigate", map[string]any{"url": siteURL(env.Pages.Main, newMark(), false)})
}
