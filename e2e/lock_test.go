package e2e

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"html"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/text/encoding/charmap"

	"github.com/cdprelay/cdprelay/secrets"
)

// The secret lock against what a page and Chrome make of a typed value: a
// page that mirrors the password field into attributes (DOM.getOuterHTML,
// DOM.getAttributes, Runtime.getProperties give it HTML-escaped, a saved
// page quoted-printable), a form on a windows-1252 page (its post
// percent-encoded in Latin-1), and the password field itself, which no
// command may turn into a field that shows its text.
//
// What the client received is searched here with decoders of the test's
// own (HTML references, quoted-printable, percent-encoding in UTF-8 and in
// windows-1252, base64), not the lock's.

// decodedLeaks returns where, in frames, the client can read pw: in a JSON
// string of a frame as it is, HTML-unescaped, quoted-printable decoded
// (and then HTML-unescaped), percent-decoded as UTF-8 or windows-1252, and
// all of those in base64 text.
func decodedLeaks(frames [][]byte, pw string) []string {
	var out []string
	var look func(s, via string, depth int)
	look = func(s, via string, depth int) {
		for name, dec := range map[string]string{
			"as it is":                  s,
			"HTML":                      html.UnescapeString(s),
			"quoted-printable":          qpDecode(s),
			"quoted-printable HTML":     html.UnescapeString(qpDecode(s)),
			"percent UTF-8":             percentDecode(s, false),
			"percent windows-1252":      percentDecode(s, true),
			"percent windows-1252 HTML": html.UnescapeString(percentDecode(s, true)),
		} {
			if i := strings.Index(dec, pw); i >= 0 {
				out = append(out, via+name+": …"+dec[max(0, i-60):min(len(dec), i+len(pw)+20)]+"…")
				return
			}
		}
		if depth > 0 {
			return
		}
		for _, run := range strings.FieldsFunc(s, func(r rune) bool {
			return !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '+' || r == '/' || r == '=')
		}) {
			if len(run) < 8 {
				continue
			}
			if b, err := base64.StdEncoding.DecodeString(run); err == nil {
				look(string(b), via+"base64 ", depth+1)
			}
		}
	}
	for _, f := range frames {
		for _, s := range allJSONStrings(f) {
			look(s, "", 0)
		}
	}
	return out
}

// allJSONStrings returns every string of a JSON frame.
func allJSONStrings(f []byte) []string {
	var out []string
	dec := json.NewDecoder(bytes.NewReader(f))
	for {
		tok, err := dec.Token()
		if err != nil {
			return out
		}
		if s, ok := tok.(string); ok {
			out = append(out, s)
		}
	}
}

