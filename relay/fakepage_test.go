package relay

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cdprelay/cdprelay/internal/fakeext"
)

// fakePage plays, for the fake extension, what the relay looks at in a
// page by itself: the execution contexts Chrome announces (each frame's
// own world on Runtime.enable, a new world on Page.createIsolatedWorld),
// where the focus is, what the hit test finds at a point, and what
// DOM.describeNode and the accessibility tree say of a node. It answers
// the relay's script by what the script is for (finding the focus, typing
// where it is), and records what the relay sent it.
type fakePage struct {
	e   atomic.Pointer[fakeext.Ext]
	tab int

	mu      sync.Mutex
	frames  map[string]string // frame id → origin; tid(tab) is the main frame
	nextCtx int64
	relay   map[int64]bool // the contexts of worlds Page.createIsolatedWorld made
	// focus: the frame elements the focus is in, then the focused element.
	focus []*fakeNode
	at    *fakeNode // what the hit test finds; nil: nothing
	// beforeType runs as the typing script arrives (a page that moves its
	// focus).
	beforeType func(p *fakePage)
	objects    map[string]any // objectId → *fakeNode or []*fakeNode
	nextObj    int
	typed      []string // values typed, as "value@origin"
	scripts    []string // every function the relay ran
	args       []string // the arguments it gave them, as JSON
}

// fakeNode is an element of a fakePage.
type fakeNode struct {
	id    int64
	name  string   // nodeName
	attrs []string // name, value, ...
	holds string   // a frame element's frame
	enter bool     // a frame element whose document script may enter
	in    string   // the frame it is in
	role  string   // accessibility role
	label string   // accessible name
	form  bool     // inside a form
}

func newFakePage(tab int, origin string) *fakePage {
	return &fakePage{tab: tab, frames: map[string]string{tid(tab): origin}, relay: map[int64]bool{}, objects: map[string]any{}, nextCtx: 10}
}

func (p *fakePage) ctx(frame, name string, relay bool) int64 {
	p.nextCtx++
	id := p.nextCtx
	typ, isDefault := "default", true
	if name != "" {
		typ, isDefault = "isolated", false
	}
	if relay {
		p.relay[id] = true
	}
	if e := p.e.Load(); e != nil {
		e.Event(p.tab, "", "Runtime.executionContextCreated", map[string]any{"context": map[string]any{
			"id": id, "origin": p.frames[frame], "name": name, "uniqueId": fmt.Sprintf("u%d", id),
			"auxData": map[string]any{"isDefault": isDefault, "type": typ, "frameId": frame},
		}})
	}
	return id
}

func (p *fakePage) object(ctx int64, v any) string {
	p.nextObj++
	id := fmt.Sprintf("1.%d.%d", ctx, p.nextObj)
	p.objects[id] = v
	return id
}

func describeFake(n *fakeNode) map[string]any {
	d := map[string]any{"nodeId": 0, "backendNodeId": n.id, "nodeType": 1, "nodeName": n.name, "localName": strings.ToLower(n.name), "attributes": n.attrs}
	if n.holds != "" {
		d["frameId"] = n.holds
	}
	return map[string]any{"node": d}
}

