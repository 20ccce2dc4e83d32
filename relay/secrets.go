package relay

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/secrets"
)

// Secrets typed by reference.
//
// A client types "{{secret:NAME}}" — the whole text of Input.insertText
// (Playwright's fill() and keyboard.insertText(), Puppeteer's
// keyboard.sendCharacter()) or of a key event's text — or calls the
// relay's own CDPRelay.fillSecret {name} on a tab's session. The relay
// finds the frame the keystrokes go to (the focused element, through
// same-origin frames, looked up in an isolated world of the relay's own,
// so that the page's script cannot fake it) and types the value only when
// that frame is on one of the secret's origins. Otherwise the command is
// refused with an error that names the secret and the origin, never the
// value.
//
// Once a secret has been typed, the instance is locked on it: every
// message to the client (and what the live view and the audit log show)
// has the value, in any of its common encodings, replaced by the
// reference (secrets.Lock). Reading the field back, a page that echoes
// it, a request body that posts it: the client sees the reference.

// SecretSource is where the relay finds the secrets it may type: a
// *secrets.Store. Nil: no secrets.
type SecretSource interface {
	// Allowed reports whether secret name may be typed on origin.
	Allowed(name, origin string) bool
	// Origins returns where secret name may be typed, and whether there is
	// such a secret.
	Origins(name string) ([]string, bool)
	// Value reads the secret. Its error never carries the value.
	Value(ctx context.Context, name string) ([]byte, error)
	// AnyField reports whether secret name may be typed into any field
	// that takes text; otherwise into a password field only.
	AnyField(name string) bool
}

type secretBox struct{ p atomic.Pointer[SecretSource] }

func (b *secretBox) load() SecretSource {
	if p := b.p.Load(); p != nil {
		return *p
	}
	return nil
}

// SetSecrets replaces the secrets the relay may type; nil: none. Values
// already typed stay locked.
func (s *Server) SetSecrets(src SecretSource) {
	if src == nil {
		s.secrets.p.Store(nil)
		return
	}
	s.secrets.p.Store(&src)
}

const ruleSecret = "relay:secret"

// secretRef returns the secret a command asks to type, if any: the whole
// text of Input.insertText or of a key event, or CDPRelay.fillSecret's
// name. A text with a reference among other text is refused.
func secretRef(k *cmd) (name string, refused Decision, is bool) {
	var key string
	switch k.m.name {
	case "Input.insertText", "Input.imeSetComposition":
		key = "text"
	case "Input.dispatchKeyEvent":
		key = "text"
	case "CDPRelay.fillSecret":
		n, _, err := exactString(k.params, "name")
		if err != nil || n == "" {
			return "", deny(ruleSecret, "cdprelay: CDPRelay.fillSecret needs the name of a secret"), true
		}
		return n, Decision{}, true
	default:
		return "", Decision{}, false
	}
	text, _, err := exactString(k.params, key)
	if err != nil {
		return "", Decision{}, false // the route step has answered params it cannot read
	}
	n, whole, partial := secrets.ParseRef(text)
	switch {
	case whole:
		return n, Decision{}, true
	case partial:
		return "", deny(ruleSecret, "cdprelay: a secret reference must be the whole text ({{secret:NAME}})"), true
	}
	return "", Decision{}, false
}

// focusProbe finds where keystrokes go: the focused element, through
// same-origin frames. It runs in an isolated world of the relay's own.
const focusProbe = `(() => {
  let doc = document, origin = location.origin;
  for (let depth = 0; depth < 32; depth++) {
    let el = doc.activeElement;
    while (el && el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
    if (!el) break;
    if (el.tagName === "IFRAME" || el.tagName === "FRAME") {
      let inner = null;
      try { inner = el.contentDocument; } catch (e) {}
      if (!inner) return { origin, crossOrigin: true };
      doc = inner;
      origin = inner.location.origin;
      continue;
    }
    return { origin, editable: el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName) };
  }
  return { origin, editable: false };
})()`

