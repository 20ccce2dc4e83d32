// Package look is how the relay looks at a page for itself: from the
// browser's own answers where it can, and from a world of its own where
// only script can tell. The person's stage uses it to say what a click
// would press, the secrets' stage to find the field a secret is typed in.
package look

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/cdp"
	"github.com/cdprelay/cdprelay/relay/internal/contexts"
	"github.com/cdprelay/cdprelay/relay/internal/core"
)

// What is under a point is the browser's hit test (DOM.getNodeForLocation,
// which gives the frame too); what a node is, its attributes and the frame
// a frame element holds are DOM.describeNode's; what a person would call
// it (a button "Place order", a link, a form around it) is the
// accessibility tree's; a frame's origin is the one Chrome gave its own
// world (relay/internal/contexts). Only where the focus is, and typing a secret there,
// take script in the page: it runs in an isolated world the relay makes
// for that one look, with a random name, and nothing but the relay has
// ever run in it:
//
//   - the client cannot reach it: its id, unique id, name, objects, call
//     frames and scripts are refused to the client, and nothing of it is
//     announced (the tiers' contexts.go, and its
//     event row core.RelayWorld);
//   - the page cannot reach an isolated world, and what the client can
//     change in every world at once (Runtime.addBinding, which sets a
//     global) the relay's scripts do not use: they name no global but
//     document, which no script can replace;
//   - every script is new (its text carries a random nonce, so that no
//     breakpoint set by a script's hash can be waiting for it), and no
//     function of the relay's outlives its call.
//
// A page gets at most maxRelayWorlds such worlds per frame while a
// document lives; after that the relay says it cannot look.

// maxRelayWorlds bounds the relay's worlds in one frame of one document.
const maxRelayWorlds = 32

// Look is one look of the relay's at the page of session via: a
// world made for it in via's frame.
type Look struct {
	c     *core.ClientConn
	T     *core.Tab
	Sid   string // via's, "" for a tab's own session
	Frame string // via's frame
	Ctx   int64  // the world's execution context in frame
	Group string // the object group of what the look holds
}

// viaFrame returns the session id and the frame of via.
func viaFrame(c *core.ClientConn, via *core.Session) (sid, frame string) {
	c.Inst.Lock()
	defer c.Inst.Unlock()
	if via.Child {
		return via.Id, via.TargetID
	}
	return "", via.Tab.TargetID
}

// relayCmd sends a command of the relay's own to t's session sid.
func relayCmd(ctx context.Context, c *core.ClientConn, t *core.Tab, sid, method string, params any) (json.RawMessage, error) {
	x := c.Ext()
	if x == nil {
		return nil, errors.New("the extension is gone")
	}
	return x.SendCommand(ctx, t.Id, sid, method, params)
}

// New makes a world of the relay's own in via's frame.
func New(ctx context.Context, c *core.ClientConn, via *core.Session) (*Look, error) {
	t := via.Tab
	sid, frame := viaFrame(c, via)
	c.Inst.Lock()
	n := 0
	if sc := t.Ctxs.Get(sid); sc != nil {
		for _, x := range sc.ByID {
			if x.Relay && x.Frame == frame {
				n++
			}
		}
	}
	c.Inst.Unlock()
	if n >= maxRelayWorlds {
		return nil, errors.New("the relay has looked at this page too often; load it again")
	}
	res, err := relayCmd(ctx, c, t, sid, "Page.createIsolatedWorld", map[string]any{"frameId": frame, "worldName": contexts.RelayWorldPrefix + "-" + core.RandHex(16), "grantUniveralAccess": false})
	if err != nil {
		return nil, err
	}
	var w struct {
		ID int64 `json:"executionContextId"`
	}
	if json.Unmarshal(res, &w) != nil || w.ID == 0 {
		return nil, errors.New("no isolated world")
	}
	return &Look{c: c, T: t, Sid: sid, Frame: frame, Ctx: w.ID, Group: contexts.RelayWorldPrefix + "-" + core.RandHex(16)}, nil
}

// Close lets go of what the look holds in the page.
func (l *Look) Close() {
	if x := l.c.Ext(); x != nil {
		x.Fire(l.T.Id, l.Sid, "Runtime.releaseObjectGroup", map[string]any{"objectGroup": l.Group})
	}
}