func (p *fakePage) handle(tabID int, sid, method string, params json.RawMessage) (any, error) {
	if tabID != p.tab || sid != "" {
		return fakeext.DefaultHandler(tabID, sid, method, params)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var in struct {
		FrameID      string `json:"frameId"`
		WorldName    string `json:"worldName"`
		Function     string `json:"functionDeclaration"`
		ObjectID     string `json:"objectId"`
		ContextID    int64  `json:"executionContextId"`
		BackendID    int64  `json:"backendNodeId"`
		Arguments    []json.RawMessage
		ArgumentsRaw json.RawMessage `json:"arguments"`
	}
	json.Unmarshal(params, &in)
	json.Unmarshal(in.ArgumentsRaw, &in.Arguments)
	switch method {
	case "Runtime.enable":
		for f := range p.frames {
			p.ctx(f, "", false)
		}
		return map[string]any{}, nil
	case "Page.createIsolatedWorld":
		if _, ok := p.frames[in.FrameID]; !ok {
			return nil, fakeext.CDPError(-32000, "No frame for given id found")
		}
		return map[string]any{"executionContextId": p.ctx(in.FrameID, in.WorldName, true)}, nil
	case "Runtime.callFunctionOn":
		p.scripts = append(p.scripts, in.Function)
		p.args = append(p.args, string(in.ArgumentsRaw))
		switch {
		case strings.Contains(in.Function, "const chain = []"):
			if !p.relay[in.ContextID] {
				return nil, fakeext.CDPError(-32000, "Cannot find context with specified id")
			}
			var chain []*fakeNode
			for _, n := range p.focus {
				chain = append(chain, n)
				if n.holds != "" && !n.enter {
					break
				}
			}
			return map[string]any{"result": map[string]any{"type": "object", "subtype": "array", "objectId": p.object(in.ContextID, chain)}}, nil
		case strings.Contains(in.Function, "execCommand"):
			if p.beforeType != nil {
				p.beforeType(p)
			}
			chain, ok := p.objects[in.ObjectID].([]*fakeNode)
			if !ok {
				return nil, fakeext.CDPError(-32000, "Could not find object with given id")
			}
			moved := len(chain) != len(p.focus)
			for i := range chain {
				moved = moved || chain[i] != p.focus[i]
			}
			if moved {
				return map[string]any{"result": map[string]any{"type": "string", "value": "the focus moved"}}, nil
			}
			var value string
			if len(in.Arguments) > 0 {
				var a struct {
					Value string `json:"value"`
				}
				json.Unmarshal(in.Arguments[0], &a)
				value = a.Value
			}
			last := chain[len(chain)-1]
			p.typed = append(p.typed, value+"@"+p.frames[last.in])
			return map[string]any{"result": map[string]any{"type": "string", "value": ""}}, nil
		}
		return map[string]any{"result": map[string]any{"type": "undefined"}}, nil
	case "Runtime.getProperties":
		chain, ok := p.objects[in.ObjectID].([]*fakeNode)
		if !ok {
			return nil, fakeext.CDPError(-32000, "Could not find object with given id")
		}
		var ctx int64
		fmt.Sscanf(in.ObjectID, "1.%d.", &ctx)
		var props []map[string]any
		for i, n := range chain {
			props = append(props, map[string]any{"name": fmt.Sprint(i), "value": map[string]any{"type": "object", "subtype": "node", "objectId": p.object(ctx, n)}})
		}
		props = append(props, map[string]any{"name": "length", "value": map[string]any{"type": "number", "value": len(chain)}})
		return map[string]any{"result": props}, nil
	case "DOM.describeNode":
		if in.ObjectID != "" {
			if n, ok := p.objects[in.ObjectID].(*fakeNode); ok {
				return describeFake(n), nil
			}
			return nil, fakeext.CDPError(-32000, "Could not find object with given id")
		}
		for _, n := range append(append([]*fakeNode{}, p.focus...), p.at) {
			if n != nil && n.id == in.BackendID {
				return describeFake(n), nil
			}
		}
		return nil, fakeext.CDPError(-32000, "No node found for given backend id")
	case "DOM.getNodeForLocation":
		if p.at == nil {
			return nil, fakeext.CDPError(-32000, "No node found at given location")
		}
		return map[string]any{"backendNodeId": p.at.id, "frameId": p.at.in}, nil
	case "Accessibility.getPartialAXTree":
		for _, n := range append(append([]*fakeNode{}, p.focus...), p.at) {
			if n == nil || n.id != in.BackendID {
				continue
			}
			nodes := []map[string]any{{"nodeId": "n", "ignored": false, "role": map[string]any{"value": n.role}, "name": map[string]any{"value": n.label}, "parentId": "f", "backendDOMNodeId": n.id}}
			if n.form {
				nodes = append(nodes, map[string]any{"nodeId": "f", "ignored": false, "role": map[string]any{"value": "form"}, "name": map[string]any{"value": ""}, "parentId": "r", "backendDOMNodeId": 900})
			}
			nodes = append(nodes, map[string]any{"nodeId": "r", "ignored": false, "role": map[string]any{"value": "RootWebArea"}, "name": map[string]any{"value": ""}, "backendDOMNodeId": 901})
			return map[string]any{"nodes": nodes}, nil
		}
		return nil, fakeext.CDPError(-32000, "No node found for given backend id")
	case "Runtime.releaseObjectGroup":
		return map[string]any{}, nil
	}
	return fakeext.DefaultHandler(tabID, sid, method, params)
}

// typedValues returns what the page got typed.
func (p *fakePage) typedValues() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.typed...)
}

// ran returns the functions the relay ran and their arguments.
func (p *fakePage) ran() (scripts, args []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.scripts...), append([]string(nil), p.args...)
}

// setFocus puts the focus on a chain of nodes.
func (p *fakePage) setFocus(chain ...*fakeNode) {
	p.mu.Lock()
	p.focus = chain
	p.mu.Unlock()
}

// setAt puts a node at the point the hit test finds.
func (p *fakePage) setAt(n *fakeNode) {
	p.mu.Lock()
	p.at = n
	p.mu.Unlock()
}

// Nodes of a fake login page on a.example, with a frame of b.example.
func passwordField(frame string) *fakeNode {
	return &fakeNode{id: 5, name: "INPUT", attrs: []string{"id", "password", "type", "password"}, in: frame, role: "textbox", form: true}
}

func textField(frame string) *fakeNode {
	return &fakeNode{id: 6, name: "INPUT", attrs: []string{"id", "user"}, in: frame, role: "textbox", form: true}
}
