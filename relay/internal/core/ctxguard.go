package core

import (
	"strings"

	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/cdp"
)

// Commands that name an execution context, judged by the context they
// name now.
//
// A context is named by its id, by its unique id, by the world's name,
// and through every object and call frame id, which carry their context
// (Chrome's ids read <isolate>.<context>.<n>). The relay places each in
// its view of the tab's contexts (contexts.go) and:
//
//   - refuses one of its own worlds, as Chrome refuses a context or object
//     that does not exist: the client cannot tell them from nothing;
//   - on a tab where it matters (tiers, secrets, a read-only tab, a tab
//     where the relay has a world), refuses one it cannot place: an id of
//     a context that is gone, of a renderer the tab left, or guessed;
//   - on a read-only tab, lets script run without V8's side-effect check
//     only in a client's isolated world, where the guard is (tiers/worlds.go),
//     and never in a world an id merely used to name.
//
// A world name starting with relayWorldPrefix is the relay's, whoever asks:
// Chrome hands a frame's existing world to anyone who names it.
//
// Only the methods of ctxParams are looked at: the rest pay nothing.

// refKind is how a param names a context.
type refKind uint8

const (
	refContext refKind = iota // an execution context id
	refUnique                 // a unique context id
	refObject                 // a remote object id
	refFrame                  // a call frame id
	refScript                 // a script id (the relay's own scripts)
	refWorld                  // a world's name
)

// ctxKey is one param that names a context: a top-level key (outer), or
// the member inner of it, or of each of its elements when array. target:
// the key says where the command's script runs.
type ctxKey struct {
	outer, inner string
	array        bool
	kind         refKind
	target       bool
	at           int // outer's index in its ctxSpec's outer
}

// ctxSpec is what a method's params name, read in one pass over them.
type ctxSpec struct {
	keys  []ctxKey
	outer []string // the top-level keys of keys, each once
	// worlds: a key names a world by its name, which is judged on every
	// tab (the relay's names are its own everywhere).
	worlds bool
}

// maxCtxOuter bounds a spec's top-level keys (the read is on the stack).
const maxCtxOuter = 4

// key makes a ctxKey of a path: "key", "key.inner" or "key[].inner".
func key(path string, kind refKind, target bool) ctxKey {
	outer, inner, _ := strings.Cut(path, ".")
	array := strings.HasSuffix(outer, "[]")
	return ctxKey{outer: strings.TrimSuffix(outer, "[]"), inner: inner, array: array, kind: kind, target: target}
}

// ctxSpecs are ctxParams read into specs, by method.
var ctxSpecs = func() map[string]*ctxSpec {
	out := map[string]*ctxSpec{}
	for method, keys := range ctxParams {
		spec := &ctxSpec{}
		for _, k := range keys {
			k.at = -1
			for i, o := range spec.outer {
				if o == k.outer {
					k.at = i
				}
			}
			if k.at < 0 {
				k.at = len(spec.outer)
				spec.outer = append(spec.outer, k.outer)
			}
			spec.worlds = spec.worlds || k.kind == refWorld
			spec.keys = append(spec.keys, k)
		}
		if len(spec.outer) > maxCtxOuter {
			panic("ctxguard: " + method + " names contexts under too many keys")
		}
		out[method] = spec
	}
	return out
}()

var objectKey = []ctxKey{key("objectId", refObject, false)}

