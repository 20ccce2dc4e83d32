package creds

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"

	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/core"
	"github.com/cdprelay/cdprelay/relay/internal/lines"
	"github.com/cdprelay/cdprelay/relay/internal/look"

	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/relay/internal/cdp"
)

// A password field holding a typed secret.
//
// The relay types a secret into a password field (typing.go), whose text
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
	// fields are the fields the secrets were typed into, for the look
	// before a screenshot.
	fields []typedField
}

// typedField is a field a secret was typed into: the session it was typed
// through (nil: the tab's own top-level session), and the element as
// Chrome knows it (its backendNodeId; 0 when it could not be told).
type typedField struct {
	via  *core.Session
	node int64
}

// The domains a field's look is made of.
var (
	domainDOM = cdp.DomainIndex("DOM")
	domainCSS = cdp.DomainIndex("CSS")
)

// secretTyped records that a secret was typed through via into the
// password field Chrome knows as backendNodeId node (0: not known; a
// screenshot is then refused while the field holds it, since the relay
// cannot look at it).
func secretTyped(in *core.Instance, via *core.Session, node int64) {
	in.Lock()
	defer in.Unlock()
	t := via.Tab
	if t == nil {
		return
	}
	f := &tabSlot.Of(t).secretField
	f.holds.Store(true)
	f.ever = true
	s := via
	if !via.Child {
		s = nil
	}
	ref := typedField{s, node}
	for _, o := range f.fields {
		if o == ref {
			return
		}
	}
	if len(f.fields) < maxSecretFields {
		f.fields = append(f.fields, ref)
	} else {
		f.fields[0] = typedField{} // too many to look at: refused
	}
}

// maxSecretFields bounds the fields a tab remembers secrets were typed
// into; past it, a screenshot is refused, since not every field could be
// looked at.
const maxSecretFields = 16

// secretDocument follows the tab's main frame committing a document
// (Page.frameNavigated): the field that held a secret is gone, unless the
// back/forward cache brings a document of the tab back.
func secretDocument(st *core.State, t *core.Tab, params []byte) {
	f := &tabSlot.Of(t).secretField
	if !f.ever {
		return
	}
	if string(wire.StringField(params, "type")) == "BackForwardCacheRestore" {
		f.holds.Store(true)
		return
	}
	f.holds.Store(false)
	f.fields = nil
}

// holdsSecret reports whether a field of t holds a typed secret; it takes
// no lock.
func holdsSecret(t *core.Tab) bool { return t != nil && tabSlot.Of(t).secretField.holds.Load() }

// secretFieldGate is the secret stage's part for a tab a field of which
// holds a secret (see above). It reports false when it answered or held
// the command.
func secretFieldGate(c *core.ClientConn, k *core.Cmd) bool {
	if !holdsSecret(k.Route.Tab) || k.Held != nil && k.Held.PixelsSeen {
		return true // the pipeline's every command: one atomic load
	}

	name := k.M.Name
	switch {
	case k.M.Domain == domainDOM || k.M.Domain == domainCSS:
		if k.M.Reads || FieldSafe(name) {
			return true
		}
		return c.Refuse(k, core.Denial(api.RuleSecretField, "cdprelay: "+name+" is refused while a password field of this page holds a typed secret: the page's DOM and styles are read-only to automation until it leaves the page"))
	case name == "Page.startScreencast" || strings.HasPrefix(name, "LayerTree.") && k.M.Pixels:
		return c.Refuse(k, core.Denial(api.RuleSecretField, "cdprelay: "+name+" is refused while a password field of this page holds a typed secret (take screenshots instead)"))
	case name == "Page.captureScreenshot":
		holdForPixels(c, k)
		return false
	}
	return true
}

