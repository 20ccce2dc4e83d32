package relay

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/config"
	"github.com/cdprelay/cdprelay/relay/internal/core"
	"github.com/cdprelay/cdprelay/relay/internal/creds"

	"github.com/cdprelay/cdprelay/internal/cdptest"
	"github.com/cdprelay/cdprelay/internal/fakeext"
	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/relay/internal/rules"
)

// The order of the command stages (order.go) is a security contract.
// Each pin below is a behaviour that holds only while two stages keep
// their order: its comment names the two, and the swap it catches. A pin
// says what a client or a person sees (replies, approvals, what reaches
// the tab through the fake extension), so that it holds whatever the
// stages are called and wherever they live.

// orderPolicy is the policy of the order pins: method rules, URL rules
// and tiers as each pin needs them, and a record of what it judged.
type orderPolicy struct {
	tierPolicy                 // the tiers; nil: none
	deny       map[string]bool // methods the method rules deny
	denyIn     string          // params that contain it are denied by the method rules
	ask        map[string]bool // methods the method rules ask about
	askURL     string          // URLs that contain it are asked about
	denyURL    string          // URLs that contain it are denied (commands and navigations)
	fence      bool            // the navigation backstop is on
	uploads    []string
	judged     *judgedLog // what Command and MethodURL were asked; nil: not kept
}

func (p orderPolicy) Command(_, method string, params []byte) core.Decision {
	p.judged.add(method)
	switch {
	case p.deny[method] || p.denyIn != "" && strings.Contains(string(params), p.denyIn):
		return core.Decision{Verdict: core.Deny, Rule: "method:" + method, Message: "Denied by cdprelay policy: " + method}
	case p.ask[method]:
		return core.Decision{Verdict: core.Ask, Rule: "ask:method:" + method}
	}
	return core.Decision{}
}

func (p orderPolicy) MethodURL(profile, method, url string, found bool) core.Decision {
	if !found {
		return core.Decision{}
	}
	p.judged.add("url " + url)
	if p.askURL != "" && strings.Contains(url, p.askURL) {
		return core.Decision{Verdict: core.Ask, Rule: "ask:url"}
	}
	return p.URL(profile, url)
}

func (p orderPolicy) URL(_, url string) core.Decision {
	if p.denyURL != "" && strings.Contains(url, p.denyURL) {
		return core.Decision{Verdict: core.Deny, Rule: "url:denied", Message: "Denied by cdprelay policy: " + url}
	}
	return core.Decision{}
}

func (p orderPolicy) FencesNavigation(string) bool { return p.fence }
func (p orderPolicy) UploadDirs(string) []string   { return p.uploads }

// judgedLog is what a policy was asked to judge, in order.
type judgedLog struct {
	mu   sync.Mutex
	what []string
}

func (l *judgedLog) add(s string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.what = append(l.what, s)
	l.mu.Unlock()
}

func (l *judgedLog) has(s string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Contains(l.what, s)
}

// askedOrAnswered waits until the instance asks a person about one
// command, and returns that approval. It fails t at once if the command
// id is answered first: then a stage after ask took it.
func askedOrAnswered(t *testing.T, h *harness, c *cdptest.Client, id int64) api.ApprovalStatus {
	t.Helper()
	in := h.srv.Default()
	var a []api.ApprovalStatus
	var answered *cdptest.Message
	h.waitFor("the person is asked", func() bool {
		for _, m := range c.Messages() {
			if m.ID != nil && *m.ID == id {
				answered = &m
				return true
			}
		}
		a = in.Status().Approvals
		return len(a) > 0
	})
	if answered != nil {
		t.Fatalf("answered before a person was asked: %s", answered.Raw)
	}
	if len(a) != 1 {
		t.Fatalf("approvals %+v", a)
	}
	return a[0]
}

// neverSent fails t if any CDP command after index from reached the tab
// with one of needles in it ("Method params"; "" is any command).
func neverSent(t *testing.T, e *fakeext.Ext, from int, needles ...string) {
	t.Helper()
	for _, s := range cdpSent(e, from) {
		for _, n := range needles {
			if strings.Contains(s, n) {
				t.Errorf("reached the tab: %s", s)
			}
		}
	}
}

