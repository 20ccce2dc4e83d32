package relay

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"

	"github.com/cdprelay/cdprelay/internal/wire"
)

// A password field holding a typed secret.
//
// The relay types a secret into a password field (secrets.go), whose text
// the page shows as dots: in screenshots, the screencast, the live view.
// Without a line of script, a client could make it show the text: turn
// the field's type into text (DOM.setAttributeValue, setAttributesAsText,
// removeAttribute, setOuterHTML, which keeps the element and its value),
// take the dots away with a style (-webkit-text-security: none through
// CSS.setStyleTexts, addRule, setStyleSheetText, a style attribute, a
// <style> or <link> element), or copy the field's node elsewhere
// (DOM.copyTo, moveTo). So while a secret is in a field of a tab, from its
// typing until the document it was typed into is gone (the tab's main
// frame commits another; a document the back/forward cache brings back
// holds it again):
//
//   - the tab's DOM and CSS are read-only to automation: what the read-only
//     tier lets through of them (reads) passes, every other DOM.* and CSS.*
//     command is refused;
//   - a screenshot is taken only after the relay has looked, from its own
//     world, that every field it typed a secret into still shows dots (the
//     page's own "show password" button, pressed with Input, would show
//     the text), and refused otherwise; a screencast is not started, the
//     frames of one the client runs are withheld (the relay acknowledges
//     them), and LayerTree's snapshots are refused.
//
// Script is not held back (Runtime.evaluate reads the field's value in any
// form it likes: README, "Not guaranteed"); the live view shows what the
// page shows, for the people watching.

// secretField is a tab's record of the secrets typed into its fields.
// Guarded by the instance's mutex; holds is written under it and read
// without it, by the pipeline for every command.
type secretField struct {
	// holds: a field of the tab's document holds a typed secret.
	holds atomic.Bool
	// ever: one did, in a document the back/forward cache may bring back.
	ever bool
	// sessions are the sessions the secrets were typed through (nil: the
	// tab's own top-level session), for the look before a screenshot.
	sessions []*session
}

const ruleSecretField = "relay:secret-field"

// The domains a field's look is made of.
var (
	domainDOM = domainIndex["DOM"]
	domainCSS = domainIndex["CSS"]
)

// secretTyped records that a secret was typed into a password field
// through via.
func (in *Instance) secretTyped(via *session) {
	in.lock()
	defer in.unlock()
	t := via.tab
	if t == nil {
		return
	}
	f := &t.secretField
	f.holds.Store(true)
	f.ever = true
	s := via
	if !via.child {
		s = nil
	}
	for _, o := range f.sessions {
		if o == s {
			return
		}
	}
	if len(f.sessions) < maxSecretFieldSessions {
		f.sessions = append(f.sessions, s)
	}
}

// maxSecretFieldSessions bounds the sessions a tab remembers secrets were
// typed through (a frame each); past it, a screenshot is refused, since
// not every frame could be looked at.
const maxSecretFieldSessions = 16

// secretDocument follows the tab's main frame committing a document
// (Page.frameNavigated): the field that held a secret is gone, unless the
// back/forward cache brings a document of the tab back.
func (st *state) secretDocument(t *tab, params []byte) {
	f := &t.secretField
	if !f.ever {
		return
	}
	if string(wire.StringField(params, "type")) == "BackForwardCacheRestore" {
		f.holds.Store(true)
		return
	}
	f.holds.Store(false)
	f.sessions = nil
}

// holdsSecret reports whether a field of t holds a typed secret; it takes
// no lock.
func (t *tab) holdsSecret() bool { return t != nil && t.secretField.holds.Load() }

// secretFieldGate is the secret stage's part for a tab a field of which
// holds a secret (see above). It reports false when it answered or held
// the command.
func (c *clientConn) secretFieldGate(k *cmd) bool {
	if !k.r.tab.holdsSecret() || k.held != nil && k.held.pixelsSeen {
		return true // the pipeline's every command: one atomic load
	}
	c.inst.lock()
	n := len(k.r.tab.secretField.sessions)
	c.inst.unlock()
	name := k.m.name
	switch {
	case k.m.domain == domainDOM || k.m.domain == domainCSS:
		if readOnlyMethods[name] == roAllow || fieldSafe[name] {
			return true
		}
		return c.refuse(k, deny(ruleSecretField, "cdprelay: "+name+" is refused while a password field of this page holds a typed secret: the page's DOM and styles are read-only to automation until it leaves the page"))
	case name == "Page.startScreencast" || strings.HasPrefix(name, "LayerTree.") && pixelMethods[name]:
		return c.refuse(k, deny(ruleSecretField, "cdprelay: "+name+" is refused while a password field of this page holds a typed secret (take screenshots instead)"))
	case name == "Page.captureScreenshot":
		if n >= maxSecretFieldSessions {
			return c.refuse(k, deny(ruleSecretField, "cdprelay: "+name+" is refused: secrets were typed into too many frames of this page to look at them all"))
		}
		c.holdForPixels(k)
		return false
	}
	return true
}