// Call runs function fn in the look's world, on object this ("" for
// none), with args (CDP CallArgument values), and returns its result: by
// value, or as a remote object.
func (l *Look) Call(ctx context.Context, fn, this string, args []map[string]any, byValue bool) (json.RawMessage, error) {
	p := map[string]any{
		// The nonce makes every script new: no breakpoint waits for it.
		"functionDeclaration": "/*" + core.RandHex(16) + "*/ " + fn,
		"returnByValue":       byValue,
		"silent":              true,
		"objectGroup":         l.Group,
	}
	if this != "" {
		p["objectId"] = this
	} else {
		p["executionContextId"] = l.Ctx
	}
	if args != nil {
		p["arguments"] = args
	}
	res, err := relayCmd(ctx, l.c, l.T, l.Sid, "Runtime.callFunctionOn", p)
	if err != nil {
		return nil, err
	}
	var r struct {
		Result    json.RawMessage `json:"result"`
		Exception json.RawMessage `json:"exceptionDetails"`
	}
	if json.Unmarshal(res, &r) != nil || r.Result == nil {
		return nil, errors.New("the page could not be asked")
	}
	if r.Exception != nil {
		return nil, errors.New("the page's answer was an exception")
	}
	return r.Result, nil
}

// focusChain finds where keystrokes go: the focused element, through
// frames its script may enter (same origin), and shadow roots. It returns
// them in order, each frame element that holds the focus and then the
// focused element: a frame element last means the focus is in a frame it
// cannot enter. It names no global but document.
const focusChain = `function () {
  const chain = [];
  let doc = document;
  for (let depth = 0; depth < 32; depth++) {
    let el = doc.activeElement;
    while (el && el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
    if (!el) break;
    chain[chain.length] = el;
    if (el.tagName !== "IFRAME" && el.tagName !== "FRAME") break;
    let inner = null;
    try { inner = el.contentDocument; } catch (e) {}
    if (!inner) break;
    doc = inner;
  }
  return chain;
}`

// Focused is where the focus is, from the browser's answers.
type Focused struct {
	El     Node   // the focused element (a frame element: the focus is in a frame the relay cannot look into)
	frame  string // the frame el is in
	Origin string // that frame's origin, as Chrome gave it
	Chain  string // the chain's remote object, in the look's world
}

// Node is what DOM.describeNode says of an element.
type Node struct {
	BackendNodeID int64    `json:"backendNodeId"`
	NodeName      string   `json:"nodeName"`
	LocalName     string   `json:"localName"`
	Attributes    []string `json:"attributes"`
	FrameID       string   `json:"frameId"`
}

// Attr returns the attribute name of n ("" when it has none).
func (n Node) Attr(name string) string {
	for i := 0; i+1 < len(n.Attributes); i += 2 {
		if strings.EqualFold(n.Attributes[i], name) {
			return n.Attributes[i+1]
		}
	}
	return ""
}

// IsFrame reports whether n is a frame element.
func (n Node) IsFrame() bool { return n.NodeName == "IFRAME" || n.NodeName == "FRAME" }