// typeSecret types secret name where the focus is in k's tab (or child
// frame), after checking the origin. It runs as a task.
func (c *clientConn) typeSecret(k call, name string) {
	in := c.inst
	src := in.srv.secrets.load()
	if src == nil {
		c.failSecret(k, "cdprelay: no secrets are configured (secrets in the relay's config file)")
		return
	}
	if _, ok := src.Origins(name); !ok {
		c.failSecret(k, "cdprelay: no secret named "+name+" is configured")
		return
	}
	via := k.via
	if via == nil || via.tab == nil {
		c.failSecret(k, "cdprelay: secret "+name+" can be typed into a tab only")
		return
	}
	ctx, cancel := c.callCtx()
	defer cancel()
	origin, why := c.focusOrigin(ctx, via)
	if why != "" {
		c.failSecret(k, "cdprelay: secret "+name+" was not typed: "+why)
		return
	}
	if !src.Allowed(name, origin) {
		os, _ := src.Origins(name)
		in.observe(Event{Actor: ActorClient, Kind: KindSecret, Method: k.method, Rule: ruleSecret, Outcome: OutcomeDenied, Detail: "secret " + name + " refused on " + origin})
		c.failSecret(k, "cdprelay: secret "+name+" may be typed on "+strings.Join(os, ", ")+" only, and the focused field is on "+origin)
		return
	}
	value, err := src.Value(ctx, name)
	if err != nil {
		c.failSecret(k, "cdprelay: "+err.Error())
		return
	}
	// Locked before it is typed: whatever the page says after comes back
	// with the reference.
	in.lockSecret(name, value)
	allowed, _ := src.Origins(name)
	expr, err := typeExpression(value, allowed, src.AnyField(name))
	clear(value)
	if err != nil {
		c.failSecret(k, "cdprelay: secret "+name+" could not be typed")
		return
	}
	// The check and the typing run in one task of the page: the focus
	// cannot move in between.
	res, err := c.relayEval(ctx, via, string(expr))
	clear(expr)
	if err != nil {
		c.failSecret(k, "cdprelay: secret "+name+" was not typed: "+err.Error())
		return
	}
	var r struct {
		Result struct {
			Value struct {
				Typed    bool   `json:"typed"`
				Origin   string `json:"origin"`
				Why      string `json:"why"`
				Password bool   `json:"password"`
			} `json:"value"`
		} `json:"result"`
	}
	if json.Unmarshal(res, &r) != nil || !r.Result.Value.Typed {
		why := r.Result.Value.Why
		if why == "" {
			why = "the page could not be asked"
		}
		c.failSecret(k, "cdprelay: secret "+name+" was not typed: "+why)
		return
	}
	if r.Result.Value.Password {
		in.secretTyped(via, c.typedNode(ctx, via)) // secretfield.go
	}
	in.observe(Event{Actor: ActorClient, Kind: KindSecret, Method: k.method, Target: targetOf(via.tab), Outcome: OutcomeOK, Detail: "secret " + name + " typed on " + r.Result.Value.Origin})
	c.replyEmptyTo(k)
}

// replyEmptyTo answers k with an empty result on the session its reply
// names.
func (c *clientConn) replyEmptyTo(k call) {
	if c.stoppedSince(k) {
		c.replyError(k.id, k.replyTo, codeServerError, msgStopped)
		return
	}
	buf := getBuf()
	*buf = wire.AppendResult(*buf, k.id, sessionToken(k.replyTo), nil)
	c.deliver(buf)
}

// typeExpression is the script that types value where the focus is, in
// the same task as it checks that the focused field's frame is on one of
// origins: nothing of the page runs between the check and the typing.
func typeExpression(value []byte, origins []string, anyField bool) ([]byte, error) {
	v, err := json.Marshal(string(value))
	if err != nil {
		return nil, err
	}
	o, err := json.Marshal(origins)
	if err != nil {
		return nil, err
	}
	expr := make([]byte, 0, len(typeScript)+len(v)+len(o)+8)
	expr = append(expr, '(')
	expr = append(expr, typeScript...)
	expr = append(expr, ")("...)
	expr = append(expr, v...)
	expr = append(expr, ',')
	expr = append(expr, o...)
	expr = append(expr, ',')
	expr = strconv.AppendBool(expr, anyField)
	expr = append(expr, ')')
	clear(v)
	return expr, nil
}

