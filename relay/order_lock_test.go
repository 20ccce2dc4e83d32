package relay

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/internal/fakeext"
	"github.com/cdprelay/cdprelay/relay/internal/config"
)

// What the relay sends of its own under the instance lock reaches the
// extension before any command that the lock's release lets through:
// today because it is sent before the lock goes (Instance.unlock); the
// lock's rework must keep these orders by another way. Each pin names the
// order and the change it catches.

// sentIndex is the index among cdpSent(e, from) of the first command
// with prefix, or -1.
func sentIndex(e *fakeext.Ext, from int, prefix string) int {
	return indexOf(cdpSent(e, from), prefix)
}

func TestLockOrderPins(t *testing.T) {
	// The scripts taken out of Chrome before the navigation that takes the
	// tab to a read-only site reaches it, whether the navigation goes on
	// at once or once a person approves it. Catches the removals sent
	// after the navigation (the preparing stage run after the send, or its
	// removals left to be sent once the lock is released, behind the
	// navigation): the client's script would run on the read-only site's
	// first document.
	t.Run("script removals before the navigation", func(t *testing.T) {
		h := newHarness(t, config.Config{Policy: orderPolicy{tierPolicy: tiers, askURL: "ro.example/asked"}, ApprovalTimeout: time.Hour})
		e := h.ext(fakeext.Options{Handler: scriptHandler(), Tabs: []fakeext.Tab{{ID: 1, URL: "https://a.example/", Title: "A"}}})
		c := h.client()
		sess := h.autoAttach(c)[0]
		in := h.srv.Default()
		for _, dest := range []string{"https://ro.example/", "https://ro.example/asked"} {
			id := jsonString(t, h.call(c, sess, "Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": "fetch('/act')"}), "identifier")
			before := len(e.Commands())
			nav := h.send(c, sess, "Page.navigate", map[string]any{"url": dest})
			if strings.HasSuffix(dest, "asked") {
				a := askedOrAnswered(t, h, c, nav)
				if err := in.Approve(a.ID, "person"); err != nil {
					t.Fatal(err)
				}
			}
			if m, _ := h.reply(c, nav); m.Error != nil {
				t.Fatalf("navigate to %s: %s", dest, m.Raw)
			}
			rm, navAt := sentIndex(e, before, `Page.removeScriptToEvaluateOnNewDocument {"identifier":"`+id+`"}`), sentIndex(e, before, "Page.navigate")
			if rm < 0 || navAt < 0 || rm > navAt {
				t.Errorf("navigate to %s: the script was not out of Chrome before the navigation: %q", dest, cdpSent(e, before))
			}
			e.Navigate(1, dest, "RO")
			e.Navigate(1, "https://a.example/", "A")
			h.waitFor("the tab is full again", func() bool { return in.Status().Tabs[0].Access == "full" })
		}
	})

	// What a Stop sends (the debugger's pauses resumed under its lock; then
	// its undoing: the script that keeps the page busy ended, the tab
	// detached and attached again, person's stopundo.go) reaches the extension
	// before any command the client sends after the Resume. Catches the
	// Stop's own commands sent once its lock is released, or its undoing
	// left to run beside the Resume, where a Resume and the client's next
	// command can overtake them: a pause resumed, a script ended, or the
	// tab detached, after the automation was let go on.
	t.Run("a Stop's own commands before the commands after the Resume", func(t *testing.T) {
		page := newBusyPage()
		h := newHarness(t, config.Config{})
		e := h.ext(fakeext.Options{Tabs: twoTabs[:1], Handler: page.handler})
		page.e = e
		c := h.client()
		sess := h.autoAttach(c)[0]
		in := h.srv.Default()
		running := h.send(c, sess, "Runtime.evaluate", map[string]any{"expression": "while(true){}"})
		page.waitBusy(h, "")
		before := len(e.Commands())
		if err := in.Stop("person"); err != nil {
			t.Fatal(err)
		}
		h.reply(c, running)
		if err := in.Resume("person"); err != nil {
			t.Fatal(err)
		}
		h.call(c, sess, "Runtime.evaluate", map[string]any{"expression": "'after the resume'"})
		after := sentIndex(e, before, `Runtime.evaluate {"expression":"'after the resume'"`)
		if after < 0 {
			t.Fatalf("the command after the Resume was not sent: %q", cdpSent(e, before))
		}
		for _, m := range []string{"Debugger.resume ", `Debugger.resume {"terminateOnResume":true}`} {
			if i := slices.Index(cdpSent(e, before), m); i < 0 || i > after {
				t.Errorf("the Stop's %s was not sent before the command after the Resume: %q", m, cdpSent(e, before))
			}
		}
		if i := indexOf(sentOn(e, before), "chrome.debugger.attach"); i < 0 || i > indexOf(sentOn(e, before), `Runtime.evaluate {"expression":"'after the resume'"`) {
			t.Errorf("the tab was not attached again before the command after the Resume: %q", sentOn(e, before))
		}
	})

	// What a tab's sessions had set is set again, when Chrome gave the tab
	// back, before the client's commands that waited for it reach the
	// tab. Catches the waiting commands let through before the replay: a
	// command would run on a page without the client's emulation or
	// domains (or, on a read-only tab, before the settings' judgement).
	t.Run("a resume's replay before the commands that waited", func(t *testing.T) {
		ag := holdAttach(2) // the tab, then its resume
		h := newHarness(t, config.Config{})
		e := h.ext(fakeext.Options{Tabs: twoTabs[:1], Features: ourFeatures, Gate: ag.gate})
		c := h.client()
		sess := h.autoAttach(c)[0]
		h.call(c, sess, "Runtime.enable", nil)
		h.call(c, sess, "Emulation.setTimezoneOverride", map[string]any{"timezoneId": "Europe/Paris"})
		h.call(c, sess, "Emulation.setLocaleOverride", map[string]any{"locale": "fr-FR"})
		from := len(c.Messages())
		e.DetachByBrowser(1, "target_closed", map[string]any{"cause": "extension_frame", "cleared": true, "guard": true})
		h.event(c, from, "Runtime.executionContextsCleared")
		h.waitFor("the resume to start", func() bool { return ag.count() == 2 })
		before := len(e.Commands())
		waiting := h.send(c, sess, "Runtime.evaluate", map[string]any{"expression": "'waited'"})
		h.waitFor("the command to wait for the resume", func() bool { return h.srv.Default().ResumeWaits.Load() == 1 })
		close(ag.release)
		if m, _ := h.reply(c, waiting); m.Error != nil {
			t.Fatalf("the command that waited: %s", m.Raw)
		}
		after := sentIndex(e, before, `Runtime.evaluate {"expression":"'waited'"`)
		if after < 0 {
			t.Fatalf("the command that waited was not sent: %q", cdpSent(e, before))
		}
		for _, m := range []string{`Emulation.setTimezoneOverride {"timezoneId":"Europe/Paris"}`, `Emulation.setLocaleOverride {"locale":"fr-FR"}`} {
			if i := sentIndex(e, before, m); i < 0 || i > after {
				t.Errorf("%s was not set again before the command that waited: %q", m, cdpSent(e, before))
			}
		}
	})

	// The read-only guard goes into a new world before any command of the
	// client's can run there: the client hears of the world only once the
	// guard is on its way, and its first command in that world (which runs
	// without V8's side-effect check, since the guard is there) reaches
	// the tab after it. Catches the guard sent once the event's lock is
	// released: the client's command could run in the world before the
	// guard.
	t.Run("the guard before the client's first command in a world", func(t *testing.T) {
		h := newHarness(t, config.Config{Policy: orderPolicy{tierPolicy: tiers}})
		e := h.ext(fakeext.Options{Tabs: []fakeext.Tab{{ID: 1, URL: "https://ro.example/", Title: "RO"}}})
		c := h.client()
		sess := h.autoAttach(c)[0]
		h.call(c, sess, "Runtime.enable", nil)
		before, from := len(e.Commands()), len(c.Messages())
		e.Event(1, "", "Runtime.executionContextCreated", map[string]any{"context": map[string]any{"id": 9, "origin": "https://ro.example", "name": "util",
			"uniqueId": "u9", "auxData": map[string]any{"isDefault": false, "type": "isolated", "frameId": tid(1)}}})
		h.event(c, from, "Runtime.executionContextCreated")
		h.call(c, sess, "Runtime.evaluate", map[string]any{"expression": "document.title", "contextId": 9})
		guard, first := sentIndex(e, before, `Runtime.evaluate {"contextId":9,"expression":"// Installed by cdprelay`), sentIndex(e, before, `Runtime.evaluate {"contextId":9,"expression":"document.title"`)
		if guard < 0 || first < 0 || guard > first {
			t.Errorf("the guard was not in the world before the client's command (guard at %d, the command at %d)", guard, first)
		}
	})
}