// qpDecode decodes quoted-printable: soft line breaks out, =XX as bytes.
func qpDecode(s string) string {
	s = strings.ReplaceAll(strings.ReplaceAll(s, "=\r\n", ""), "=\n", "")
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '=' && i+2 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
				b.WriteByte(byte(v))
				i += 2
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// percentDecode decodes a form's percent-encoding, the bytes as UTF-8 or,
// with latin, as windows-1252.
func percentDecode(s string, latin bool) string {
	d, err := url.QueryUnescape(s)
	if err != nil {
		d, err = url.PathUnescape(s)
		if err != nil {
			return ""
		}
	}
	if latin {
		if u, err := charmap.Windows1252.NewDecoder().String(d); err == nil {
			return u
		}
	}
	return d
}

// docNode returns the node id of session's document (DOM.getDocument,
// which makes the node ids of an earlier one stale).
func (a *attacker) docNode(session string) int64 {
	a.t.Helper()
	res, err := a.call(session, "DOM.getDocument", map[string]any{"depth": -1})
	if err != nil {
		a.t.Fatalf("DOM.getDocument: %v", err)
	}
	var doc struct{ Root struct{ NodeID int64 } }
	json.Unmarshal(res, &doc)
	return doc.Root.NodeID
}

// nodeID returns the DOM node id of the first element below root that
// selector matches.
func (a *attacker) nodeID(session string, root int64, selector string) int64 {
	a.t.Helper()
	res, err := a.call(session, "DOM.querySelector", map[string]any{"nodeId": root, "selector": selector})
	if err != nil {
		a.t.Fatalf("DOM.querySelector %s: %v", selector, err)
	}
	var q struct{ NodeID int64 }
	json.Unmarshal(res, &q)
	if q.NodeID == 0 {
		a.t.Fatalf("no %s", selector)
	}
	return q.NodeID
}

// lockSecret configures the secret "site" on the main origin, value pw,
// for the rest of the test.
func lockSecret(t *testing.T, pw string) {
	t.Helper()
	t.Setenv("CDPRELAY_E2E_LOCK_SECRET", pw)
	useSecrets(t, secrets.Config{Name: "site", Origins: []string{env.Pages.Main}, Env: "CDPRELAY_E2E_LOCK_SECRET"})
}

// TestLockMirroredField: a page mirrors the password field into
// attributes as it is typed. The client types the secret by reference and
// reads the page every way Chrome gives it: DOM.getOuterHTML (Chrome's
// serializer escapes & < > " in attributes), DOM.getAttributes,
// Runtime.getProperties of the element, script reading outerHTML, a
// saved page (Page.captureSnapshot, quoted-printable with soft line breaks
// that fall inside the references), the accessibility tree. It reads the
// reference, never the value.
func TestLockMirroredField(t *testing.T) {
	requireEnv(t)
	ctx := testCtx(t, 60*time.Second)
	pw := `S&y"m<b=o>l'` + secret("-") + `&copy x`
	lockSecret(t, pw)
	a := newClient(ctx, t)
	session := a.tab(env.Pages.Main + "/lock/mirror.html")
	from := a.mark()
	a.focus(session, "password")
	if _, err := a.call(session, "Input.insertText", map[string]any{"text": ref}); err != nil {
		t.Fatalf("typing the secret: %v", err)
	}
	if v, _ := a.eval(session, "document.getElementById('echo').getAttribute('data-echo').length"); v != strconv.Itoa(len(pw)) {
		t.Fatalf("the page mirrored %s characters, want %d", v, len(pw))
	}
	doc := a.docNode(session)
	echo := a.nodeID(session, doc, "#echo")
	res, err := a.call(session, "DOM.getOuterHTML", map[string]any{"nodeId": a.nodeID(session, doc, "html")})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(res), "data-echo") {
		t.Fatalf("no mirror in the page's HTML: %s", res)
	}
	if _, err := a.call(session, "DOM.getAttributes", map[string]any{"nodeId": echo}); err != nil {
		t.Fatal(err)
	}
	res, err = a.call(session, "DOM.resolveNode", map[string]any{"nodeId": echo})
	if err != nil {
		t.Fatal(err)
	}
	var obj struct{ Object struct{ ObjectID string } }
	json.Unmarshal(res, &obj)
	for _, own := range []bool{true, false} {
		if _, err := a.call(session, "Runtime.getProperties", map[string]any{"objectId": obj.Object.ObjectID, "ownProperties": own, "generatePreview": true}); err != nil {
			t.Fatal(err)
		}
	}
	a.eval(session, "document.getElementById('echo').outerHTML + document.getElementById('copy').outerHTML")
	if res, err := a.call(session, "Page.captureSnapshot", map[string]any{"format": "mhtml"}); err != nil || !strings.Contains(string(res), "quoted-printable") {
		t.Fatalf("Page.captureSnapshot: %v %.200s", err, res)
	}
	if _, err := a.call(session, "Accessibility.getFullAXTree", nil); err != nil {
		t.Fatal(err)
	}
	if leaks := decodedLeaks(a.c.Frames()[from:], pw); len(leaks) > 0 {
		t.Errorf("the client read the typed secret:\n  %s", strings.Join(leaks, "\n  "))
	}
	// What it read is the reference, where the value was.
	if !bytes.Contains(bytes.Join(a.c.Frames()[from:], nil), []byte("{{secret:site}}")) {
		t.Error("the reference is nowhere in what the client read")
	}
}

