package relay

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/config"
	"github.com/cdprelay/cdprelay/relay/internal/core"
	"github.com/cdprelay/cdprelay/relay/internal/creds"

	"github.com/cdprelay/cdprelay/internal/fakeext"
)

// The order of the replies table's rows (order.go, replies.go: the first
// that writes the answer finishes the reply) is a security contract as the
// commands' is (order_command_test.go): each pin names the two rows it
// keeps in order and the swap it catches.

// answerGate holds the answers of the CDP commands whose params contain
// a marker until release is closed, and counts those that arrived.
type answerGate struct {
	marker  string
	release chan struct{}
	mu      sync.Mutex
	held    int
}

func holdAnswers(marker string) *answerGate {
	return &answerGate{marker: marker, release: make(chan struct{})}
}

func (g *answerGate) gate(method string, args []json.RawMessage) {
	if method != "chrome.debugger.sendCommand" || len(args) < 3 || !strings.Contains(string(args[2]), g.marker) {
		return
	}
	g.mu.Lock()
	g.held++
	g.mu.Unlock()
	<-g.release
}

func (g *answerGate) count() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.held
}

func TestReplyOrderPins(t *testing.T) {
	// Went blind before the error and the credential results: the answer
	// to a command during which its tab went to a blind site is withheld,
	// whatever it is: an error (whose text may quote the page) as much as
	// cookies. Catches the error case, or the credentials' redaction of a
	// result, matched before the went-blind case: the client would get
	// Chrome's error text from the blind page, or the blind site's cookie
	// names and domains (redaction hides values, not the cookies).
	t.Run("went blind before the error and the results", func(t *testing.T) {
		g := holdAnswers("held")
		h := newHarness(t, config.Config{Policy: orderPolicy{tierPolicy: tiers}})
		e := h.ext(fakeext.Options{Tabs: []fakeext.Tab{{ID: 1, URL: "https://a.example/", Title: "A"}}, Gate: g.gate,
			Handler: func(tabID int, sid, method string, p json.RawMessage) (any, error) {
				switch method {
				case "Runtime.evaluate":
					return nil, fakeext.CDPError(-32000, "Uncaught ReferenceError: the blind page's own words")
				case "Network.getCookies":
					return map[string]any{"cookies": []any{map[string]any{"name": "blind-session", "value": "v", "domain": "blind.example"}}}, nil
				}
				return fakeext.DefaultHandler(tabID, sid, method, p)
			}})
		c := h.client()
		sess := h.autoAttach(c)[0]
		in := h.srv.Default()
		eval := h.send(c, sess, "Runtime.evaluate", map[string]any{"expression": "held"})
		cookies := h.send(c, sess, "Network.getCookies", map[string]any{"urls": []string{"https://held.example/"}})
		h.waitFor("both commands at the tab", func() bool { return g.count() == 2 })
		e.Navigate(1, "https://blind.example/", "B")
		h.waitFor("the tab is blind", func() bool { return in.Status().Tabs[0].Access == "blind" })
		close(g.release)
		for _, id := range []int64{eval, cookies} {
			if m, _ := h.reply(c, id); m.Error == nil || m.Error.Message != core.MsgWentBlind {
				t.Errorf("the answer of a command whose tab went blind: %s", m.Raw)
			}
		}
	})

	// The error before a stream's piece: while a secret is locked, an
	// IO.read that Chrome refuses is answered with Chrome's error. Catches
	// the stream's piece (the join of a locked secret's pieces) matched
	// before the error: the client would get a result made of nothing for
	// a read that failed, and read on.
	t.Run("the error before a stream's piece", func(t *testing.T) {
		page := newFakePage(1, "https://a.example")
		page.setFocus(passwordField(tid(1)))
		focus := page.handle
		h := newHarness(t, config.Config{Secrets: staticSecrets(t)})
		e := h.ext(fakeext.Options{Tabs: twoTabs[:1], Handler: func(tabID int, sid, method string, p json.RawMessage) (any, error) {
			if method == "IO.read" {
				return nil, fakeext.CDPError(-32000, "Invalid stream handle")
			}
			return focus(tabID, sid, method, p)
		}})
		page.e.Store(e)
		c := h.client()
		sess := h.autoAttach(c)[0]
		h.call(c, sess, "Input.insertText", map[string]any{"text": "{{secret:github}}"})
		if creds.InstanceOf(h.srv.Default()).Locked.Load() == nil {
			t.Fatal("no secret is locked")
		}
		if m := h.callMsg(c, sess, "IO.read", map[string]any{"handle": "H1"}); m.Error == nil || m.Error.Message != "Invalid stream handle" {
			t.Errorf("a failed read while a secret is locked: %s", m.Raw)
		}
	})

	// A stream's end before the went-blind case: while a secret is locked,
	// an IO.read whose reply is withheld (its tab went blind while it ran)
	// is forgotten as a failed one is. Catches the stream's row after the
	// went-blind one: the read's entry would stay for good, one more for
	// every such read.
	t.Run("a stream's end before the went-blind case", func(t *testing.T) {
		g := holdAnswers("held")
		page := newFakePage(1, "https://a.example")
		page.setFocus(passwordField(tid(1)))
		focus := page.handle
		h := newHarness(t, config.Config{Policy: orderPolicy{tierPolicy: tiers}, Secrets: staticSecrets(t)})
		e := h.ext(fakeext.Options{Tabs: []fakeext.Tab{{ID: 1, URL: "https://a.example/", Title: "A"}}, Gate: g.gate,
			Handler: func(tabID int, sid, method string, p json.RawMessage) (any, error) {
				if method == "IO.read" {
					return map[string]any{"data": "what the blind page wrote", "eof": false}, nil
				}
				return focus(tabID, sid, method, p)
			}})
		page.e.Store(e)
		c := h.client()
		sess := h.autoAttach(c)[0]
		in := h.srv.Default()
		h.call(c, sess, "Input.insertText", map[string]any{"text": "{{secret:github}}"})
		if creds.InstanceOf(in).Locked.Load() == nil {
			t.Fatal("no secret is locked")
		}
		read := h.send(c, sess, "IO.read", map[string]any{"handle": "held"})
		h.waitFor("the read at the tab", func() bool { return g.count() == 1 })
		e.Navigate(1, "https://blind.example/", "B")
		h.waitFor("the tab is blind", func() bool { return in.Status().Tabs[0].Access == "blind" })
		close(g.release)
		if m, _ := h.reply(c, read); m.Error == nil || m.Error.Message != core.MsgWentBlind {
			t.Fatalf("the read's reply: %s", m.Raw)
		}
		if n := creds.InstanceOf(in).Streams.Pending(); n != 0 {
			t.Errorf("%d stream reads still noted after their replies", n)
		}
	})

	// The resume's tap on Chrome's own answer, before any case that
	// answers the client otherwise: the identifier Chrome gives a client's
	// init script is noted for the replay even when the reply is withheld
	// (the tab went blind while the command ran), so that the client's
	// later removal of that identifier removes the script from what a
	// resume sets again. Catches the tap run only in the last case (the
	// reply as is): a resume would put back a script the client removed.
	t.Run("the resume's tap before the went-blind case", func(t *testing.T) {
		rec := &auditRecorder{}
		g := holdAnswers("held")
		h := newHarness(t, config.Config{Policy: orderPolicy{tierPolicy: tiers}, Observer: rec})
		e := h.ext(fakeext.Options{Tabs: []fakeext.Tab{{ID: 1, URL: "https://a.example/", Title: "A"}}, Features: ourFeatures, Gate: g.gate,
			Handler: func(tabID int, sid, method string, p json.RawMessage) (any, error) {
				if method == "Page.addScriptToEvaluateOnNewDocument" {
					return map[string]string{"identifier": "7"}, nil
				}
				return fakeext.DefaultHandler(tabID, sid, method, p)
			}})
		c := h.client()
		sess := h.autoAttach(c)[0]
		in := h.srv.Default()
		// A world's bootstrap (it runs nothing, so the tiers leave it in
		// Chrome and a resume sets it again).
		add := h.send(c, sess, "Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": "//# sourceURL=held", "worldName": "util"})
		h.waitFor("the script at the tab", func() bool { return g.count() == 1 })
		e.Navigate(1, "https://blind.example/", "B")
		h.waitFor("the tab is blind", func() bool { return in.Status().Tabs[0].Access == "blind" })
		close(g.release)
		if m, _ := h.reply(c, add); m.Error == nil || m.Error.Message != core.MsgWentBlind {
			t.Fatalf("the script's reply: %s", m.Raw)
		}
		e.Navigate(1, "https://a.example/", "A")
		h.waitFor("the tab is full", func() bool { return in.Status().Tabs[0].Access == "full" })
		// Chrome's identifiers are small numbers: the client removes it.
		h.call(c, sess, "Page.removeScriptToEvaluateOnNewDocument", map[string]any{"identifier": "7"})
		before := len(e.Commands())
		e.DetachByBrowser(1, "target_closed", map[string]any{"cause": "extension_frame", "cleared": true, "guard": true})
		h.waitFor("the resume", func() bool { return rec.find(api.KindAttach, "resumed") })
		neverSent(t, e, before, "sourceURL=held")
	})
}