// holdForPixels holds k, a screenshot, while the relay looks at the page:
// it goes on when every field holding a secret shows dots, and is refused
// otherwise.
func holdForPixels(c *core.ClientConn, k *core.Cmd) {
	in := c.Inst
	st := in.Lock()
	h := lines.Hold(st, c, k)
	h.Stage = core.HoldProbing
	t := k.Route.Tab
	fields := make([]typedField, 0, len(tabSlot.Of(t).secretField.fields))
	for _, f := range tabSlot.Of(t).secretField.fields {
		if f.via == nil {
			f.via = t.Session
		}
		if f.via == nil || st.Sessions[f.via.Id] != f.via {
			f.via = nil // gone: that frame cannot be looked at
		}
		fields = append(fields, f)
	}
	in.Unlock()
	k.Out.Kind = core.OutHeld
	c.Wg.Add(1)
	in.Tasks.Spawn("look at a secret's field", func() {
		defer c.Wg.Done()
		ctx, cancel := c.CallCtx()
		defer cancel()
		why := ""
		for _, f := range fields {
			if why = fieldShowsText(ctx, c, f); why != "" {
				break
			}
		}
		st := in.Lock()
		defer in.Unlock()
		if h.Stage != core.HoldProbing || !lines.Live(st, h.Key) {
			return // stopped, or the client went
		}
		if why == "" {
			h.Stage, h.PixelsSeen = core.HoldWaiting, true
		} else {
			d := core.Denial(api.RuleSecretField, "cdprelay: "+h.Method+" is refused: "+why)
			h.Stage, h.Denial = core.HoldDenied, d.Message
			in.Srv.Cfg.Metrics.CountRefusal(d)
			in.Observe(core.Event{Actor: api.ActorClient, Kind: api.KindDenied, Method: h.Method, Target: core.TargetOf(t), Rule: d.Rule, Outcome: api.OutcomeDenied, Detail: d.Message})
		}
		lines.StartDrain(in, st, h.Key)
	})
}

// fieldShowsText looks, from the relay's world of f's frame, at field f:
// "" when it shows dots (or is gone, or empty), else why not.
func fieldShowsText(ctx context.Context, c *core.ClientConn, f typedField) string {
	if f.via == nil || f.node == 0 {
		return "a field holding a typed secret cannot be looked at"
	}
	// A world of the relay's own, made for this look, where the page's
	// script cannot redefine what the probe calls (package look).
	lk, err := look.New(ctx, c, f.via)
	if err != nil {
		return "the page could not be looked at (" + err.Error() + "), and a password field of it holds a typed secret"
	}
	defer lk.Close()
	x := c.Ext()
	if x == nil {
		return "the page could not be looked at, and a password field of it holds a typed secret"
	}
	res, err := x.SendCommand(ctx, lk.T.Id, lk.Sid, "DOM.resolveNode", map[string]any{"backendNodeId": f.node, "executionContextId": lk.Ctx, "objectGroup": lk.Group})
	var ee *cdp.ExtError
	if err != nil && errors.As(err, &ee) && strings.Contains(ee.Message, "No node") {
		return "" // gone with its value
	}
	var obj struct {
		Object struct {
			ObjectID string `json:"objectId"`
		} `json:"object"`
	}
	if err != nil || json.Unmarshal(res, &obj) != nil || obj.Object.ObjectID == "" {
		return "the field holding a typed secret could not be looked at"
	}
	res, err = lk.Call(ctx, FieldProbe, obj.Object.ObjectID, nil, true)
	var r struct {
		Value *bool `json:"value"`
	}
	if err != nil || json.Unmarshal(res, &r) != nil || r.Value == nil {
		return "the field holding a typed secret could not be looked at"
	}
	if !*r.Value {
		return "a field holding a typed secret shows its text (it is no longer a password field, or its dots are styled away)"
	}
	return ""
}

// withholdFrame reports whether a frame of the client's screencast of t is
// withheld (a field of t holds a secret); the relay acknowledges it, so
// that Chrome goes on streaming.
func withholdFrame(st *core.State, t *core.Tab, params []byte) bool {
	if !holdsSecret(t) {
		return false
	}
	if id, ok := wire.Int(wire.Field(params, "sessionId")); ok {
		st.Fire(t.Id, "", "Page.screencastFrameAck", map[string]any{"sessionId": id})
	}
	return true
}