// Focus finds the focused element of the look's page and what the
// browser says of it and of the frames on the way.
func (l *Look) Focus(ctx context.Context) (Focused, error) {
	res, err := l.Call(ctx, focusChain, "", nil, false)
	if err != nil {
		return Focused{}, err
	}
	var chain struct {
		ObjectID string `json:"objectId"`
	}
	if json.Unmarshal(res, &chain) != nil || chain.ObjectID == "" {
		return Focused{}, errors.New("the page could not be asked where its focus is")
	}
	props, err := relayCmd(ctx, l.c, l.T, l.Sid, "Runtime.getProperties", map[string]any{"objectId": chain.ObjectID, "ownProperties": true})
	if err != nil {
		return Focused{}, err
	}
	var p struct {
		Result []struct {
			Name  string `json:"name"`
			Value struct {
				ObjectID string `json:"objectId"`
			} `json:"value"`
		} `json:"result"`
	}
	if json.Unmarshal(props, &p) != nil {
		return Focused{}, errors.New("the page could not be asked where its focus is")
	}
	ids := map[int]string{}
	for _, r := range p.Result {
		if i, err := strconv.Atoi(r.Name); err == nil && i >= 0 && i < 32 && r.Value.ObjectID != "" {
			ids[i] = r.Value.ObjectID
		}
	}
	f := Focused{frame: l.Frame, Chain: chain.ObjectID}
	if len(ids) == 0 {
		return f, ErrNoFocus
	}
	for i := 0; i < len(ids); i++ {
		id, ok := ids[i]
		if !ok {
			return Focused{}, errors.New("the page could not be asked where its focus is")
		}
		n, err := describe(ctx, l.c, l.T, l.Sid, map[string]any{"objectId": id})
		if err != nil {
			return Focused{}, err
		}
		if i < len(ids)-1 {
			// A frame its script entered: the focus is in there.
			if !n.IsFrame() || n.FrameID == "" {
				return Focused{}, errors.New("the page could not be asked where its focus is")
			}
			f.frame = n.FrameID
			continue
		}
		f.El = n
	}
	l.c.Inst.Lock()
	f.Origin = l.T.Ctxs.FrameOrigin(l.Sid, f.frame)
	l.c.Inst.Unlock()
	if f.Origin == "" {
		return Focused{}, errors.New("the relay does not know the origin of the focused frame")
	}
	return f, nil
}

var ErrNoFocus = errors.New("no element has the focus")

// describe asks the browser what a Node (by objectId or backendNodeId) is.
func describe(ctx context.Context, c *core.ClientConn, t *core.Tab, sid string, which map[string]any) (Node, error) {
	res, err := relayCmd(ctx, c, t, sid, "DOM.describeNode", which)
	if err != nil {
		return Node{}, err
	}
	var r struct {
		Node Node `json:"node"`
	}
	if json.Unmarshal(res, &r) != nil {
		return Node{}, errors.New("the browser could not say what the Node is")
	}
	return r.Node, nil
}

// axNode is a Node of the accessibility tree, as the browser computes it.
type axNode struct {
	NodeID  string `json:"nodeId"`
	Ignored bool   `json:"ignored"`
	Role    struct {
		Value string `json:"value"`
	} `json:"role"`
	Name struct {
		Value string `json:"value"`
	} `json:"name"`
	ParentID string `json:"parentId"`
	DOMNode  int64  `json:"backendDOMNodeId"`
}

// axLineage returns the Node backendNodeId and its ancestors in the
// accessibility tree, nearest first.
func axLineage(ctx context.Context, c *core.ClientConn, t *core.Tab, sid string, backendNodeID int64) ([]axNode, error) {
	res, err := relayCmd(ctx, c, t, sid, "Accessibility.getPartialAXTree", map[string]any{"backendNodeId": backendNodeID, "fetchRelatives": true})
	if err != nil {
		return nil, err
	}
	var r struct {
		Nodes []axNode `json:"nodes"`
	}
	if json.Unmarshal(res, &r) != nil {
		return nil, errors.New("the browser could not say what the Node is")
	}
	by := map[string]axNode{}
	var self *axNode
	for i, n := range r.Nodes {
		by[n.NodeID] = n
		if n.DOMNode == backendNodeID && self == nil {
			self = &r.Nodes[i]
		}
	}
	if self == nil {
		return nil, errors.New("the browser could not say what the Node is")
	}
	out := []axNode{*self}
	for n := *self; len(out) < 256; {
		p, ok := by[n.ParentID]
		if !ok {
			break
		}
		out = append(out, p)
		n = p
	}
	return out, nil
}

