package relay

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"

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
	params, err := json.Marshal(map[string]string{"text": string(value)})
	clear(value)
	if err != nil {
		c.failSecret(k, "cdprelay: secret "+name+" could not be typed")
		return
	}
	in.observe(Event{Actor: ActorClient, Kind: KindSecret, Method: k.method, Outcome: OutcomeOK, Detail: "secret " + name + " typed on " + origin})
	m := lookupMethod([]byte("Input.insertText"))
	if !c.ext().forward(c, k.id, m, []byte(m.name), params, via, k.replyTo) {
		c.replyError(k.id, k.replyTo, codeServerError, "Extension disconnected")
	}
}

func (c *clientConn) failSecret(k call, msg string) {
	c.inst.srv.cfg.Metrics.countRefusal(deny(ruleSecret, msg))
	c.replyError(k.id, k.replyTo, codeServerError, msg)
}

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
	if l := in.locked.Load(); l != nil && l.Contains([]byte(s)) {
		return string(l.Replace(nil, []byte(s)))
	}
	return s
}