// fieldSafe are the DOM writes that change nothing a page shows of its
// fields: focus (chromedp's Focus), an upload's files (judged by the
// upload rule), DevTools' own bookkeeping.
var fieldSafe = map[string]bool{
	"DOM.focus": true, "DOM.setFileInputFiles": true, "DOM.setInspectedNode": true,
	"DOM.setNodeStackTracesEnabled": true, "DOM.markUndoableState": true,
}

// holdForPixels holds k, a screenshot, while the relay looks at the page:
// it goes on when every field holding a secret shows dots, and is refused
// otherwise.
func (c *clientConn) holdForPixels(k *cmd) {
	in := c.inst
	st := in.lock()
	h := k.held
	if h == nil {
		h = &heldCmd{key: lineKey{c, k.r.tab}, k: copyCmd(k), method: k.m.name}
		l := st.lines[h.key]
		if l == nil {
			l = &line{}
			st.lines[h.key] = l
			c.lines.Add(1)
		}
		l.q = append(l.q, h)
		c.inflight.Add(1)
	}
	h.stage = holdProbing
	t := k.r.tab
	var vias []*session
	for _, s := range t.secretField.sessions {
		if s == nil {
			s = t.session
		}
		if s == nil || st.sessions[s.id] != s {
			s = nil // gone: that frame cannot be looked at
		}
		vias = append(vias, s)
	}
	in.unlock()
	k.out.kind = outHeld
	c.wg.Add(1)
	in.tasks.spawn("look at a secret's field", func() {
		defer c.wg.Done()
		ctx, cancel := c.callCtx()
		defer cancel()
		why := ""
		for _, via := range vias {
			if why = c.fieldShowsText(ctx, via); why != "" {
				break
			}
		}
		st := in.lock()
		defer in.unlock()
		if h.stage != holdProbing || st.lines[h.key] == nil {
			return // stopped, or the client went
		}
		if why == "" {
			h.stage, h.pixelsSeen = holdWaiting, true
		} else {
			d := deny(ruleSecretField, "cdprelay: "+h.method+" is refused: "+why)
			h.stage, h.denial = holdDenied, d.Message
			in.srv.cfg.Metrics.countRefusal(d)
			in.observe(Event{Actor: ActorClient, Kind: KindDenied, Method: h.method, Target: targetOf(t), Rule: d.Rule, Outcome: OutcomeDenied, Detail: d.Message})
		}
		in.startDrain(st, h.key)
	})
}

// fieldShowsText looks, from the relay's world of via's frame, at the
// fields the relay typed a secret into: "" when each still shows dots (or
// is gone), else why not.
func (c *clientConn) fieldShowsText(ctx context.Context, via *session) string {
	if via == nil {
		return "a frame a secret was typed into can no longer be looked at"
	}
	res, err := c.relayEval(ctx, via, fieldProbe)
	if err != nil {
		return "the page could not be looked at (" + err.Error() + "), and a password field of it holds a typed secret"
	}
	var r struct {
		Result struct {
			Value struct {
				Shown bool `json:"shown"`
			} `json:"value"`
		} `json:"result"`
		ExceptionDetails json.RawMessage `json:"exceptionDetails"`
	}
	if json.Unmarshal(res, &r) != nil || r.ExceptionDetails != nil {
		return "the page could not be looked at, and a password field of it holds a typed secret"
	}
	if r.Result.Value.Shown {
		return "a field holding a typed secret shows its text (it is no longer a password field, or its dots are styled away)"
	}
	return ""
}

// secretFieldsVar is where, in the relay's own world of a frame, the
// fields the relay typed a secret into are kept (typeScript marks them).
const secretFieldsVar = "__cdprelaySecretFields"

// fieldProbe says whether a field the relay typed a secret into shows its
// text: one still in its document, not empty, that is no password field
// or whose dots a style took away.
const fieldProbe = `(() => {
  const fields = globalThis.` + secretFieldsVar + `;
  if (!fields) return { shown: false };
  for (const ref of fields) {
    const el = ref.deref();
    if (!el) { fields.delete(ref); continue; }
    if (!el.isConnected || el.value === "") continue;
    const view = el.ownerDocument.defaultView;
    const style = view ? view.getComputedStyle(el) : null;
    const dots = el.tagName === "INPUT" && el.type === "password" && style && style.webkitTextSecurity !== "none";
    if (!dots) return { shown: true };
  }
  return { shown: false };
})()`

// withholdFrame reports whether a frame of the client's screencast of t is
// withheld (a field of t holds a secret); the relay acknowledges it, so
// that Chrome goes on streaming.
func (st *state) withholdFrame(t *tab, params []byte) bool {
	if !t.holdsSecret() {
		return false
	}
	if id, ok := wire.Int(wire.Field(params, "sessionId")); ok {
		st.fire(t.id, "", "Page.screencastFrameAck", map[string]any{"sessionId": id})
	}
	return true
}