// originOf returns the origin of a frame element's src, resolved against
// the origin of the page that holds it.
func originOf(src, base string) string {
	b, err := url.Parse(base + "/")
	if err != nil {
		return ""
	}
	u, err := b.Parse(strings.TrimSpace(src))
	if err != nil || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// PersonsView says what a person would call Node n of t's session sid in
// frame origin: its kind (button, link, field, or its tag), its text, and
// whether a press there submits a form. A frame element is a frame the
// relay cannot look into.
func PersonsView(ctx context.Context, c *core.ClientConn, t *core.Tab, sid, origin string, n Node) (api.PointTarget, error) {
	if n.IsFrame() {
		return api.PointTarget{Origin: origin, Kind: "frame", Frame: originOf(n.Attr("src"), origin)}, nil
	}
	lineage, err := axLineage(ctx, c, t, sid, n.BackendNodeID)
	if err != nil {
		return api.PointTarget{}, err
	}
	pt := api.PointTarget{Origin: origin, Kind: strings.ToLower(n.LocalName)}
	target := n
	for i, a := range lineage {
		kind, ok := interactiveRoles[a.Role.Value]
		if !ok {
			continue
		}
		pt.Kind, pt.Text = kind, a.Name.Value
		if a.DOMNode != n.BackendNodeID {
			if target, err = describe(ctx, c, t, sid, map[string]any{"backendNodeId": a.DOMNode}); err != nil {
				return api.PointTarget{}, err
			}
		}
		inForm := false
		for _, up := range lineage[i+1:] {
			inForm = inForm || up.Role.Value == "form"
		}
		typ := strings.ToLower(target.Attr("type"))
		switch target.NodeName {
		case "BUTTON":
			pt.Submit = inForm && (typ == "" || typ == "submit")
		case "INPUT":
			pt.Submit = inForm && (typ == "submit" || typ == "image")
			switch typ {
			case "button", "reset", "checkbox", "radio", "file", "submit", "image":
			default:
				pt.Form = inForm
			}
		}
		return pt, nil
	}
	for _, a := range lineage {
		if a.Name.Value != "" {
			pt.Text = a.Name.Value
			break
		}
		if !a.Ignored && a.Role.Value != "StaticText" && a.Role.Value != "generic" && a.Role.Value != "none" {
			break
		}
	}
	return pt, nil
}

// interactiveRoles are the accessibility roles a card names, by kind.
var interactiveRoles = map[string]string{
	"button": "button", "menuitem": "button", "menuitemcheckbox": "button", "menuitemradio": "button",
	"tab": "button", "switch": "button", "link": "link",
	"textbox": "field", "searchbox": "field", "combobox": "field", "spinbutton": "field",
	"checkbox": "field", "radio": "field", "slider": "field", "listbox": "field",
}

// PointAt finds what is at (x, y) of via's page: the browser's hit test,
// which goes into the frames of the page's process.
func PointAt(ctx context.Context, c *core.ClientConn, via *core.Session, x, y float64) (api.PointTarget, error) {
	t := via.Tab
	sid, top := viaFrame(c, via)
	res, err := relayCmd(ctx, c, t, sid, "DOM.getNodeForLocation", map[string]any{"x": int64(x), "y": int64(y), "includeUserAgentShadowDOM": false, "ignorePointerEventsNone": false})
	var ee *cdp.ExtError
	if errors.As(err, &ee) && strings.Contains(strings.ToLower(ee.Message), "no node found") {
		c.Inst.Lock()
		o := t.Ctxs.FrameOrigin(sid, top)
		c.Inst.Unlock()
		return api.PointTarget{Origin: o, Kind: "nothing"}, nil
	}
	if err != nil {
		return api.PointTarget{}, err
	}
	var hit struct {
		BackendNodeID int64  `json:"backendNodeId"`
		FrameID       string `json:"frameId"`
	}
	if json.Unmarshal(res, &hit) != nil || hit.BackendNodeID == 0 {
		return api.PointTarget{}, errors.New("the browser could not say what is there")
	}
	if hit.FrameID == "" {
		hit.FrameID = top
	}
	c.Inst.Lock()
	origin := t.Ctxs.FrameOrigin(sid, hit.FrameID)
	c.Inst.Unlock()
	if origin == "" {
		return api.PointTarget{}, fmt.Errorf("the relay does not know the origin of frame %s", hit.FrameID)
	}
	n, err := describe(ctx, c, t, sid, map[string]any{"backendNodeId": hit.BackendNodeID})
	if err != nil {
		return api.PointTarget{}, err
	}
	return PersonsView(ctx, c, t, sid, origin, n)
}