// ctxParams are the methods whose params name a context, and where. What
// Chrome's protocol has; a method it adds later is judged by the tab's
// other rules alone.
var ctxParams = map[string][]ctxKey{
	"Runtime.evaluate":                      {key("contextId", refContext, true), key("uniqueContextId", refUnique, true)},
	"Runtime.callFunctionOn":                {key("objectId", refObject, true), key("executionContextId", refContext, true), key("uniqueContextId", refUnique, true), key("arguments[].objectId", refObject, false)},
	"Runtime.compileScript":                 {key("executionContextId", refContext, false)},
	"Runtime.runScript":                     {key("executionContextId", refContext, false), key("scriptId", refScript, false)},
	"Runtime.globalLexicalScopeNames":       {key("executionContextId", refContext, false)},
	"Runtime.queryObjects":                  {key("prototypeObjectId", refObject, false)},
	"Runtime.getProperties":                 objectKey,
	"Runtime.releaseObject":                 objectKey,
	"Runtime.awaitPromise":                  {key("promiseObjectId", refObject, false)},
	"Runtime.getExceptionDetails":           {key("errorObjectId", refObject, false)},
	"Runtime.addBinding":                    {key("executionContextId", refContext, false), key("executionContextName", refWorld, false)},
	"Page.createIsolatedWorld":              {key("worldName", refWorld, false)},
	"Page.addScriptToEvaluateOnNewDocument": {key("worldName", refWorld, false)},
	"DOM.resolveNode":                       {key("executionContextId", refContext, false)},
	"DOM.describeNode":                      objectKey,
	"DOM.scrollIntoViewIfNeeded":            objectKey,
	"DOM.focus":                             objectKey,
	"DOM.getBoxModel":                       objectKey,
	"DOM.getContentQuads":                   objectKey,
	"DOM.getOuterHTML":                      objectKey,
	"DOM.requestNode":                       objectKey,
	"DOM.setFileInputFiles":                 objectKey,
	"DOM.getFileInfo":                       objectKey,
	"DOMDebugger.getEventListeners":         objectKey,
	"IO.resolveBlob":                        objectKey,
	"Overlay.highlightNode":                 objectKey,
	"Overlay.highlightSourceOrder":          objectKey,
	"Accessibility.getPartialAXTree":        objectKey,
	"Accessibility.getAXNodeAndAncestors":   objectKey,
	"Accessibility.queryAXTree":             objectKey,
	"HeapProfiler.getHeapObjectId":          objectKey,
	"Debugger.setBreakpointOnFunctionCall":  objectKey,
	"Debugger.evaluateOnCallFrame":          {key("callFrameId", refFrame, false)},
	"Debugger.restartFrame":                 {key("callFrameId", refFrame, false)},
	"Debugger.setVariableValue":             {key("callFrameId", refFrame, false), key("newValue.objectId", refObject, false)},
	"Debugger.setReturnValue":               {key("newValue.objectId", refObject, false)},
	"Debugger.getScriptSource":              {key("scriptId", refScript, false)},
	"Debugger.setScriptSource":              {key("scriptId", refScript, false)},
	"Debugger.searchInContent":              {key("scriptId", refScript, false)},
	"Debugger.setBlackboxedRanges":          {key("scriptId", refScript, false)},
	"Debugger.disassembleWasmModule":        {key("scriptId", refScript, false)},
	"Debugger.getWasmBytecode":              {key("scriptId", refScript, false)},
	"Debugger.setBreakpoint":                {key("location.scriptId", refScript, false)},
	"Debugger.continueToLocation":           {key("location.scriptId", refScript, false)},
	"Debugger.getPossibleBreakpoints":       {key("start.scriptId", refScript, false), key("end.scriptId", refScript, false)},
	"Debugger.stepInto":                     {key("skipList[].scriptId", refScript, false)},
	"Debugger.stepOver":                     {key("skipList[].scriptId", refScript, false)},
}

// Chrome's own answers for what does not exist: the relay's worlds, and
// what it cannot place, are answered the same.
const (
	MsgNoContext   = "Cannot find context with specified id"
	msgNoObject    = "Could not find object with given id"
	msgNoCallFrame = "Could not find call frame with given id"
	msgNoScript    = "No script for id: "
	ruleContext    = "relay:context"
)

// ctxVerdict is what the contexts a command names make of it.
type ctxVerdict struct {
	refused bool
	msg     string // Chrome's error for it, or the relay's
	code    int64
	// relay: it names the relay's own world, a refusal the audit log
	// keeps (rule relay:context); the others are answered as Chrome
	// answers a context that does not exist, and recorded as no rule's.
	relay bool
	// isolated: the command's script runs in a client's isolated world
	// (and names no other).
	isolated bool
}

