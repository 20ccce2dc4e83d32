package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/denylist"
	"github.com/cdprelay/cdprelay/relay"
)

// TestApprovedTargetMoves: a person approves a click (or a key, or typed
// text) whose card names the element it acts on; before the approval the
// page changes — its layout shifts, it scrolls, the element is swapped
// for a look-alike, a frame of another site moves in, the focus moves to
// another form's field. What the person approved is what happens, or
// nothing does: the order form is never sent. Unchanged, the approved
// command goes on.
func TestApprovedTargetMoves(t *testing.T) {
	requireEnv(t)
	setPolicy(t, denylist.Config{AskMethods: []string{"Input.dispatchMouseEvent", "Input.dispatchKeyEvent", "Input.insertText"}})
	ctx := testCtx(t, 3*time.Minute)
	p := newPerson(ctx, t)
	p.spareTab()
	in := env.Relay.Default()
	press := func(typ string) string {
		return `{"type":"` + typ + `","x":120,"y":50,"button":"left","clickCount":1}`
	}
	enter := `{"type":"keyDown","key":"Enter","code":"Enter","windowsVirtualKeyCode":13,"text":"\r"}`
	for _, tc := range []struct {
		name   string
		focus  string // the person's field with the focus before
		method string
		params string
		card   string // what the card must say
		change string // the page's own change before the approval
		// acted is what the page shows when the approved command went on;
		// "" when it must be refused.
		acted string
		// beforeRelease is the page's change after the approved press and
		// before its release, which must then be refused.
		beforeRelease string
	}{
		{"unchanged", "", "Input.dispatchMouseEvent", press("mousePressed"), `click the button "Cancel"`, "", "cancelled", ""},
		{"the layout shifts", "", "Input.dispatchMouseEvent", press("mousePressed"), `click the button "Cancel"`, "shift()", "", ""},
		{"the page scrolls", "", "Input.dispatchMouseEvent", press("mousePressed"), `click the button "Cancel"`, "scrollAway()", "", ""},
		{"the element is swapped for a look-alike", "", "Input.dispatchMouseEvent", press("mousePressed"), `click the button "Cancel"`, "swap()", "", ""},
		{"a frame of another site moves in", "", "Input.dispatchMouseEvent", press("mousePressed"), `click the button "Cancel"`, "cover('" + env.Pages.Other + "/form.html')", "", ""},
		{name: "the release would land elsewhere", method: "Input.dispatchMouseEvent", params: press("mousePressed"), card: `click the button "Cancel"`, beforeRelease: "shift()"},
		{"Enter, unchanged", "search", "Input.dispatchKeyEvent", enter, `press Enter in the field "Search" of a form`, "", "searched", ""},
		{"Enter, the focus moves to another form", "search", "Input.dispatchKeyEvent", enter, `press Enter in the field "Search" of a form`, "focusOrder()", "", ""},
		{"typed text, the focus moves", "search", "Input.insertText", `{"text":"42"}`, `type "42" into the field "Search"`, "focusOrder()", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newAttacker(ctx, t)
			order := secret("order")
			target, session := a.newTab(env.Pages.Main + "/approve.html?order=" + order)
			t.Cleanup(func() { p.call("", "Target.closeTarget", map[string]any{"targetId": target}) })
			if tc.focus != "" {
				p.answers(target, tc.focus+".focus(), 1", 5*time.Second)
			}
			id := a.sendRaw(session, tc.method, tc.params)
			var asked []relay.ApprovalStatus
			deadline := time.Now().Add(10 * time.Second)
			for len(asked) == 0 {
				if time.Now().After(deadline) {
					t.Fatal("no card")
				}
				time.Sleep(20 * time.Millisecond)
				asked = in.Status().Approvals
			}
			if !strings.Contains(asked[0].What, tc.card) {
				t.Fatalf("the card says %q, want %q", asked[0].What, tc.card)
			}
			if tc.change != "" {
				if _, err := p.answers(target, tc.change, 10*time.Second); err != nil {
					t.Fatalf("the page's change: %v", err)
				}
				time.Sleep(100 * time.Millisecond) // laid out
			}
			if err := in.Approve(asked[0].ID, "the person"); err != nil {
				t.Fatal(err)
			}
			m, _, err := a.c.WaitReply(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			var released error
			if tc.method == "Input.dispatchMouseEvent" {
				if tc.beforeRelease != "" {
					p.answers(target, tc.beforeRelease, 10*time.Second)
					time.Sleep(100 * time.Millisecond)
				}
				_, released = a.callRaw(session, tc.method, press("mouseReleased"))
			}
			settle()
			if n := env.Pages.Hits(env.Pages.Main, "/beacon/"+order); n > 0 {
				t.Fatalf("the order was sent after the person approved %q (reply %s)", asked[0].What, m.Raw)
			}
			title, _ := p.answers(target, "document.title + ' ' + qty.value", 5*time.Second)
			if tc.beforeRelease != "" {
				if released == nil || !strings.Contains(released.Error(), "the release would not land where the approved press did") || strings.Contains(title, "cancelled") {
					t.Fatalf("a release that would land elsewhere: %v; the page shows %s", released, title)
				}
				return
			}
			if tc.acted != "" {
				if m.Error != nil || !strings.Contains(title, tc.acted) {
					t.Fatalf("approved and unchanged, it did not happen: %s, the page shows %s", m.Raw, title)
				}
				return
			}
			if m.Error == nil || !strings.Contains(m.Error.Message, "the page changed after the person approved") {
				t.Fatalf("approved after the page changed: %s", m.Raw)
			}
			if strings.Contains(title, "42") || strings.Contains(title, "cancelled") || strings.Contains(title, "searched") {
				t.Fatalf("something was done: the page shows %s", title)
			}
		})
	}
}
