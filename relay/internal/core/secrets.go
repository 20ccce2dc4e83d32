package core

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/relay/internal/cdp"
	"github.com/cdprelay/cdprelay/relay/internal/creds"
	"github.com/cdprelay/cdprelay/relay/internal/link"
	"github.com/cdprelay/cdprelay/secrets"
)

// Secrets typed by reference.
//
// A client types "{{secret:NAME}}" — the whole text of Input.insertText
// (Playwright's fill() and keyboard.insertText(), Puppeteer's
// keyboard.sendCharacter()) or of a key event's text — or calls the
// relay's own CDPRelay.fillSecret {name} on a tab's session. The relay
// finds the focused field and the frame it is in, and judges them by the
// browser's answers (relayworld.go): the field is a password field by its
// node, the frame is on one of the secret's origins by the origin Chrome
// gave it. Then it types the value in the same task of the page as it
// checks that the focus is still there. Otherwise the command is refused
// with an error that names the secret and the origin, never the value.
//
// The value goes to the page as an argument of the relay's call, never in
// the text of a script: no script source, no event and no stack trace
// carries it, and the world it runs in is the relay's own, which the
// client cannot reach (ctxguard.go).
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
func (s *Relay) SetSecrets(src SecretSource) {
	if src == nil {
		s.secrets.p.Store(nil)
		return
	}
	s.secrets.p.Store(&src)
}

const RuleSecret = "relay:secret"

// A heap snapshot holds every string of the page, a typed secret among
// them, and HeapProfiler reaches objects by their place in the heap, past
// the contexts they belong to: refused while secrets are configured
// (Chrome refuses the domain to an extension too, today).
var domainHeapProfiler = cdp.DomainIndex("HeapProfiler")

const msgHeap = "cdprelay: HeapProfiler would read the page's memory, typed secrets included: refused while the relay has secrets"

// SecretRef returns the secret a command asks to type, if any: the whole
// text of Input.insertText or of a key event, or CDPRelay.fillSecret's
// name. A text with a reference among other text is refused.
func SecretRef(k *Cmd) (name string, refused Decision, is bool) {
	var key string
	switch k.M.Name {
	case "Input.insertText", "Input.imeSetComposition":
		key = "text"
	case "Input.dispatchKeyEvent":
		key = "text"
	case "CDPRelay.fillSecret":
		n, _, err := exactString(k.Params, "name")
		if err != nil || n == "" {
			return "", deny(RuleSecret, "cdprelay: CDPRelay.fillSecret needs the name of a secret"), true
		}
		return n, Decision{}, true
	default:
		return "", Decision{}, false
	}
	text, _, err := exactString(k.Params, key)
	if err != nil {
		return "", Decision{}, false // the route step has answered params it cannot read
	}
	n, whole, partial := secrets.ParseRef(text)
	switch {
	case whole:
		return n, Decision{}, true
	case partial:
		return "", deny(RuleSecret, "cdprelay: a secret reference must be the whole text ({{secret:NAME}})"), true
	}
	return "", Decision{}, false
}

