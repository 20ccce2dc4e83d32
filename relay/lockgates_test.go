package relay

import (
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cdprelay/cdprelay/relay/internal/config"
	"github.com/cdprelay/cdprelay/relay/internal/creds"

	"github.com/cdprelay/cdprelay/internal/fakeext"
)

// passwordFieldPage plays a page on https://a.example whose focused field
// is a password field (backendNodeId 5), and the look at that field
// before a screenshot as shown says.
func passwordFieldPage(shown *atomic.Bool) (*fakePage, fakeext.Handler) {
	page := newFakePage(1, "https://a.example")
	page.setFocus(passwordField(tid(1)))
	return page, func(tabID int, sid, method string, p json.RawMessage) (any, error) {
		switch {
		case method == "DOM.resolveNode" && strings.Contains(string(p), `"backendNodeId":5`):
			return map[string]any{"object": map[string]any{"type": "object", "objectId": "field-2"}}, nil
		case method == "Runtime.callFunctionOn" && strings.Contains(string(p), "webkitTextSecurity"):
			return map[string]any{"result": map[string]any{"type": "boolean", "value": !shown.Load()}}, nil
		case method == "DOM.describeNode" && strings.Contains(string(p), `"nodeId"`):
			return fakeext.DefaultHandler(tabID, sid, method, p) // the client's read
		}
		return page.handle(tabID, sid, method, p)
	}
}

// forwarded reports whether the fake extension got method since n.
func forwarded(e *fakeext.Ext, n int, method string) bool {
	for _, cmd := range commandsSince(e, n) {
		if strings.Contains(string(cmd.Params), `"`+method+`"`) {
			return true
		}
	}
	return false
}

// TestSecretFieldGuard: once a secret is in a password field of a tab, no
// command turns the field into a text field or styles its dots away, nor
// copies it: the tab's DOM and CSS are read-only to automation, reads go
// on; a screenshot is taken after the relay looked at the field, and
// refused when it shows its text (the page's own "show password"); a
// screencast is not started, and the frames of the client's own are
// withheld. When the tab's document goes, so does all of it, and a document
// the back/forward cache brings back holds it again.
func TestSecretFieldGuard(t *testing.T) {
	var shown atomic.Bool
	h := newHarness(t, config.Config{Secrets: staticSecrets(t)})
	page, handler := passwordFieldPage(&shown)
	e := h.ext(fakeext.Options{Tabs: twoTabs[:1], Handler: handler})
	page.e.Store(e)
	c := h.client()
	sess := h.autoAttach(c)[0]
	// A screencast of the client's own, running before the secret is typed.
	h.call(c, sess, "Page.startScreencast", map[string]any{"format": "jpeg"})
	h.call(c, sess, "Input.insertText", map[string]any{"text": "{{secret:github}}"})

	writes := []struct {
		method string
		params any
	}{
		{"DOM.setAttributeValue", map[string]any{"nodeId": 7, "name": "type", "value": "text"}},
		{"DOM.setAttributesAsText", map[string]any{"nodeId": 7, "text": `type="text"`}},
		{"DOM.removeAttribute", map[string]any{"nodeId": 7, "name": "type"}},
		{"DOM.setOuterHTML", map[string]any{"nodeId": 7, "outerHTML": `<input id="password" type="text">`}},
		{"DOM.setNodeName", map[string]any{"nodeId": 7, "name": "textarea"}},
		{"DOM.setNodeValue", map[string]any{"nodeId": 9, "value": "input { -webkit-text-security: none }"}},
		{"DOM.copyTo", map[string]any{"nodeId": 7, "targetNodeId": 3}},
		{"DOM.moveTo", map[string]any{"nodeId": 7, "targetNodeId": 3}},
		{"DOM.undo", nil},
		{"DOM.setAttributeValue", map[string]any{"nodeId": 7, "name": "style", "value": "-webkit-text-security: none"}},
		{"CSS.setStyleTexts", map[string]any{"edits": []any{map[string]any{"styleSheetId": "1", "range": map[string]int{}, "text": "-webkit-text-security: none"}}}},
		{"CSS.addRule", map[string]any{"styleSheetId": "1", "ruleText": "input { -webkit-text-security: none }", "location": map[string]int{}}},
		{"CSS.setStyleSheetText", map[string]any{"styleSheetId": "1", "text": "input { -webkit-text-security: none; font-family: x }"}},
		{"CSS.createStyleSheet", map[string]any{"frameId": "F"}},
		{"CSS.forcePseudoState", map[string]any{"nodeId": 7, "forcedPseudoClasses": []string{"hover"}}},
		{"Page.startScreencast", map[string]any{"format": "png"}},
		{"LayerTree.makeSnapshot", map[string]any{"layerId": "1"}},
	}
	for _, w := range writes {
		before := len(e.Commands())
		m := h.callMsg(c, sess, w.method, w.params)
		if m.Error == nil || !strings.Contains(m.Error.Message, "holds a typed secret") {
			t.Errorf("%s: %s", w.method, m.Raw)
		}
		if forwarded(e, before, w.method) {
			t.Errorf("%s reached the tab", w.method)
		}
	}
	// Reads go on, and what changes nothing a page shows (a focus).
	for _, r := range []string{"DOM.getDocument", "DOM.getOuterHTML", "CSS.getComputedStyleForNode", "DOM.describeNode", "DOM.focus"} {
		before := len(e.Commands())
		if m := h.callMsg(c, sess, r, map[string]any{"nodeId": 7}); m.Error != nil || !forwarded(e, before, r) {
			t.Errorf("%s: %s", r, m.Raw)
		}
	}

	// A screenshot, after a look at the field: dots, it is taken.
	before := len(e.Commands())
	if m := h.callMsg(c, sess, "Page.captureScreenshot", nil); m.Error != nil || !forwarded(e, before, "Page.captureScreenshot") {
		t.Fatalf("a screenshot of the dots: %s", m.Raw)
	}
	looked := false
	for _, cmd := range commandsSince(e, before) {
		looked = looked || strings.Contains(string(cmd.Params), "webkitTextSecurity")
	}
	if !looked {
		t.Error("the screenshot was taken without a look at the field")
	}
	// The page's own "show password" shows the text: refused.
	shown.Store(true)
	before = len(e.Commands())
	if m := h.callMsg(c, sess, "Page.captureScreenshot", nil); m.Error == nil || !strings.Contains(m.Error.Message, "shows its text") || forwarded(e, before, "Page.captureScreenshot") {
		t.Errorf("a screenshot of the text: %s", m.Raw)
	}
	shown.Store(false)

	// The client's own screencast: its frames are withheld, and acked.
	from := len(c.Messages())
	before = len(e.Commands())
	e.Event(1, "", "Page.screencastFrame", map[string]any{"data": "AAAA", "sessionId": 5, "metadata": map[string]any{}})
	h.waitFor("the withheld frame acked", func() bool { return forwarded(e, before, "Page.screencastFrameAck") })
	h.call(c, sess, "DOM.getDocument", nil)
	for _, m := range c.Messages()[from:] {
		if m.Method == "Page.screencastFrame" {
			t.Errorf("a frame reached the client: %s", m.Raw)
		}
	}

	// A frame of another origin's own session is not the tab's screencast:
	// its frame reaches the client on that session, and the relay acks
	// nothing for it on the tab's.
	frameInfo := `{"targetId":"FRAME1","type":"iframe","title":"","url":"https://ads.example/","attached":true,"canAccessOpener":false,"browserContextId":"FAKECONTEXT0000000000000000000000"}`
	e.Event(1, "", "Target.attachedToTarget", json.RawMessage(`{"sessionId":"CHILD1","targetInfo":`+frameInfo+`,"waitingForDebugger":false}`))
	h.waitFor("the frame's session", func() bool { return clientSaw(c, from, "CHILD1") })
	from, before = len(c.Messages()), len(e.Commands())
	e.Event(1, "CHILD1", "Page.screencastFrame", map[string]any{"data": "CHILDPIXELS", "sessionId": 6, "metadata": map[string]any{}})
	h.waitFor("the frame's screencast frame", func() bool { return clientSaw(c, from, "CHILDPIXELS") })
	for _, m := range c.Messages()[from:] {
		if m.Method == "Page.screencastFrame" && m.SessionID != "CHILD1" {
			t.Errorf("the frame's screencast frame reached another session: %s", m.Raw)
		}
	}
	if forwarded(e, before, "Page.screencastFrameAck") {
		t.Error("the relay acked a frame's screencast frame itself")
	}

	// The tab leaves the page: its DOM is the client's again.
	e.Event(1, "", "Page.frameNavigated", map[string]any{"frame": map[string]any{"id": tid(1), "loaderId": "L2", "url": "https://a.example/home", "securityOrigin": "https://a.example", "mimeType": "text/html"}, "type": "Navigation"})
	h.waitFor("the guard lifted", func() bool {
		n := len(e.Commands())
		return h.callMsg(c, sess, "DOM.setAttributeValue", map[string]any{"nodeId": 7, "name": "type", "value": "text"}).Error == nil && forwarded(e, n, "DOM.setAttributeValue")
	})
	// Back to it from the back/forward cache: the field holds it again.
	e.Event(1, "", "Page.frameNavigated", map[string]any{"frame": map[string]any{"id": tid(1), "loaderId": "L1", "url": "https://a.example/login", "securityOrigin": "https://a.example", "mimeType": "text/html"}, "type": "BackForwardCacheRestore"})
	h.waitFor("the guard back", func() bool {
		return h.callMsg(c, sess, "DOM.setAttributeValue", map[string]any{"nodeId": 7, "name": "type", "value": "text"}).Error != nil
	})
}

