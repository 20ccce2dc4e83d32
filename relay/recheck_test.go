package relay

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/internal/fakeext"
)

// changingPage is a fake tab whose page can change between an approval
// card and the approval: what the relay's world sees at the point or in
// focus, and Chrome's id of the element there.
type changingPage struct {
	mu     sync.Mutex
	target map[string]any // what the describing probe finds
	node   int            // backendNodeId at the point, or of the focused element
}

func (p *changingPage) set(target map[string]any, node int) {
	p.mu.Lock()
	p.target, p.node = target, node
	p.mu.Unlock()
}

func (p *changingPage) handler(tab int, sid, method string, params json.RawMessage) (any, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case method == "Page.createIsolatedWorld":
		return map[string]any{"executionContextId": 77}, nil
	case method == "Runtime.evaluate" && strings.Contains(string(params), "cdprelay-recheck"):
		return map[string]any{"result": map[string]any{"type": "object", "subtype": "node", "objectId": "focused-1"}}, nil
	case method == "Runtime.evaluate" && strings.Contains(string(params), `"contextId":77`):
		return map[string]any{"result": map[string]any{"type": "object", "value": p.target}}, nil
	case method == "DOM.getNodeForLocation":
		return map[string]any{"backendNodeId": p.node, "frameId": "F"}, nil
	case method == "DOM.describeNode":
		return map[string]any{"node": map[string]any{"backendNodeId": p.node, "nodeName": "INPUT"}}, nil
	}
	return fakeext.DefaultHandler(tab, sid, method, params)
}

var (
	cancelButton = map[string]any{"origin": "https://a.example", "kind": "button", "text": "Cancel", "submit": false}
	orderButton  = map[string]any{"origin": "https://a.example", "kind": "button", "text": "Place order", "submit": true}
	aFrame       = map[string]any{"origin": "https://a.example", "kind": "frame", "frame": "https://pay.example"}
	emailField   = map[string]any{"origin": "https://a.example", "kind": "input", "text": "Email", "form": true}
)

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
		name       string
		first      step
		asked      string         // the card
		before     map[string]any // the page when asked
		beforeNode int
		after      map[string]any // the page when approved
		afterNode  int
		refused    string // "" when it goes on; else what the refusal says
		// beforeRelease changes the page once the press went, before its
		// release is judged.
		beforeRelease     func(p *changingPage)
		releaseRefused    bool
		releaseNotChecked bool
	}{
		{name: "unchanged", first: press, asked: `click the button "Cancel" on a.example`, before: cancelButton, beforeNode: 5, after: cancelButton, afterNode: 5},
		{name: "the layout shifted", first: press, asked: `click the button "Cancel" on a.example`, before: cancelButton, beforeNode: 5, after: orderButton, afterNode: 9,
			refused: `after the person approved click the button "Cancel" on a.example: now it would click the submit button "Place order" on a.example`, releaseNotChecked: true},
		{name: "the element was swapped for one that looks the same", first: press, asked: `click the button "Cancel" on a.example`, before: cancelButton, beforeNode: 5, after: cancelButton, afterNode: 6,
			refused: `after the person approved click the button "Cancel" on a.example: now it would click the button "Cancel"`, releaseNotChecked: true},
		{name: "a frame moved in", first: press, asked: `click the button "Cancel" on a.example`, before: cancelButton, beforeNode: 5, after: aFrame, afterNode: 7,
			refused: "now it would click inside a frame from pay.example", releaseNotChecked: true},
		{name: "the release would land elsewhere", first: press, asked: `click the button "Cancel" on a.example`, before: cancelButton, beforeNode: 5, after: cancelButton, afterNode: 5,
			beforeRelease: func(p *changingPage) { p.set(orderButton, 9) }, releaseRefused: true},
		{name: "Enter, the focus unchanged", first: enter, asked: `press Enter in the field "Email" of a form on a.example (it submits the form)`, before: emailField, beforeNode: 3, after: emailField, afterNode: 3},
		{name: "Enter, the focus moved to another form", first: enter, asked: `press Enter in the field "Email" of a form on a.example (it submits the form)`, before: emailField, beforeNode: 3, after: emailField, afterNode: 4,
			refused: `after the person approved press Enter in the field "Email" of a form on a.example (it submits the form)`},
		{name: "typed text, the focus unchanged", first: insert, asked: `type "hello" into the input "Email" on a.example`, before: emailField, beforeNode: 3, after: emailField, afterNode: 3},
		{name: "typed text, the focus moved", first: insert, asked: `type "hello" into the input "Email" on a.example`, before: emailField, beforeNode: 3, after: cancelButton, afterNode: 5,
			refused: `now it would type "hello" into the button "Cancel" on a.example`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := &auditRecorder{}
			page := &changingPage{}
			page.set(tc.before, tc.beforeNode)
			h := newHarness(t, Config{Policy: askPolicy{methods: map[string]bool{"Input.dispatchMouseEvent": true, "Input.dispatchKeyEvent": true, "Input.insertText": true}}, ApprovalTimeout: time.Hour, Observer: rec})
			e := h.ext(fakeext.Options{Tabs: twoTabs[:1], Handler: page.handler})
			c := h.client()
			sess := h.autoAttach(c)[0]
			in := h.srv.Default()
			sent := len(e.Commands())
			first := h.send(c, sess, tc.first.method, tc.first.params)
			var a []ApprovalStatus
			h.waitFor("the card", func() bool { a = in.Status().Approvals; return len(a) == 1 })
			if a[0].What != tc.asked {
				t.Fatalf("the card says %q, want %q", a[0].What, tc.asked)
			}
			page.set(tc.after, tc.afterNode)
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
				if !rec.find(KindApproval, "the page changed after the person approved") {
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
