package relay

import (
	"strings"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/config"

	"github.com/cdprelay/cdprelay/internal/fakeext"
)

// Elements of a page on a.example that can change between an approval
// card and the approval (played by fakePage: what the browser's hit test
// finds at the point, what has the focus, and what Chrome says of it), each
// with Chrome's id of it.
func cancelButton(id int64) *fakeNode {
	return &fakeNode{id: id, name: "BUTTON", attrs: []string{"type", "button"}, in: tid(1), role: "button", label: "Cancel"}
}

func orderButton(id int64) *fakeNode {
	return &fakeNode{id: id, name: "BUTTON", in: tid(1), role: "button", label: "Place order", form: true}
}

func aFrame(id int64) *fakeNode {
	return &fakeNode{id: id, name: "IFRAME", attrs: []string{"src", "https://pay.example/checkout"}, in: tid(1), holds: "PAYFRAME"}
}

func emailField(id int64) *fakeNode {
	return &fakeNode{id: id, name: "INPUT", attrs: []string{"type", "email"}, in: tid(1), role: "textbox", label: "Email", form: true}
}

// showing puts n where the pointer is and in focus.
func showing(p *fakePage, n *fakeNode) {
	p.setAt(n)
	p.setFocus(n)
}

// TestApprovedTargetRechecked: a person approves an input command whose
// card names what it acts on; when the page has changed by then, the
// command is refused saying what it would do now, and nothing reaches
// the tab; when it has not, it goes on. A release must land on the
// element its approved press did.
func TestApprovedTargetRechecked(t *testing.T) {
	t.Parallel()
	type step struct {
		method string
		params map[string]any
	}
	press := step{"Input.dispatchMouseEvent", map[string]any{"type": "mousePressed", "x": 10.5, "y": 20, "button": "left", "clickCount": 1}}
	release := step{"Input.dispatchMouseEvent", map[string]any{"type": "mouseReleased", "x": 10.5, "y": 20, "button": "left", "clickCount": 1}}
	enter := step{"Input.dispatchKeyEvent", map[string]any{"type": "keyDown", "key": "Enter", "code": "Enter", "windowsVirtualKeyCode": 13, "text": "\r"}}
	insert := step{"Input.insertText", map[string]any{"text": "hello"}}
	tests := []struct {
		name    string
		first   step
		asked   string    // the card
		before  *fakeNode // the page when asked
		after   *fakeNode // the page when approved
		refused string    // "" when it goes on; else what the refusal says
		// beforeRelease changes the page once the press went, before its
		// release is judged.
		beforeRelease     func(p *fakePage)
		releaseRefused    bool
		releaseNotChecked bool
	}{
		{name: "unchanged", first: press, asked: `click the button "Cancel" on a.example`, before: cancelButton(5), after: cancelButton(5)},
		{name: "the layout shifted", first: press, asked: `click the button "Cancel" on a.example`, before: cancelButton(5), after: orderButton(9),
			refused: `after the person approved click the button "Cancel" on a.example: now it would click the submit button "Place order" on a.example`, releaseNotChecked: true},
		{name: "the element was swapped for one that looks the same", first: press, asked: `click the button "Cancel" on a.example`, before: cancelButton(5), after: cancelButton(6),
			refused: `after the person approved click the button "Cancel" on a.example: now it would click the button "Cancel"`, releaseNotChecked: true},
		{name: "a frame moved in", first: press, asked: `click the button "Cancel" on a.example`, before: cancelButton(5), after: aFrame(7),
			refused: "now it would click inside a frame from pay.example", releaseNotChecked: true},
		{name: "the page scrolled away: nothing under the point", first: press, asked: `click the button "Cancel" on a.example`, before: cancelButton(5), after: nil,
			refused: `the page changed after the person approved click the button "Cancel" on a.example`, releaseNotChecked: true},
		{name: "the release would land elsewhere", first: press, asked: `click the button "Cancel" on a.example`, before: cancelButton(5), after: cancelButton(5),
			beforeRelease: func(p *fakePage) { showing(p, orderButton(9)) }, releaseRefused: true},
		{name: "Enter, the focus unchanged", first: enter, asked: `press Enter in the field "Email" of a form on a.example (it submits the form)`, before: emailField(3), after: emailField(3)},
		{name: "Enter, the focus moved to another form", first: enter, asked: `press Enter in the field "Email" of a form on a.example (it submits the form)`, before: emailField(3), after: emailField(4),
			refused: `after the person approved press Enter in the field "Email" of a form on a.example (it submits the form)`},
		{name: "typed text, the focus unchanged", first: insert, asked: `type "hello" into the field "Email" on a.example`, before: emailField(3), after: emailField(3)},
		{name: "typed text, the focus moved", first: insert, asked: `type "hello" into the field "Email" on a.example`, before: emailField(3), after: cancelButton(5),
			refused: `now it would type "hello" into the button "Cancel" on a.example`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := &auditRecorder{}
			page := newFakePage(1, "https://a.example")
			showing(page, tc.before)
			h := newHarness(t, config.Config{Policy: askPolicy{methods: map[string]bool{"Input.dispatchMouseEvent": true, "Input.dispatchKeyEvent": true, "Input.insertText": true}}, ApprovalTimeout: time.Hour, Observer: rec})
			e := h.ext(fakeext.Options{Tabs: twoTabs[:1], Handler: page.handle})
			page.e.Store(e)
			c := h.client()
			sess := h.autoAttach(c)[0]
			in := h.srv.Default()
			sent := len(e.Commands())
			first := h.send(c, sess, tc.first.method, tc.first.params)
			var a []api.ApprovalStatus
			h.waitFor("the card", func() bool { a = in.Status().Approvals; return len(a) == 1 })
			if a[0].What != tc.asked {
				t.Fatalf("the card says %q, want %q", a[0].What, tc.asked)
			}
			showing(page, tc.after)
			if err := in.Approve(a[0].ID, "viewer-1"); err != nil {
				t.Fatal(err)
			}
			m, _ := h.reply(c, first)
			acted := 0
			for _, s := range sentOn(e, sent) {
				if strings.HasPrefix(s, tc.first.method) {
					acted++
				}
			}
			if tc.refused != "" {
				if m.Error == nil || !strings.Contains(m.Error.Message, tc.refused) {
					t.Fatalf("approved after the page changed: %s, want an error saying %q", m.Raw, tc.refused)
				}
				if acted != 0 {
					t.Fatalf("it reached the tab: %v", sentOn(e, sent))
				}
				if !rec.find(api.KindApproval, "the page changed after the person approved") {
					t.Errorf("no audit record: %+v", rec.ev)
				}
			} else if m.Error != nil || acted != 1 {
				t.Fatalf("approved, unchanged: %s (sent %v)", m.Raw, sentOn(e, sent))
			}
			if tc.first.method != "Input.dispatchMouseEvent" {
				return
			}
			if tc.beforeRelease != nil {
				tc.beforeRelease(page)
			}
			sent = len(e.Commands())
			m = h.callMsg(c, sess, release.method, release.params)
			released := false
			for _, s := range sentOn(e, sent) {
				released = released || strings.Contains(s, "mouseReleased")
			}
			if tc.releaseRefused {
				if m.Error == nil || !strings.Contains(m.Error.Message, "the release would not land where the approved press did") || released {
					t.Fatalf("a release that would land elsewhere: %s (sent %v)", m.Raw, sentOn(e, sent))
				}
				return
			}
			if m.Error != nil || !released {
				t.Fatalf("the release: %s", m.Raw)
			}
			if looked := indexOf(sentOn(e, sent), "DOM.getNodeForLocation") >= 0; looked == tc.releaseNotChecked {
				t.Errorf("the release was looked at: %v", looked)
			}
		})
	}
}