// typeSecret types secret name where the focus is in k's tab (or child
// frame), after checking the origin. It runs as a task.
func (c *ClientConn) typeSecret(k Call, name string) {
	in := c.Inst
	src := in.Srv.secrets.load()
	if src == nil {
		c.failSecret(k, "cdprelay: no secrets are configured (secrets in the relay's config file)")
		return
	}
	if _, ok := src.Origins(name); !ok {
		c.failSecret(k, "cdprelay: no secret named "+name+" is configured")
		return
	}
	via := k.via
	if via == nil || via.Tab == nil {
		c.failSecret(k, "cdprelay: secret "+name+" can be typed into a tab only")
		return
	}
	ctx, cancel := c.CallCtx()
	defer cancel()
	look, err := c.newLook(ctx, via)
	if err != nil {
		c.failSecret(k, "cdprelay: secret "+name+" was not typed: the page could not be looked at ("+err.Error()+")")
		return
	}
	defer look.close()
	f, err := look.focus(ctx)
	anyField := src.AnyField(name)
	why := ""
	switch {
	case errors.Is(err, errNoFocus):
		why = "no field has the focus"
	case err != nil:
		why = "the frame could not be asked where its focus is (" + err.Error() + ")"
	default:
		why = fieldRefusal(f, anyField)
	}
	if why != "" {
		c.failSecret(k, "cdprelay: secret "+name+" was not typed: "+why)
		return
	}
	if !src.Allowed(name, f.origin) {
		os, _ := src.Origins(name)
		in.Observe(Event{Actor: ActorClient, Kind: KindSecret, Method: k.Method, Rule: RuleSecret, Outcome: OutcomeDenied, Detail: "secret " + name + " refused on " + f.origin})
		c.failSecret(k, "cdprelay: secret "+name+" may be typed on "+strings.Join(os, ", ")+" only, and the focused field is on "+f.origin)
		return
	}
	value, err := src.Value(ctx, name)
	if err != nil {
		c.failSecret(k, "cdprelay: "+err.Error())
		return
	}
	// Locked before it is typed: whatever the page says after comes back
	// with the reference.
	in.LockSecret(name, value)
	// The check that the focus is where it was judged and the typing run
	// in one task of the page: the focus cannot move in between.
	res, err := look.call(ctx, creds.InsertScript, f.chain, []map[string]any{{"value": string(value)}, {"value": anyField}}, true)
	clear(value)
	if err != nil {
		c.failSecret(k, "cdprelay: secret "+name+" was not typed: "+err.Error())
		return
	}
	var r struct {
		Value *string `json:"value"`
	}
	if json.Unmarshal(res, &r) != nil || r.Value == nil {
		c.failSecret(k, "cdprelay: secret "+name+" was not typed: the page could not be asked")
		return
	}
	if *r.Value != "" {
		c.failSecret(k, "cdprelay: secret "+name+" was not typed: "+*r.Value+" on "+f.origin)
		return
	}
	if f.el.LocalName == "input" && strings.EqualFold(f.el.attr("type"), "password") {
		// The field stays a password field while it holds the value
		// (secretfield.go).
		in.secretTyped(via, f.el.BackendNodeID)
	}
	in.Observe(Event{Actor: ActorClient, Kind: KindSecret, Method: k.Method, Target: targetOf(via.Tab), Outcome: OutcomeOK, Detail: "secret " + name + " typed on " + f.origin})
	c.replyEmptyTo(k)
}

// fieldRefusal says why the focused element f may not take a secret,
// from what the browser says of it; "" when it may. Unless anyField, only
// a password field: a text field shows the value in every screenshot.
func fieldRefusal(f focused, anyField bool) string {
	el := f.el
	if el.isFrame() {
		return "the focus is in a frame of another origin inside " + f.origin + "; fill the field through that frame"
	}
	field := el.NodeName == "INPUT" || el.NodeName == "TEXTAREA" || el.attr("contenteditable") != ""
	switch {
	case anyField:
		return "" // a field by the page's own judgement: the typing checks it is editable
	case !field:
		return "no field has the focus on " + f.origin
	case el.NodeName != "INPUT" || !strings.EqualFold(strings.TrimSpace(el.attr("type")), "password"):
		return "the focused field on " + f.origin + " is not a password field (a secret with fields: any may be typed into any field)"
	}
	return ""
}

// replyEmptyTo answers k with an empty result on the session its reply
// names.
func (c *ClientConn) replyEmptyTo(k Call) {
	if c.stoppedSince(k) {
		c.replyError(k.id, k.replyTo, CodeServerError, MsgStopped)
		return
	}
	buf := link.GetBuf()
	*buf = wire.AppendResult(*buf, k.id, sessionToken(k.replyTo), nil)
	c.deliver(buf)
}

func (c *ClientConn) failSecret(k Call, msg string) {
	c.Inst.Srv.Cfg.Metrics.countRefusal(deny(RuleSecret, msg))
	if c.stoppedSince(k) {
		msg = MsgStopped
	}
	c.replyError(k.id, k.replyTo, CodeServerError, msg)
	c.warnOnce(k.via, msg)
}

// warnOnce says msg on s's console too (Log.entryAdded), once in a while:
// a client that retries a refused command until its own timeout (as
// Playwright's fill does) shows the console, not the error.
func (c *ClientConn) warnOnce(s *Session, msg string) {
	if s == nil || s.Tab == nil {
		return
	}
	now := time.Now()
	c.Inst.Lock()
	if c.warned == nil {
		c.warned = map[string]time.Time{}
	}
	key := s.Id + "\x00" + msg
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
	c.Inst.Unlock()
}

// warnEvery is how often warnOnce repeats a warning.
const warnEvery = 5 * time.Second

// LockSecret hides value behind name's reference in everything the
// instance sends from now on.
func (in *Instance) LockSecret(name string, value []byte) {
	for {
		old := in.Locked.Load()
		if old.Has(name) && old.Contains(value) {
			return
		}
		if in.Locked.CompareAndSwap(old, old.Add(name, value)) {
			return
		}
	}
}

// ScrubString returns s as the client would see it (creds.ScrubString),
// after locking the URL passwords it names.
func (in *Instance) ScrubString(s string) string {
	untaken := in.LearnURLPasswords([]byte(s))
	return creds.ScrubString(s, untaken, in.Locked.Load())
}