func TestCommandOrderPins(t *testing.T) {
	// The brake before route: a stopped instance refuses every command
	// as stopped, before it is routed. Catches route run before the
	// brake: stages that run only for an automation that may go on would
	// answer the client (a session not found, params it cannot read), and
	// a command for a tab being resumed would wait for the tab instead of
	// being refused.
	t.Run("the brake before route", func(t *testing.T) {
		rec := &auditRecorder{}
		h := newHarness(t, config.Config{Observer: rec})
		e := h.ext(fakeext.Options{Tabs: twoTabs[:1]})
		c := h.client()
		sess := h.autoAttach(c)[0]
		if err := h.srv.Default().Stop("person"); err != nil {
			t.Fatal(err)
		}
		// The Stop's own commands, its undoing's last (person's stopundo.go).
		h.waitFor("the Stop's undoing", func() bool { return rec.find(api.KindStop, "the Stop by person undid") })
		before := len(e.Commands())
		for _, s := range []string{"no-such-session", sess} {
			if m := h.callMsg(c, s, "DOM.getDocument", nil); refusal(m) != api.MsgStopped {
				t.Errorf("a command for %s while stopped: %s", s, m.Raw)
			}
		}
		if m := h.callMsg(c, sess, "Page.navigate", rawParams(`{"url":"https://a.example/","url":"https://b.example/"}`)); refusal(m) != api.MsgStopped {
			t.Errorf("unreadable params while stopped: %s", m.Raw)
		}
		neverSent(t, e, before, "")
	})

	// Route's decoding before the policy: the policy judges the URL as
	// Chrome will read it from the params, and unreadable params are
	// refused before anything judges them. Catches the policy run before
	// route has decoded the params: it would judge no URL at all, and a
	// navigation to a denied one would go on.
	t.Run("route before the policy", func(t *testing.T) {
		judged := &judgedLog{}
		h := newHarness(t, config.Config{Policy: orderPolicy{denyURL: "denied.example", judged: judged}})
		e := h.ext(fakeext.Options{Tabs: twoTabs[:1]})
		c := h.client()
		sess := h.autoAttach(c)[0]
		before := len(e.Commands())
		if m := h.callMsg(c, sess, "Page.navigate", map[string]any{"url": "https://denied.example/"}); !strings.Contains(refusal(m), "Denied by cdprelay policy: https://denied.example/") {
			t.Errorf("a navigation to a denied URL: %s", m.Raw)
		}
		if !judged.has("url https://denied.example/") {
			t.Errorf("the policy judged %q", judged.what)
		}
		if m := h.callMsg(c, sess, "Page.navigate", rawParams(`{"url":"https://a.example/","url":"https://denied.example/"}`)); m.Error == nil || m.Error.Code != core.CodeInvalidParams {
			t.Errorf("a URL given twice: %s", m.Raw)
		}
		if judged.has("url https://a.example/") {
			t.Errorf("the policy judged params route could not read: %q", judged.what)
		}
		neverSent(t, e, before, "")
	})

	// The line before the policy and ask: a command behind a held one on
	// the same tab is judged when its turn comes, not on arrival, and a
	// person is asked one question at a time per tab. Catches the judging
	// stages run before the line: the policy would judge the later command
	// at once and the person would be asked about it (a second question
	// for a tab whose first is not answered) before the first is decided.
	t.Run("the line before the policy and ask", func(t *testing.T) {
		judged := &judgedLog{}
		h := newHarness(t, config.Config{Policy: orderPolicy{askURL: "shop.example", ask: map[string]bool{"Input.insertText": true}, judged: judged}, ApprovalTimeout: time.Hour})
		e := h.ext(fakeext.Options{Tabs: twoTabs[:1]})
		c := h.client()
		sess := h.autoAttach(c)[0]
		in := h.srv.Default()
		before := len(e.Commands())
		nav := h.send(c, sess, "Page.navigate", map[string]any{"url": "https://shop.example/checkout"})
		first := askedOrAnswered(t, h, c, nav)
		text := h.send(c, sess, "Input.insertText", map[string]any{"text": "x"})
		h.waitFor("the second command in line", func() bool { cl := currentClient(in); return cl != nil && cl.Inflight.Load() == 2 })
		if a := in.Status().Approvals; len(a) != 1 {
			t.Fatalf("a person is asked %d questions about one tab at once: %+v", len(a), a)
		}
		if judged.has("Input.insertText") {
			t.Fatal("the policy judged a command waiting in line")
		}
		if err := in.Approve(first.ID, "person"); err != nil {
			t.Fatal(err)
		}
		if m, _ := h.reply(c, nav); m.Error != nil {
			t.Fatalf("approved: %s", m.Raw)
		}
		second := askedOrAnswered(t, h, c, text)
		if second.Method != "Input.insertText" || !judged.has("Input.insertText") {
			t.Fatalf("the command behind it, when its turn came: %+v, judged %q", second, judged.what)
		}
		if err := in.Deny(second.ID, "person"); err != nil {
			t.Fatal(err)
		}
		h.reply(c, text)
		neverSent(t, e, before, "Input.insertText")
	})

	// The operator's rules before the relay's own: a Fetch.continueRequest
	// the policy denies leaves the paused request's credentials where they
	// were, so that the client's allowed continue of it puts them back.
	// Catches the relay's rules (the credentials' restoration, which
	// consumes what it kept) run before the operator's: the denied
	// command would use up the request's credentials, and the allowed one
	// be refused and the request failed.
	t.Run("the operator's rules before the relay's", func(t *testing.T) {
		h := newHarness(t, config.Config{})
		e := h.ext(fakeext.Options{Tabs: twoTabs[:1]})
		c := h.client()
		sess := h.autoAttach(c)[0]
		h.call(c, sess, "Fetch.enable", map[string]any{"patterns": []map[string]any{{"urlPattern": "*"}}})
		from := len(c.Messages())
		e.Event(1, "", "Fetch.requestPaused", map[string]any{"requestId": "P1", "resourceType": "Document", "frameId": "F",
			"request": map[string]any{"url": "https://a.example/", "method": "GET", "headers": map[string]string{"Cookie": "sid=the-persons-session"}}})
		h.event(c, from, "Fetch.requestPaused")
		cont := map[string]any{"requestId": "P1", "headers": []map[string]string{{"name": "Cookie", "value": wire.Marker(len("sid=the-persons-session"))}}}

		h.srv.SetPolicy(orderPolicy{deny: map[string]bool{"Fetch.continueRequest": true}})
		before := len(e.Commands())
		if m := h.callMsg(c, sess, "Fetch.continueRequest", cont); !strings.Contains(refusal(m), "Denied by cdprelay policy: Fetch.continueRequest") {
			t.Fatalf("denied by the operator: %s", m.Raw)
		}
		h.srv.SetPolicy(nil)
		if m := h.callMsg(c, sess, "Fetch.continueRequest", cont); m.Error != nil {
			t.Fatalf("allowed: %s", m.Raw)
		}
		sent := cdpSent(e, before)
		if len(sent) != 1 || !strings.HasPrefix(sent[0], "Fetch.continueRequest") || !strings.Contains(sent[0], "sid=the-persons-session") {
			t.Fatalf("sent %q", sent)
		}
	})

	// The operator's rules before access: a command the policy denies on
	// a blind tab is denied, not taken by the blind tab's stand-ins, which
	// keep what they answer for the page the tab goes to next. Catches
	// access run before the policy: an init script the operator denies
	// would be acknowledged on the blind tab and put into Chrome once the
	// tab is on a full site. (A denial winning over the take-over's is
	// TestPipelineOrder's.)
	t.Run("the operator's rules before access", func(t *testing.T) {
		h := newHarness(t, config.Config{Policy: orderPolicy{tierPolicy: tiers, denyIn: "planted"}})
		e := h.ext(fakeext.Options{Handler: scriptHandler(), Tabs: []fakeext.Tab{{ID: 1, URL: "https://blind.example/", Title: "B"}}})
		c := h.client()
		sess := h.autoAttach(c)[0]
		if m := h.callMsg(c, sess, "Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": "window.planted = 1"}); !strings.Contains(refusal(m), "Denied by cdprelay policy") {
			t.Fatalf("a denied script on a blind tab: %s", m.Raw)
		}
		h.call(c, sess, "Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": "window.allowed = 1"})
		from := len(e.Commands())
		e.Navigate(1, "https://a.example/", "A")
		h.waitFor("the allowed script in Chrome", func() bool {
			return indexOf(cdpSent(e, from), `Page.addScriptToEvaluateOnNewDocument {"source":"window.allowed = 1"}`) >= 0
		})
		neverSent(t, e, 0, "planted")
	})

	// Access before ask: a command the tab's access refuses is refused,
	// and nobody is asked about it. Catches ask run before access: a
	// person would be asked to approve what may not happen on the tab at
	// all (and the question describes the blind page).
	t.Run("access before ask", func(t *testing.T) {
		rec := &auditRecorder{}
		h := newHarness(t, config.Config{Policy: orderPolicy{tierPolicy: tiers, ask: map[string]bool{"Input.insertText": true}},
			ApprovalTimeout: 200 * time.Millisecond, Observer: rec})
		e := h.ext(fakeext.Options{Tabs: []fakeext.Tab{{ID: 1, URL: "https://blind.example/"}, {ID: 2, URL: "https://ro.example/"}}})
		c := h.client()
		sess := h.autoAttach(c)
		before := len(e.Commands())
		for i, want := range []string{"blind", "read-only"} {
			if m := h.callMsg(c, sess[i], "Input.insertText", map[string]any{"text": "x"}); !strings.Contains(refusal(m), "cdprelay: "+want) {
				t.Errorf("asked input on a %s tab: %s", want, m.Raw)
			}
		}
		if rec.find(api.KindAsk, "") || len(h.srv.Default().Status().Approvals) != 0 {
			t.Errorf("a person was asked: %+v", auditedEvents(rec))
		}
		neverSent(t, e, before, "")
	})

	// Ask before the stages that act (prepare, secret, fence, emulate,
	// forward): a command a person is asked about does nothing until they
	// approve it, and nothing once they deny it. Each case catches its
	// acting stage run before ask: the command would act (or be answered)
	// while the person is still deciding.
	t.Run("ask before the stages that act", func(t *testing.T) {
		// prepare: a navigation to a read-only site leaves the tab's
		// scripts in Chrome and its access as it was.
		t.Run("prepare", func(t *testing.T) {
			h := newHarness(t, config.Config{Policy: orderPolicy{tierPolicy: tiers, askURL: "ro.example"}, ApprovalTimeout: time.Hour})
			e := h.ext(fakeext.Options{Handler: scriptHandler(), Tabs: []fakeext.Tab{{ID: 1, URL: "https://a.example/", Title: "A"}}})
			c := h.client()
			sess := h.autoAttach(c)[0]
			h.call(c, sess, "Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": "fetch('/act')"})
			in := h.srv.Default()
			before := len(e.Commands())
			nav := h.send(c, sess, "Page.navigate", map[string]any{"url": "https://ro.example/"})
			a := askedOrAnswered(t, h, c, nav)
			if got := in.Status().Tabs[0].Access; got != "full" {
				t.Errorf("the tab is %s while the person is asked", got)
			}
			neverSent(t, e, before, "")
			if err := in.Deny(a.ID, "person"); err != nil {
				t.Fatal(err)
			}
			h.reply(c, nav)
			neverSent(t, e, before, "")
			if got := in.Status().Tabs[0].Access; got != "full" {
				t.Errorf("the tab is %s after the denial", got)
			}
		})
		// secret: nothing is typed, and the secret is not read. The page
		// is looked at only as the ask stage looks at it for the card
		// (describe.go): the focused field, in a world of the relay's.
		t.Run("secret", func(t *testing.T) {
			page := newFakePage(1, "https://a.example")
			page.setFocus(passwordField(tid(1)))
			h := newHarness(t, config.Config{Policy: orderPolicy{ask: map[string]bool{"Input.insertText": true}}, Secrets: staticSecrets(t), ApprovalTimeout: time.Hour})
			e := h.ext(fakeext.Options{Tabs: twoTabs[:1], Handler: page.handle})
			page.e.Store(e)
			c := h.client()
			sess := h.autoAttach(c)[0]
			in := h.srv.Default()
			before := len(e.Commands())
			id := h.send(c, sess, "Input.insertText", map[string]any{"text": "{{secret:github}}"})
			a := askedOrAnswered(t, h, c, id)
			if a.What != `type the secret github into the field on a.example` {
				t.Errorf("the card says %q", a.What)
			}
			const value = "correct horse battery staple"
			looks := []string{"Page.createIsolatedWorld", "Runtime.callFunctionOn", "Runtime.getProperties", "DOM.describeNode", "Accessibility.getPartialAXTree", "Runtime.releaseObjectGroup"}
			for _, s := range cdpSent(e, before) {
				if m, _, _ := strings.Cut(s, " "); !slices.Contains(looks, m) {
					t.Errorf("reached the tab while asked: %s", s)
				}
			}
			neverSent(t, e, before, "Input.", "execCommand", value)
			if err := in.Deny(a.ID, "person"); err != nil {
				t.Fatal(err)
			}
			if m, _ := h.reply(c, id); !strings.Contains(refusal(m), "a person denied") {
				t.Fatalf("denied: %s", m.Raw)
			}
			h.call(c, sess, "DOM.getDocument", nil) // a round trip: what the command would have sent is sent by then
			neverSent(t, e, before, "Input.", "execCommand", value)
			if got := page.typedValues(); len(got) != 0 {
				t.Errorf("typed: %q", got)
			}
			if creds.InstanceOf(in).Locked.Load() != nil {
				t.Error("the secret was read and locked for a command the person denied")
			}
		})
		// fence: a Fetch.disable on a fenced tab sends nothing.
		t.Run("fence", func(t *testing.T) {
			h := newHarness(t, config.Config{Policy: orderPolicy{fence: true, denyURL: "evil", ask: map[string]bool{"Fetch.disable": true}}, ApprovalTimeout: time.Hour})
			e := h.ext(fakeext.Options{Tabs: twoTabs[:1]})
			c := h.client()
			sess := h.autoAttach(c)[0]
			in := h.srv.Default()
			before := len(e.Commands())
			id := h.send(c, sess, "Fetch.disable", nil)
			a := askedOrAnswered(t, h, c, id)
			neverSent(t, e, before, "")
			if err := in.Deny(a.ID, "person"); err != nil {
				t.Fatal(err)
			}
			h.reply(c, id)
			neverSent(t, e, before, "")
		})
		// emulate: Target.createTarget opens no tab.
		t.Run("emulate", func(t *testing.T) {
			h := newHarness(t, config.Config{Policy: orderPolicy{ask: map[string]bool{"Target.createTarget": true}}, ApprovalTimeout: time.Hour})
			e := h.ext(fakeext.Options{Tabs: twoTabs[:1]})
			c := h.client()
			h.autoAttach(c)
			in := h.srv.Default()
			before := len(e.Commands())
			id := h.send(c, "", "Target.createTarget", map[string]any{"url": "about:blank"})
			a := askedOrAnswered(t, h, c, id)
			if got := commandsSince(e, before); len(got) != 0 {
				t.Errorf("reached the extension while asked: %+v", got)
			}
			if err := in.Deny(a.ID, "person"); err != nil {
				t.Fatal(err)
			}
			h.reply(c, id)
			if got := commandsSince(e, before); len(got) != 0 {
				t.Errorf("reached the extension after the denial: %+v", got)
			}
		})
		// forward: an asked answer to a dialog leaves the dialog to the
		// person while it waits (the dialog is claimed by whoever answers
		// first, in forward).
		t.Run("forward", func(t *testing.T) {
			h := newHarness(t, config.Config{Policy: orderPolicy{ask: map[string]bool{"Page.handleJavaScriptDialog": true}}, ApprovalTimeout: time.Hour})
			e := h.ext(fakeext.Options{Tabs: twoTabs[:1]})
			c := h.client()
			sess := h.autoAttach(c)[0]
			in := h.srv.Default()
			e.Event(1, "", "Page.javascriptDialogOpening", map[string]any{"url": "https://a.example/", "message": "Delete?", "type": "confirm", "hasBrowserHandler": false, "defaultPrompt": ""})
			h.waitFor("the dialog shows", func() bool { return in.Status().Tabs[0].Dialog != nil })
			before := len(e.Commands())
			id := h.send(c, sess, "Page.handleJavaScriptDialog", map[string]any{"accept": true})
			a := askedOrAnswered(t, h, c, id)
			neverSent(t, e, before, "")
			if err := in.AnswerDialog(1, 0, false, "", "person"); err != nil {
				t.Fatalf("the person's answer while the automation's is asked about: %v", err)
			}
			if err := in.Approve(a.ID, "person"); err != nil {
				t.Fatal(err)
			}
			if m, _ := h.reply(c, id); !strings.Contains(refusal(m), "already answered by person") {
				t.Fatalf("the automation's answer, approved after the person's: %s", m.Raw)
			}
			if sent := cdpSent(e, before); len(sent) != 1 || !strings.Contains(sent[0], `"accept":false`) {
				t.Fatalf("sent %q", sent)
			}
		})
	})

	// A refused command reaches no later stage: whichever stage refuses
	// it, the client gets one answer, the refusal is audited, and nothing
	// reaches the extension. Catches a stage whose refusal does not end
	// the command (a stage that answers and still reports it may go on).
	t.Run("a refusal ends the command", func(t *testing.T) {
		rec := &auditRecorder{}
		pol := orderPolicy{tierPolicy: tiers, deny: map[string]bool{"Network.getAllCookies": true}, denyURL: "file:", ask: map[string]bool{"Input.insertText": true}}
		h := newHarness(t, config.Config{Policy: pol, Observer: rec, ApprovalTimeout: time.Hour})
		e := h.ext(fakeext.Options{Tabs: []fakeext.Tab{{ID: 1, URL: "https://a.example/"}, {ID: 2, URL: "https://ro.example/"}}})
		c := h.client()
		sess := h.autoAttach(c)
		in := h.srv.Default()
		e.Event(1, "", "Page.javascriptDialogOpening", map[string]any{"url": "https://a.example/", "message": "?", "type": "alert", "hasBrowserHandler": false, "defaultPrompt": ""})
		h.waitFor("the dialog shows", func() bool { return in.Status().Tabs[0].Dialog != nil })
		if err := in.AnswerDialog(1, 0, true, "", "person"); err != nil {
			t.Fatal(err)
		}
		h.waitFor("the person's answer", func() bool { return hasMethod(sentMethods(e, 0), "Page.handleJavaScriptDialog") })
		for _, tc := range []struct {
			stage, session, method string
			params                 any
			rule                   string // audited refusal; "" for none
		}{
			{"route", "no-such-session", "DOM.getDocument", nil, ""},
			{"route", sess[0], "Page.navigate", rawParams(`{"url":"https://a.example/","url":"https://b.example/"}`), ""},
			{"policy", sess[0], "Network.getAllCookies", nil, "method:Network.getAllCookies"},
			{"policy", sess[0], "Page.navigate", map[string]any{"url": "file:///etc/passwd"}, "url:denied"},
			{"the relay's rules", "", "Target.sendMessageToTarget", map[string]any{"message": "{}", "targetId": tid(1)}, rules.RuleNested},
			{"the relay's rules", sess[0], "Page.setDownloadBehavior", map[string]any{"behavior": "allow", "downloadPath": "/tmp"}, ""},
			{"access", sess[1], "DOM.setOuterHTML", map[string]any{"nodeId": 1, "outerHTML": "<p>"}, "tier:read-only"},
			{"access", sess[0], "Page.navigate", map[string]any{"url": "https://blind.example/"}, "tier:blind"},
			{"secret", sess[0], "CDPRelay.fillSecret", map[string]any{}, api.RuleSecret},
			{"forward", sess[0], "Page.handleJavaScriptDialog", map[string]any{"accept": false}, api.RuleDialogAnswered},
		} {
			before, from := len(e.Commands()), len(c.Messages())
			m := h.callMsg(c, tc.session, tc.method, tc.params)
			if m.Error == nil && tc.method != "Page.setDownloadBehavior" {
				t.Errorf("%s: %s went through: %s", tc.stage, tc.method, m.Raw)
			}
			// A round trip through the tab: whatever the refused command
			// would have sent has been sent by then, and its refusal
			// recorded (the client's commands are handled one at a time).
			h.call(c, sess[0], "Runtime.evaluate", map[string]any{"expression": "1"})
			if tc.rule != "" && !slices.ContainsFunc(auditedEvents(rec), func(ev core.Event) bool { return ev.Kind == api.KindDenied && ev.Rule == tc.rule }) {
				t.Errorf("%s: the refusal of %s by %s is not audited", tc.stage, tc.method, tc.rule)
			}
			if sent := cdpSent(e, before); len(sent) != 1 || !strings.HasPrefix(sent[0], "Runtime.evaluate") {
				t.Errorf("%s: %s reached the tab: %q", tc.stage, tc.method, sent)
			}
			if n := len(commandsSince(e, before)); n != 1 {
				t.Errorf("%s: %s reached the extension: %+v", tc.stage, tc.method, commandsSince(e, before))
			}
			// The first answer went to callMsg; a second would be recorded.
			for _, r := range c.Messages()[from:] {
				if r.ID != nil && *r.ID == *m.ID {
					t.Errorf("%s: %s answered twice: %s", tc.stage, tc.method, r.Raw)
				}
			}
		}
		// A person's denial.
		before := len(e.Commands())
		id := h.send(c, sess[0], "Input.insertText", map[string]any{"text": "x"})
		a := askedOrAnswered(t, h, c, id)
		if err := in.Deny(a.ID, "person"); err != nil {
			t.Fatal(err)
		}
		h.reply(c, id)
		h.call(c, sess[0], "Runtime.evaluate", map[string]any{"expression": "1"})
		neverSent(t, e, before, "Input.insertText")
	})

	// What the stages judged is what is forwarded: a stage that rewrites
	// a command's params keeps every field of the client's, and the
	// value the policy judged. Catches a rewrite that rebuilds the params
	// from what it knows of them (a field dropped, or a URL other than the
	// judged one sent).
	t.Run("rewrites keep what was judged", func(t *testing.T) {
		dir := t.TempDir()
		real := filepath.Join(dir, "report.pdf")
		if err := os.WriteFile(real, []byte("%PDF"), 0o600); err != nil {
			t.Fatal(err)
		}
		link := filepath.Join(dir, "link.pdf")
		if err := os.Symlink(real, link); err != nil {
			t.Fatal(err)
		}
		judged := &judgedLog{}
		h := newHarness(t, config.Config{Policy: orderPolicy{tierPolicy: tiers, fence: true, uploads: []string{dir}, judged: judged}})
		e := h.ext(fakeext.Options{Tabs: []fakeext.Tab{{ID: 1, URL: "https://a.example/"}, {ID: 2, URL: "https://ro.example/"}}})
		c := h.client()
		sess := h.autoAttach(c)
		h.call(c, sess[0], "Fetch.enable", map[string]any{"patterns": []map[string]any{{"urlPattern": "*api*"}}, "handleAuthRequests": true})
		from := len(c.Messages())
		e.Event(1, "", "Fetch.requestPaused", map[string]any{"requestId": "P1", "resourceType": "XHR", "frameId": "F",
			"request": map[string]any{"url": "https://a.example/api", "method": "GET", "headers": map[string]string{"Cookie": "sid=the-persons-session"}}})
		h.event(c, from, "Fetch.requestPaused")
		// The page's own world on tab 1, which the upload's object is of
		// (the relay places every context a command names: the tiers' contexts.go).
		h.call(c, sess[0], "Runtime.enable", nil)
		from = len(c.Messages())
		e.Event(1, "", "Runtime.executionContextCreated", map[string]any{"context": map[string]any{"id": 7, "origin": "https://a.example", "name": "",
			"uniqueId": "u7", "auxData": map[string]any{"isDefault": true, "type": "default", "frameId": tid(1)}}})
		h.event(c, from, "Runtime.executionContextCreated")
		// Every evaluation gets the brake's bound (person's brake.go).
		bound := strconv.FormatInt(h.srv.Cfg.ScriptTimeout.Milliseconds(), 10)

		for _, tc := range []struct {
			name, session, method string
			params                map[string]any
			changed               map[string]string // the fields the stage rewrites, as forwarded
		}{
			{"the read-only gate", sess[1], "Runtime.evaluate",
				map[string]any{"expression": "document.title", "returnByValue": true, "objectGroup": "g", "userGesture": false, "awaitPromise": true},
				map[string]string{"throwOnSideEffect": "true", "timeout": bound}},
			{"uploads", sess[0], "DOM.setFileInputFiles",
				map[string]any{"files": []string{link}, "backendNodeId": 5, "objectId": "1.7.1"},
				map[string]string{"files": `["` + real + `"]`}},
			{"credentials", sess[0], "Fetch.continueRequest",
				map[string]any{"requestId": "P1", "url": "https://a.example/api?page=2", "method": "POST", "postData": "cG9zdA==", "interceptResponse": false,
					"headers": []map[string]string{{"name": "Cookie", "value": wire.Marker(len("sid=the-persons-session"))}, {"name": "X-Mine", "value": "1"}}},
				map[string]string{"headers": `[{"name":"Cookie","value":"sid=the-persons-session"},{"name":"X-Mine","value":"1"}]`}},
			{"the fence", sess[0], "Fetch.enable",
				map[string]any{"patterns": []map[string]any{{"urlPattern": "*api*", "requestStage": "Response"}}, "handleAuthRequests": true},
				map[string]string{"patterns": `[{"urlPattern":"*","resourceType":"Document","requestStage":"Request"},{"urlPattern":"*api*","requestStage":"Response"}]`}},
		} {
			before := len(e.Commands())
			if m := h.callMsg(c, tc.session, tc.method, tc.params); m.Error != nil {
				t.Errorf("%s: %s", tc.name, m.Raw)
				continue
			}
			var got map[string]json.RawMessage
			for _, call := range commandsSince(e, before) {
				var args []json.RawMessage
				var method string
				if json.Unmarshal(call.Params, &args) == nil && len(args) > 2 && json.Unmarshal(args[1], &method) == nil && method == tc.method {
					if err := json.Unmarshal(args[2], &got); err != nil {
						t.Fatal(err)
					}
				}
			}
			if got == nil {
				t.Errorf("%s: %s not forwarded", tc.name, tc.method)
				continue
			}
			want := map[string]json.RawMessage{}
			for k, v := range tc.params {
				b, _ := json.Marshal(v)
				want[k] = b
			}
			for k, v := range tc.changed {
				want[k] = json.RawMessage(v)
			}
			for k, v := range want {
				if err := matchJSON(got[k], string(v)); err != nil {
					t.Errorf("%s: field %s forwarded as %s, want %s", tc.name, k, got[k], v)
				}
			}
			for k := range got {
				if _, ok := want[k]; !ok {
					t.Errorf("%s: field %s added: %s", tc.name, k, got[k])
				}
			}
		}
		if !judged.has("url https://a.example/api?page=2") {
			t.Errorf("the policy judged %q", judged.what)
		}
	})

	// A command taken off its line is judged again by every judging stage
	// as things are when its turn comes: a policy reloaded meanwhile, and
	// the tab's access now. Catches a line that hands its commands straight
	// to the acting stages with the verdicts they had on arrival.
	t.Run("a held command is judged again when it leaves its line", func(t *testing.T) {
		h := newHarness(t, config.Config{Policy: orderPolicy{tierPolicy: tiers, askURL: "shop.example", ask: map[string]bool{"Input.insertText": true}}, ApprovalTimeout: time.Hour})
		e := h.ext(fakeext.Options{Tabs: []fakeext.Tab{{ID: 1, URL: "https://a.example/", Title: "A"}}})
		c := h.client()
		sess := h.autoAttach(c)[0]
		in := h.srv.Default()

		// Behind an asked command, one the policy denies once reloaded.
		before := len(e.Commands())
		nav := h.send(c, sess, "Page.navigate", map[string]any{"url": "https://shop.example/"})
		a := askedOrAnswered(t, h, c, nav)
		behind := h.send(c, sess, "DOM.getDocument", nil)
		h.waitFor("the second command in line", func() bool { return currentClient(in).Inflight.Load() == 2 })
		h.srv.SetPolicy(orderPolicy{tierPolicy: tiers, askURL: "shop.example", ask: map[string]bool{"Input.insertText": true}, deny: map[string]bool{"DOM.getDocument": true}})
		if err := in.Approve(a.ID, "person"); err != nil {
			t.Fatal(err)
		}
		h.reply(c, nav)
		if m, _ := h.reply(c, behind); !strings.Contains(refusal(m), "Denied by cdprelay policy: DOM.getDocument") {
			t.Errorf("the command behind, after the reload: %s", m.Raw)
		}
		neverSent(t, e, before, "DOM.getDocument")

		// Approved after the tab went read-only: refused by access.
		before = len(e.Commands())
		id := h.send(c, sess, "Input.insertText", map[string]any{"text": "x"})
		a = askedOrAnswered(t, h, c, id)
		e.Navigate(1, "https://ro.example/", "RO")
		h.waitFor("the tab is read-only", func() bool { return in.Status().Tabs[0].Access == "read-only" })
		if err := in.Approve(a.ID, "person"); err != nil {
			t.Fatal(err)
		}
		if m, _ := h.reply(c, id); !strings.Contains(refusal(m), "cdprelay: read-only") {
			t.Errorf("approved input on a tab gone read-only: %s", m.Raw)
		}
		neverSent(t, e, before, "Input.insertText")
	})

	// A setting sent again after a resume is judged by the judging stages
	// as they are now; one the policy now asks about is not sent again
	// (nobody is there to ask: the relay's own command is not held), and
	// the client is told. Catches a replay that sends what was kept
	// without the judging stages, or holds its command for a person. (A
	// denial and the access stage's rules are TestResumeReplayAsksThePolicyNow's
	// and TestReplayJudgedByTheStages'.)
	t.Run("a replayed command is judged", func(t *testing.T) {
		rec := &auditRecorder{}
		h := newHarness(t, config.Config{Observer: rec, ApprovalTimeout: time.Hour})
		e := h.ext(fakeext.Options{Tabs: twoTabs[:1], Features: ourFeatures})
		c := h.client()
		sess := h.autoAttach(c)[0]
		h.call(c, sess, "Log.enable", nil)
		h.call(c, sess, "Emulation.setDeviceMetricsOverride", map[string]any{"width": 800, "height": 600, "deviceScaleFactor": 1, "mobile": false})
		h.call(c, sess, "Emulation.setTimezoneOverride", map[string]any{"timezoneId": "Europe/Paris"})
		h.srv.SetPolicy(orderPolicy{ask: map[string]bool{"Emulation.setDeviceMetricsOverride": true}})
		from, before := len(c.Messages()), len(e.Commands())
		e.DetachByBrowser(1, "target_closed", map[string]any{"cause": "extension_frame", "cleared": true, "guard": true})
		h.waitFor("the resume", func() bool { return rec.find(api.KindAttach, "resumed") })
		neverSent(t, e, before, "Emulation.setDeviceMetricsOverride")
		if indexOf(cdpSent(e, before), "Emulation.setTimezoneOverride") < 0 {
			t.Errorf("the rest was not set again: %q", cdpSent(e, before))
		}
		if a := h.srv.Default().Status().Approvals; len(a) != 0 {
			t.Errorf("a person is asked about the relay's own command: %+v", a)
		}
		h.waitFor("the client told", func() bool {
			for _, m := range c.Messages()[from:] {
				if m.Method == "Log.entryAdded" && strings.Contains(string(m.Params), "Emulation.setDeviceMetricsOverride was not set again") {
					return true
				}
			}
			return false
		})
	})

	// The fence before the emulation: on a fenced tab, the client's
	// Fetch.disable becomes the relay's Fetch.enable with the backstop's
	// pattern. Catches the emulation run first: it takes Fetch.disable on
	// a tab's top-level session as a domain switch, and the backstop's
	// pattern would go with it.
	t.Run("the fence before the emulation", func(t *testing.T) {
		h := newHarness(t, config.Config{Policy: orderPolicy{fence: true, denyURL: "evil"}})
		e := h.ext(fakeext.Options{Tabs: twoTabs[:1]})
		c := h.client()
		sess := h.autoAttach(c)[0]
		h.call(c, sess, "Fetch.enable", map[string]any{"patterns": []map[string]any{{"urlPattern": "*api*"}}})
		before := len(e.Commands())
		h.call(c, sess, "Fetch.disable", nil)
		sent := cdpSent(e, before)
		if len(sent) != 1 || !strings.HasPrefix(sent[0], "Fetch.enable ") ||
			matchJSON([]byte(strings.TrimPrefix(sent[0], "Fetch.enable ")), `{"patterns":[{"urlPattern":"*","resourceType":"Document","requestStage":"Request"}],"handleAuthRequests":false}`) != nil {
			t.Fatalf("the client's Fetch.disable went as %q", sent)
		}
	})

	// The fence acts on a resume's replay too (CmdStage.Replays): the
	// client's Fetch.enable is set again with the backstop's pattern, after
	// the attach's own. Catches a replay that runs the judging rows only:
	// the client's patterns alone would replace the backstop's, and a
	// navigation to a refused host would no longer be paused.
	t.Run("the fence on a replay", func(t *testing.T) {
		rec := &auditRecorder{}
		h := newHarness(t, config.Config{Observer: rec, Policy: orderPolicy{fence: true, denyURL: "evil"}})
		e := h.ext(fakeext.Options{Tabs: twoTabs[:1], Features: ourFeatures})
		c := h.client()
		sess := h.autoAttach(c)[0]
		h.call(c, sess, "Fetch.enable", map[string]any{"patterns": []map[string]any{{"urlPattern": "*api*"}}})
		before := len(e.Commands())
		e.DetachByBrowser(1, "target_closed", map[string]any{"cause": "extension_frame", "cleared": true, "guard": true})
		h.waitFor("the resume", func() bool { return rec.find(api.KindAttach, "resumed") })
		var enables []string
		for _, s := range cdpSent(e, before) {
			if p, ok := strings.CutPrefix(s, "Fetch.enable "); ok {
				enables = append(enables, p)
			}
		}
		if len(enables) != 2 {
			t.Fatalf("Fetch.enable sent %d times on the resume, want the attach's and the replay's: %q", len(enables), enables)
		}
		mustMatch(t, []byte(enables[0]), `{"patterns":[{"urlPattern":"*","resourceType":"Document","requestStage":"Request"}],"handleAuthRequests":false}`)
		mustMatch(t, []byte(enables[1]), `{"patterns":[{"urlPattern":"*","resourceType":"Document","requestStage":"Request"},{"urlPattern":"*api*"}],"handleAuthRequests":false}`)
	})
}

// auditedEvents returns what r was told so far.
func auditedEvents(r *auditRecorder) []core.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]core.Event(nil), r.ev...)
}
