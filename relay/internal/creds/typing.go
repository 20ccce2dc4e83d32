package creds

import (
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/core"
	"github.com/cdprelay/cdprelay/relay/internal/look"

	"github.com/cdprelay/cdprelay/internal/wire"
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
// browser's answers (package look): the field is a password field by its
// node, the frame is on one of the secret's origins by the origin Chrome
// gave it. Then it types the value in the same task of the page as it
// checks that the focus is still there. Otherwise the command is refused
// with an error that names the secret and the origin, never the value.
//
// The value goes to the page as an argument of the relay's call, never in
// the text of a script: no script source, no event and no stack trace
// carries it, and the world it runs in is the relay's own, which the
// client cannot reach (the tiers' contexts.go).
//
// Once a secret has been typed, the instance is locked on it: every
// message to the client (and what the live view and the audit log show)
// has the value, in any of its common encodings, replaced by the
// reference (secrets.Lock). Reading the field back, a page that echoes
// it, a request body that posts it: the client sees the reference.

// SecretRef returns the secret a command asks to type, if any: the whole
// text of Input.insertText or of a key event, or CDPRelay.fillSecret's
// name. A text with a reference among other text is refused.
func SecretRef(k *core.Cmd) (name string, refused core.Decision, is bool) {
	var key string
	switch k.M.Name {
	case "Input.insertText", "Input.imeSetComposition":
		key = "text"
	case "Input.dispatchKeyEvent":
		key = "text"
	case "CDPRelay.fillSecret":
		n, _, err := core.ExactString(k.Params, "name")
		if err != nil || n == "" {
			return "", core.Denial(api.RuleSecret, "cdprelay: CDPRelay.fillSecret needs the name of a secret"), true
		}
		return n, core.Decision{}, true
	default:
		return "", core.Decision{}, false
	}
	text, _, err := core.ExactString(k.Params, key)
	if err != nil {
		return "", core.Decision{}, false // the route step has answered params it cannot read
	}
	n, whole, partial := secrets.ParseRef(text)
	switch {
	case whole:
		return n, core.Decision{}, true
	case partial:
		return "", core.Denial(api.RuleSecret, "cdprelay: a secret reference must be the whole text ({{secret:NAME}})"), true
	}
	return "", core.Decision{}, false
}

// typeSecret types secret name where the focus is in k's tab (or child
// frame), after checking the origin. It runs as a task.
func typeSecret(c *core.ClientConn, k core.Call, name string) {
	in := c.Inst
	src := in.Srv.Secrets.Load()
	if src == nil {
		failSecret(c, k, "cdprelay: no secrets are configured (secrets in the relay's config file)")
		return
	}
	if _, ok := src.Origins(name); !ok {
		failSecret(c, k, "cdprelay: no secret named "+name+" is configured")
		return
	}
	via := k.Via
	if via == nil || via.Tab == nil {
		failSecret(c, k, "cdprelay: secret "+name+" can be typed into a tab only")
		return
	}
	ctx, cancel := c.CallCtx()
	defer cancel()
	lk, err := look.New(ctx, c, via)
	if err != nil {
		failSecret(c, k, "cdprelay: secret "+name+" was not typed: the page could not be looked at ("+err.Error()+")")
		return
	}
	defer lk.Close()
	f, err := lk.Focus(ctx)
	anyField := src.AnyField(name)
	why := ""
	switch {
	case errors.Is(err, look.ErrNoFocus):
		why = "no field has the focus"
	case err != nil:
		why = "the frame could not be asked where its focus is (" + err.Error() + ")"
	default:
		why = fieldRefusal(f, anyField)
	}
	if why != "" {
		failSecret(c, k, "cdprelay: secret "+name+" was not typed: "+why)
		return
	}
	if !src.Allowed(name, f.Origin) {
		os, _ := src.Origins(name)
		in.Observe(core.Event{Actor: api.ActorClient, Kind: api.KindSecret, Method: k.Method, Rule: api.RuleSecret, Outcome: api.OutcomeDenied, Detail: "secret " + name + " refused on " + f.Origin})
		failSecret(c, k, "cdprelay: secret "+name+" may be typed on "+strings.Join(os, ", ")+" only, and the focused field is on "+f.Origin)
		return
	}
	value, err := src.Value(ctx, name)
	if err != nil {
		failSecret(c, k, "cdprelay: "+err.Error())
		return
	}
	// Locked before it is typed: whatever the page says after comes back
	// with the reference.
	LockSecret(in, name, value)
	// The check that the focus is where it was judged and the typing run
	// in one task of the page: the focus cannot move in between.
	res, err := lk.Call(ctx, InsertScript, f.Chain, []map[string]any{{"value": string(value)}, {"value": anyField}}, true)
	clear(value)
	if err != nil {
		failSecret(c, k, "cdprelay: secret "+name+" was not typed: "+err.Error())
		return
	}
	var r struct {
		Value *string `json:"value"`
	}
	if json.Unmarshal(res, &r) != nil || r.Value == nil {
		failSecret(c, k, "cdprelay: secret "+name+" was not typed: the page could not be asked")
		return
	}
	if *r.Value != "" {
		failSecret(c, k, "cdprelay: secret "+name+" was not typed: "+*r.Value+" on "+f.Origin)
		return
	}
	if f.El.LocalName == "input" && strings.EqualFold(f.El.Attr("type"), "password") {
		// The field stays a password field while it holds the value
		// (fieldwatch.go).
		secretTyped(in, via, f.El.BackendNodeID)
	}
	in.Observe(core.Event{Actor: api.ActorClient, Kind: api.KindSecret, Method: k.Method, Target: core.TargetOf(via.Tab), Outcome: api.OutcomeOK, Detail: "secret " + name + " typed on " + f.Origin})
	replyEmptyTo(c, k)
}

// fieldRefusal says why the focused element f may not take a secret,
// from what the browser says of it; "" when it may. Unless anyField, only
// a password field: a text field shows the value in every screenshot.
func fieldRefusal(f look.Focused, anyField bool) string {
	el := f.El
	if el.IsFrame() {
		return "the focus is in a frame of another origin inside " + f.Origin + "; fill the field through that frame"
	}
	field := el.NodeName == "INPUT" || el.NodeName == "TEXTAREA" || el.Attr("contenteditable") != ""
	switch {
	case anyField:
		return "" // a field by the page's own judgement: the typing checks it is editable
	case !field:
		return "no field has the focus on " + f.Origin
	case el.NodeName != "INPUT" || !strings.EqualFold(strings.TrimSpace(el.Attr("type")), "password"):
		return "the focused field on " + f.Origin + " is not a password field (a secret with fields: any may be typed into any field)"
	}
	return ""
}

// replyEmptyTo answers k with an empty result on the session its reply
// names.
func replyEmptyTo(c *core.ClientConn, k core.Call) {
	if c.StoppedSince(k) {
		c.ReplyError(k.Id, k.ReplyTo, core.CodeServerError, api.MsgStopped)
		return
	}
	buf := link.GetBuf()
	*buf = wire.AppendResult(*buf, k.Id, core.SessionToken(k.ReplyTo), nil)
	c.Deliver(buf)
}

func failSecret(c *core.ClientConn, k core.Call, msg string) {
	c.Inst.Srv.Cfg.Metrics.CountRefusal(core.Denial(api.RuleSecret, msg))
	if c.StoppedSince(k) {
		msg = api.MsgStopped
	}
	c.ReplyError(k.Id, k.ReplyTo, core.CodeServerError, msg)
	warnOnce(c, k.Via, msg)
}

// warnOnce says msg on s's console too (Log.entryAdded), once in a while:
// a client that retries a refused command until its own timeout (as
// Playwright's fill does) shows the console, not the error.
func warnOnce(c *core.ClientConn, s *core.Session, msg string) {
	if s == nil || s.Tab == nil {
		return
	}
	now := time.Now()
	c.Inst.Lock()
	if clientSlot.Of(c).warned == nil {
		clientSlot.Of(c).warned = map[string]time.Time{}
	}
	key := s.Id + "\x00" + msg
	last, seen := clientSlot.Of(c).warned[key]
	if !seen || now.Sub(last) > warnEvery {
		if len(clientSlot.Of(c).warned) > 256 {
			clear(clientSlot.Of(c).warned)
		}
		clientSlot.Of(c).warned[key] = now
		c.Event("Log.entryAdded", s, map[string]any{"entry": map[string]any{
			"source": "other", "level": "warning", "text": msg, "timestamp": float64(now.UnixMilli()),
		}})
	}
	c.Inst.Unlock()
}

// warnEvery is how often warnOnce repeats a warning.
const warnEvery = 5 * time.Second

// LockSecret hides value behind name's reference in everything the
// instance sends from now on.
func LockSecret(in *core.Instance, name string, value []byte) {
	for {
		old := instanceSlot.Of(in).Locked.Load()
		if old.Has(name) && old.Contains(value) {
			return
		}
		if instanceSlot.Of(in).Locked.CompareAndSwap(old, old.Add(name, value)) {
			return
		}
	}
}

// scrubString returns s as the client would see it (ScrubString),
// after locking the URL passwords it names: the scrubber's String.
func scrubString(in *core.Instance, s string) string {
	untaken := LearnURLPasswords(in, []byte(s))
	return ScrubString(s, untaken, instanceSlot.Of(in).Locked.Load())
}

// scrubFrame returns the frame the client gets for b: its URL passwords
// and the secrets typed in the instance replaced by their references. The
// scrubber's Frame, for every frame to the client.
func scrubFrame(in *core.Instance, b *[]byte) *[]byte {
	if LearnURLPasswords(in, *b) {
		nb := link.GetBuf()
		*nb = ScrubURLPasswords(*nb, *b)
		link.PutBuf(b)
		b = nb
	}
	if l := instanceSlot.Of(in).Locked.Load(); l != nil && l.Contains(*b) {
		// A secret typed in the instance: the client sees its reference.
		nb := link.GetBuf()
		*nb = l.Replace(*nb, *b)
		link.PutBuf(b)
		b = nb
	}
	return b
}

// Scrubber is the credentials' scrubber (core.Services.Scrubber).
func Scrubber() core.Scrubber { return core.Scrubber{Frame: scrubFrame, String: scrubString} }