// guardsContexts reports whether a command on a tab whose access is acc
// that names a context the relay cannot place is refused: where tiers,
// secrets or a read-only tab are in force (and, wherever the relay has a
// world, the relay's own are refused: contexts).
func (in *Instance) guardsContexts(acc TabAccess, tiers bool) bool {
	return acc.Level != api.Full || tiers || in.Srv.Secrets.Load() != nil
}

// judgeContexts places every context that params name on t's session
// sid, from the values of spec's top-level keys (vals, counts as
// wire.MembersOf gives them). strict: refuse one it cannot place.
func (st *State) judgeContexts(t *Tab, sid string, spec *ctxSpec, vals [][]byte, counts []int, strict bool) ctxVerdict {
	sc := t.Ctxs[sid]
	relay := t.relayCtxs.Load() > 0
	targets, isolated := 0, true
	var v ctxVerdict
	for _, key := range spec.keys {
		if !strict && !relay && key.kind != refWorld {
			continue
		}
		switch counts[key.at] {
		case 0:
			continue
		case 1:
		default:
			return ctxVerdict{refused: true, code: CodeInvalidParams, msg: "Invalid parameters: params carry '" + key.outer + "' twice"}
		}
		var buf [4][]byte
		found, err := valuesAt(buf[:0], vals[key.at], key)
		if err != nil {
			return ctxVerdict{refused: true, code: CodeInvalidParams, msg: err.Error()}
		}
		for _, raw := range found {
			if key.target {
				targets++
			}
			x, why := placeRef(sc, key.kind, raw)
			switch {
			case why != "":
				return ctxVerdict{refused: true, code: CodeInvalidParams, msg: why}
			case key.kind == refWorld:
				if x != nil {
					return ctxVerdict{refused: true, relay: true, msg: "cdprelay: world names starting with \"" + RelayWorldPrefix + "\" are the relay's own"}
				}
				continue
			case key.kind == refScript:
				if x != nil {
					return ctxVerdict{refused: true, relay: true, msg: msgNoScript + string(unquoted(raw))}
				}
				continue
			case x != nil && x.Relay:
				return ctxVerdict{refused: true, relay: true, msg: notFound(key.kind)}
			case x == nil && strict:
				return ctxVerdict{refused: true, code: CodeServerError, msg: notFound(key.kind)}
			}
			if key.target && (x == nil || x.kind != ctxIsolated) {
				isolated = false
			}
		}
	}
	v.isolated = targets == 1 && isolated
	return v
}

func notFound(k refKind) string {
	switch k {
	case refObject:
		return msgNoObject
	case refFrame:
		return msgNoCallFrame
	}
	return MsgNoContext
}

// relayScript marks a script id as one of the relay's own worlds'.
var relayScript = &execContext{Relay: true}

// placeRef returns the context raw names in sc: nil when there is none.
// For a world name, it returns a context when the name is the relay's;
// for a script id, when the script is the relay's. why is Chrome's answer
// for a value it could not read either.
func placeRef(sc *sessionContexts, k refKind, raw []byte) (x *execContext, why string) {
	switch k {
	case refContext:
		id, ok := wire.Int(raw)
		if !ok {
			return nil, "Invalid parameters: an execution context id must be an integer"
		}
		if sc == nil {
			return nil, ""
		}
		return sc.ByID[id], ""
	case refWorld:
		s, ok := wire.Unquote(raw)
		if !ok {
			return nil, "Invalid parameters: a world name must be a string"
		}
		if isRelayWorldName(string(s)) {
			return relayScript, ""
		}
		return nil, ""
	case refScript:
		s, ok := wire.Unquote(raw)
		if !ok {
			return nil, "Invalid parameters: a script id must be a string"
		}
		if sc != nil && sc.scripts[string(s)] {
			return relayScript, ""
		}
		return nil, ""
	case refUnique:
		s, ok := wire.Unquote(raw)
		if !ok {
			return nil, "Invalid parameters: a unique context id must be a string"
		}
		if sc == nil {
			return nil, ""
		}
		if id, ok := sc.byUnique[string(s)]; ok {
			return sc.ByID[id], ""
		}
		return nil, ""
	}
	s, ok := wire.Unquote(raw)
	if !ok {
		return nil, "Invalid parameters: an object or call frame id must be a string"
	}
	id, ok := idContext(s)
	if !ok {
		if k == refFrame {
			return nil, "Invalid call frame id"
		}
		return nil, "Invalid remote object id"
	}
	if sc == nil {
		return nil, ""
	}
	return sc.ByID[id], ""
}