// TestLockLegacyCharsetForm: a login form on a windows-1252 page posts a
// secret of Latin-1 characters percent-encoded in that charset
// (P%E4ssw%F6rd), in Network.requestWillBeSent's postData and its base64
// postDataEntries. The client reads the reference.
func TestLockLegacyCharsetForm(t *testing.T) {
	requireEnv(t)
	ctx := testCtx(t, 60*time.Second)
	pw := "Pässwörd " + secret("é") + " ½"
	lockSecret(t, pw)
	a := newClient(ctx, t)
	session := a.tab(env.Pages.Main + "/lock/legacy.html")
	if v, _ := a.eval(session, "document.characterSet"); v != `"windows-1252"` {
		t.Fatalf("the page's charset is %s", v)
	}
	from := a.mark()
	a.focus(session, "password")
	if _, err := a.call(session, "Input.insertText", map[string]any{"text": ref}); err != nil {
		t.Fatalf("typing the secret: %v", err)
	}
	if _, err := a.eval(session, "document.getElementById('login').requestSubmit()"); err != nil {
		t.Fatal(err)
	}
	a.waitLoaded(session, env.Pages.Main+"/lock/posted")
	posted := false
	for _, p := range a.eventsFor("Network.requestWillBeSent", "/lock/posted") {
		posted = posted || strings.Contains(string(p), "password=")
	}
	if !posted {
		t.Fatal("the form's post is not in Network.requestWillBeSent")
	}
	if leaks := decodedLeaks(a.c.Frames()[from:], pw); len(leaks) > 0 {
		t.Errorf("the client read the typed secret:\n  %s", strings.Join(leaks, "\n  "))
	}
}