// TestLockUnscannable: while a secret is locked, the commands whose output
// the lock cannot read are refused, saying why; before, they go on.
func TestLockUnscannable(t *testing.T) {
	h := newHarness(t, config.Config{})
	e := h.ext(fakeext.Options{Tabs: twoTabs[:1]})
	c := h.client()
	sess := h.autoAttach(c)[0]
	cmds := []struct {
		method string
		params any
	}{
		{"Page.printToPDF", map[string]any{"displayHeaderFooter": true}},
		{"HeapProfiler.takeHeapSnapshot", nil},
		{"HeapProfiler.stopTrackingHeapObjects", map[string]any{"reportProgress": false}},
		{"Network.streamResourceContent", map[string]any{"requestId": "9"}},
		{"Tracing.start", map[string]any{"transferMode": "ReturnAsStream", "streamCompression": "gzip"}},
	}
	for _, k := range cmds {
		if m := h.callMsg(c, sess, k.method, k.params); m.Error != nil {
			t.Errorf("%s with no secret locked: %s", k.method, m.Raw)
		}
	}
	creds.LockSecret(h.srv.Default(), "site", []byte("correct horse battery staple"))
	for _, k := range cmds {
		before := len(e.Commands())
		m := h.callMsg(c, sess, k.method, k.params)
		if m.Error == nil || !strings.Contains(m.Error.Message, "secret") || forwarded(e, before, k.method) {
			t.Errorf("%s: %s", k.method, m.Raw)
		}
	}
	// A trace that is not compressed is read as any stream is.
	if m := h.callMsg(c, sess, "Tracing.start", map[string]any{"transferMode": "ReturnAsStream", "streamCompression": "none"}); m.Error != nil {
		t.Errorf("Tracing.start uncompressed: %s", m.Raw)
	}
}