// typeScript finds the focused field as focusProbe does and, when its
// frame is on one of origins, inserts value there as typing would. Unless
// anyField, only into a password field: a text field shows the value in
// every screenshot.
const typeScript = `(value, origins, anyField) => {
  let doc = document, origin = location.origin;
  for (let depth = 0; depth < 32; depth++) {
    let el = doc.activeElement;
    while (el && el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
    if (!el) break;
    if (el.tagName === "IFRAME" || el.tagName === "FRAME") {
      let inner = null;
      try { inner = el.contentDocument; } catch (e) {}
      if (!inner) return { typed: false, why: "the focus is in a frame of another origin inside " + origin };
      doc = inner;
      origin = inner.location.origin;
      continue;
    }
    if (!(el.isContentEditable || /^(INPUT|TEXTAREA)$/.test(el.tagName))) return { typed: false, why: "no field has the focus on " + origin };
    if (!origins.includes(origin)) return { typed: false, why: "the focused field is on " + origin + ", not on " + origins.join(", ") };
    if (!anyField && !(el.tagName === "INPUT" && el.type === "password")) return { typed: false, why: "the focused field on " + origin + " is not a password field (a secret with fields: any may be typed into any field)" };
    const password = el.tagName === "INPUT" && el.type === "password";
    if (password) globalThis.` + typedVar + ` = el;
    if (!doc.execCommand("insertText", false, value)) return { typed: false, why: "the focused field on " + origin + " did not take the text" };
    return { typed: true, origin, password };
  }
  return { typed: false, why: "no field has the focus on " + origin };
}`

func (c *clientConn) failSecret(k call, msg string) {
	c.inst.srv.cfg.Metrics.countRefusal(deny(ruleSecret, msg))
	if c.stoppedSince(k) {
		msg = msgStopped
	}
	c.replyError(k.id, k.replyTo, codeServerError, msg)
	c.warnOnce(k.via, msg)
}

// warnOnce says msg on s's console too (Log.entryAdded), once in a while:
// a client that retries a refused command until its own timeout (as
// Playwright's fill does) shows the console, not the error.
func (c *clientConn) warnOnce(s *session, msg string) {
	if s == nil || s.tab == nil {
		return
	}
	now := time.Now()
	c.inst.lock()
	if c.warned == nil {
		c.warned = map[string]time.Time{}
	}
	key := s.id + "\x00" + msg
	last, seen := c.warned[key]
	if !seen || now.Sub(last) > warnEvery {
		if len(c.warned) > 256 {
			clear(c.warned)
		}
		c.warned[key] = now
		c.event("Log.entryAdded", s, map[string]any{"entry": map[string]any{
			"source": "other", "level": "warning", "text": msg, "timestamp": float64(now.UnixMilli()),
		}})
	}
	c.inst.unlock()
}

// warnEvery is how often warnOnce repeats a warning.
const warnEvery = 5 * time.Second

// focusOrigin asks the tab (or child frame) via where its focus is.
func (c *clientConn) focusOrigin(ctx context.Context, via *session) (origin, why string) {
	res, err := c.relayEval(ctx, via, focusProbe)
	if err != nil {
		return "", "the frame could not be asked where its focus is (" + err.Error() + ")"
	}
	var r struct {
		Result struct {
			Value struct {
				Origin      string `json:"origin"`
				CrossOrigin bool   `json:"crossOrigin"`
				Editable    bool   `json:"editable"`
			} `json:"value"`
		} `json:"result"`
	}
	if json.Unmarshal(res, &r) != nil || r.Result.Value.Origin == "" {
		return "", "the frame could not be asked where its focus is"
	}
	v := r.Result.Value
	switch {
	case v.CrossOrigin:
		return "", "the focus is in a frame of another origin inside " + v.Origin + "; fill the field through that frame"
	case !v.Editable:
		return "", "no field has the focus on " + v.Origin
	}
	return v.Origin, ""
}

// lockSecret hides value behind name's reference in everything the
// instance sends from now on.
func (in *Instance) lockSecret(name string, value []byte) {
	for {
		old := in.locked.Load()
		if old.Has(name) && old.Contains(value) {
			return
		}
		if in.locked.CompareAndSwap(old, old.Add(name, value)) {
			return
		}
	}
}

func (in *Instance) scrubString(s string) string {
	if in.learnURLPasswords([]byte(s)) {
		s = string(scrubURLPasswords(nil, []byte(s)))
	}
	if l := in.locked.Load(); l != nil && l.Contains([]byte(s)) {
		return string(l.Replace(nil, []byte(s)))
	}
	return s
}