// TestSecretFieldStaysPassword: the secret is typed into a password field;
// no command without script turns it into a field that shows its text:
// its type set, its attributes rewritten or removed, its outer HTML
// replaced (Chrome keeps the element and its value), its name changed,
// its node copied, its dots styled away by a rule, a style sheet or a
// style attribute. Reads of the page go on. A screenshot shows the dots;
// after the page's own "show password" button, pressed with Input, it is
// refused. Copying the field's text (select all, copy) into another field
// gives nothing; printing to PDF is refused. Once the tab has left the
// page, its DOM is the client's again.
func TestSecretFieldStaysPassword(t *testing.T) {
	requireEnv(t)
	ctx := testCtx(t, 90*time.Second)
	pw := secret("Pw-") + "!x"
	lockSecret(t, pw)
	a := newClient(ctx, t)
	session := a.tab(env.Pages.Main + "/lock/mirror.html")
	a.focus(session, "password")
	if _, err := a.call(session, "Input.insertText", map[string]any{"text": ref}); err != nil {
		t.Fatalf("typing the secret: %v", err)
	}
	from := a.mark()
	doc := a.docNode(session)
	field := a.nodeID(session, doc, "#password")
	body := a.nodeID(session, doc, "body")
	masked := func(what string) {
		t.Helper()
		v, err := a.eval(session, `(() => { const el = document.getElementById('password'); return [el.type, getComputedStyle(el).webkitTextSecurity, el.value.length].join(' '); })()`)
		if err != nil || v != quote("password disc "+strconv.Itoa(len(pw))) {
			t.Errorf("after %s the field is %s %v, want a password field with its dots", what, v, err)
		}
	}
	masked("typing")
	if _, err := a.call(session, "CSS.enable", nil); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		method string
		params any
	}{
		{"DOM.setAttributeValue", map[string]any{"nodeId": field, "name": "type", "value": "text"}},
		{"DOM.setAttributesAsText", map[string]any{"nodeId": field, "text": `type="text" id="password"`, "name": "type"}},
		{"DOM.removeAttribute", map[string]any{"nodeId": field, "name": "type"}},
		{"DOM.setOuterHTML", map[string]any{"nodeId": field, "outerHTML": `<input id="password" name="password" type="text">`}},
		{"DOM.setNodeName", map[string]any{"nodeId": field, "name": "textarea"}},
		{"DOM.setAttributeValue", map[string]any{"nodeId": field, "name": "style", "value": "-webkit-text-security: none"}},
		{"DOM.copyTo", map[string]any{"nodeId": field, "targetNodeId": body}},
		{"DOM.moveTo", map[string]any{"nodeId": field, "targetNodeId": body}},
		{"CSS.createStyleSheet", map[string]any{"frameId": a.topFrameID(session)}},
		{"CSS.addRule", map[string]any{"styleSheetId": "1", "ruleText": "input { -webkit-text-security: none !important }", "location": map[string]int{"startLine": 0, "startColumn": 0, "endLine": 0, "endColumn": 0}}},
		{"CSS.setStyleSheetText", map[string]any{"styleSheetId": "1", "text": "input { -webkit-text-security: none !important }"}},
		{"Page.printToPDF", nil},
	} {
		_, err := a.call(session, c.method, c.params)
		if err == nil || !strings.Contains(err.Error(), "cdprelay") {
			t.Errorf("%s: %v", c.method, err)
		}
		masked(c.method)
	}
	// Reads go on.
	if _, err := a.call(session, "DOM.getOuterHTML", map[string]any{"nodeId": field}); err != nil {
		t.Errorf("DOM.getOuterHTML: %v", err)
	}
	if _, err := a.call(session, "CSS.getComputedStyleForNode", map[string]any{"nodeId": field}); err != nil {
		t.Errorf("CSS.getComputedStyleForNode: %v", err)
	}
	if _, err := a.call(session, "Page.captureScreenshot", nil); err != nil {
		t.Errorf("a screenshot of the dots: %v", err)
	}
	// Select all and copy, then paste into a text field: the user name
	// field's text comes over (the clipboard works), a password field
	// gives nothing to copy.
	copyPaste := func(from string) string {
		a.eval(session, "document.getElementById('paste').value = ''; document.getElementById("+quote(from)+").focus()")
		for _, k := range []map[string]any{
			{"type": "rawKeyDown", "modifiers": 2, "key": "a", "code": "KeyA", "windowsVirtualKeyCode": 65, "commands": []string{"selectAll"}},
			{"type": "keyUp", "modifiers": 2, "key": "a", "code": "KeyA", "windowsVirtualKeyCode": 65},
			{"type": "rawKeyDown", "modifiers": 2, "key": "c", "code": "KeyC", "windowsVirtualKeyCode": 67, "commands": []string{"copy"}},
			{"type": "keyUp", "modifiers": 2, "key": "c", "code": "KeyC", "windowsVirtualKeyCode": 67},
		} {
			a.call(session, "Input.dispatchKeyEvent", k)
		}
		a.eval(session, "document.getElementById('paste').focus()")
		for _, k := range []map[string]any{
			{"type": "rawKeyDown", "modifiers": 2, "key": "v", "code": "KeyV", "windowsVirtualKeyCode": 86, "commands": []string{"paste"}},
			{"type": "keyUp", "modifiers": 2, "key": "v", "code": "KeyV", "windowsVirtualKeyCode": 86},
		} {
			a.call(session, "Input.dispatchKeyEvent", k)
		}
		return a.field(session, "paste")
	}
	before := copyPaste("user")
	if before != "person" {
		t.Logf("the clipboard does not work here (the user name field pasted %q)", before)
	}
	// Nothing is copied: the clipboard still holds the user name.
	if v := copyPaste("password"); strings.Contains(v, pw) || strings.Contains(v, ref) || v != before {
		t.Errorf("the text field got %q from the password field", v)
	}
	// The page's own "show password", pressed: the screenshot is refused.
	res, err := a.call(session, "DOM.getBoxModel", map[string]any{"nodeId": a.nodeID(session, doc, "#show")})
	if err != nil {
		t.Fatal(err)
	}
	var box struct{ Model struct{ Content []float64 } }
	json.Unmarshal(res, &box)
	x, y := (box.Model.Content[0]+box.Model.Content[4])/2, (box.Model.Content[1]+box.Model.Content[5])/2
	for _, typ := range []string{"mousePressed", "mouseReleased"} {
		if _, err := a.call(session, "Input.dispatchMouseEvent", map[string]any{"type": typ, "x": x, "y": y, "button": "left", "clickCount": 1}); err != nil {
			t.Fatal(err)
		}
	}
	if v, _ := a.eval(session, "document.getElementById('password').type"); v != `"text"` {
		t.Fatalf("the page's button did not show the password: %s", v)
	}
	if _, err := a.call(session, "Page.captureScreenshot", nil); err == nil || !strings.Contains(err.Error(), "shows its text") {
		t.Errorf("a screenshot of the shown password: %v", err)
	}
	a.eval(session, "document.getElementById('show').click()")
	if _, err := a.call(session, "Page.captureScreenshot", nil); err != nil {
		t.Errorf("a screenshot of the dots again: %v", err)
	}
	if leaks := decodedLeaks(a.c.Frames()[from:], pw); len(leaks) > 0 {
		t.Errorf("the client read the typed secret:\n  %s", strings.Join(leaks, "\n  "))
	}
	// The tab leaves the page: its DOM is the client's again.
	a.navigate(session, env.Pages.Main+"/lock/mirror.html?again")
	if _, err := a.call(session, "DOM.setAttributeValue", map[string]any{"nodeId": a.nodeID(session, a.docNode(session), "#password"), "name": "type", "value": "text"}); err != nil {
		t.Errorf("DOM.setAttributeValue on a page without a secret: %v", err)
	}
}