// idContext reads the context of an object or call frame id:
// <isolate>.<context>.<n>, each an integer (the isolate's may be
// negative).
func idContext(s []byte) (int64, bool) {
	var parts [3][]byte
	n := 0
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == '.' {
			if n == 3 {
				return 0, false
			}
			parts[n] = s[start:i]
			n++
			start = i + 1
		}
	}
	if n != 3 {
		return 0, false
	}
	if len(parts[0]) > 0 && parts[0][0] == '-' {
		parts[0] = parts[0][1:]
	}
	var id int64
	for i, p := range parts {
		if len(p) == 0 || len(p) > 19 {
			return 0, false
		}
		for _, c := range p {
			if c < '0' || c > '9' {
				return 0, false
			}
			if i == 1 {
				id = id*10 + int64(c-'0')
			}
		}
	}
	return id, len(parts[1]) < 19
}

func unquoted(raw []byte) []byte {
	s, _ := wire.Unquote(raw)
	return s
}

// valuesAt appends to dst the raw values key names in v, the value of
// its top-level key: v itself, its member key.inner, or that member of
// each of its elements. A member given twice is refused, as Chrome and
// the relay need not read the same one.
func valuesAt(dst [][]byte, v []byte, key ctxKey) ([][]byte, error) {
	if key.inner == "" {
		return append(dst, v), nil
	}
	var few [8][]byte
	objs := few[:1]
	objs[0] = v
	if key.array {
		if len(v) == 0 || v[0] != '[' {
			return dst, nil // Chrome refuses it
		}
		n := wire.Args(v, few[:])
		if n > len(few) {
			objs = make([][]byte, n)
			wire.Args(v, objs)
		} else {
			objs = few[:n]
		}
	}
	for _, o := range objs {
		if len(o) == 0 || o[0] != '{' {
			continue
		}
		w, n := wire.Member(o, key.inner)
		if n > 1 {
			return nil, &cdp.ParamsError{Msg: "Invalid parameters: params carry '" + key.inner + "' twice"}
		}
		if n == 1 {
			dst = append(dst, w)
		}
	}
	return dst, nil
}

// Contexts is part of the access stage: the contexts k names, judged.
// It reports whether k may go on, and records whether its script runs in
// a client's isolated world. A command on a tab where nothing is guarded
// (and of a method that names no world) costs a few loads, no lock.
func (c *ClientConn) Contexts(k *Cmd) bool {
	spec, t := k.M.Ctx, k.Route.Tab
	strict := c.Inst.guardsContexts(k.Route.Acc, k.Policy.Tiers)
	if !strict && !spec.worlds && t.relayCtxs.Load() == 0 {
		return true
	}
	var vals [maxCtxOuter][]byte
	var counts [maxCtxOuter]int
	wire.MembersOf(k.Params, spec.outer, vals[:], counts[:])
	named := false
	for _, n := range counts[:len(spec.outer)] {
		named = named || n > 0
	}
	if !named {
		return true // its script runs in the page's own world
	}
	sid := ""
	if k.Route.Via.Child {
		sid = k.Route.Via.Id
	}
	st := c.Inst.Lock()
	v := st.judgeContexts(t, sid, spec, vals[:], counts[:], strict)
	c.Inst.Unlock()
	switch {
	case v.refused && v.relay:
		return c.Refuse(k, Decision{Verdict: Deny, Rule: ruleContext, Message: v.msg})
	case v.refused:
		return c.Failed(k, v.code, v.msg)
	}
	k.Isolated = v.isolated
	return true
}