// topFrameID is the main frame's id of session's page.
func (a *attacker) topFrameID(session string) string {
	a.t.Helper()
	res, err := a.call(session, "Page.getFrameTree", nil)
	if err != nil {
		a.t.Fatalf("Page.getFrameTree: %v", err)
	}
	var r struct {
		FrameTree struct{ Frame struct{ ID string } }
	}
	json.Unmarshal(res, &r)
	return r.FrameTree.Frame.ID
}

// TestLockPlaywright: Playwright fills the password field of the mirroring
// page with the secret's reference, reads the page as it reads one
// (content(), getAttribute, an aria snapshot, a saved page through a CDP
// session), turns the field into a text field with DOM commands (refused:
// it stays a password field), screenshots its dots, presses the page's own
// "show password" and screenshots again (refused), prints it to PDF
// (refused). Nothing it received or wrote holds the value.
func TestLockPlaywright(t *testing.T) {
	requireEnv(t)
	pw := `S&y"m<b=o>l'` + secret("-")
	lockSecret(t, pw)
	tp := newTap(t)
	var rep struct {
		Content, DataEcho, Title, Copy     string
		SetType, SetOuter, Type, ShownType string
		ScreenshotDots, ScreenshotShown    string
		ScreenshotAgain, PDF               string
	}
	out, stdout := script(t, tp, "lock-playwright.mjs", "field", &rep)
	if rep.DataEcho != ref || !strings.Contains(rep.Content, "{{secret:site}}") {
		t.Errorf("the mirror reads %q, the page's content %.300q; want the reference", rep.DataEcho, rep.Content)
	}
	for what, v := range map[string]string{"DOM.setAttributeValue": rep.SetType, "DOM.setOuterHTML": rep.SetOuter, "Page.printToPDF": rep.PDF} {
		if !strings.Contains(v, "cdprelay") {
			t.Errorf("%s: %s", what, v)
		}
	}
	if rep.Type != "password" {
		t.Errorf("after the DOM commands the field is a %s field", rep.Type)
	}
	if rep.ScreenshotDots != "done" || rep.ScreenshotAgain != "done" {
		t.Errorf("screenshots of the dots: %q, %q", rep.ScreenshotDots, rep.ScreenshotAgain)
	}
	if rep.ShownType != "text" || !strings.Contains(rep.ScreenshotShown, "shows its text") {
		t.Errorf("a screenshot of the shown password (%s field): %q", rep.ShownType, rep.ScreenshotShown)
	}
	if leaks := decodedLeaks(tp.Frames(), pw); len(leaks) > 0 {
		t.Errorf("the client read the typed secret:\n  %s", strings.Join(leaks, "\n  "))
	}
	set := secretSet{}
	set.add(t, "the secret", pw)
	noLeaksIn(t, set, tp, out, stdout)
	if b, err := os.ReadFile(filepath.Join(out, "report.json")); err != nil || len(decodedLeaks([][]byte{b}, pw)) > 0 {
		t.Errorf("the report holds the value (%v)", err)
	}
}
