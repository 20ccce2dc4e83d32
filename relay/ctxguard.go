package relay

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/cdprelay/cdprelay/internal/wire"
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
//     only in a client's isolated world, where the guard is (worlds.go),
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

// ctxKey is one param that names a context. path is a top-level key, or
// "key[].inner" for a member of each element of an array, or "key.inner"
// for a member of an object. target: the key says where the command's
// script runs.
type ctxKey struct {
	path   string
	kind   refKind
	target bool
}

var objectKey = []ctxKey{{"objectId", refObject, false}}

// ctxParams are the methods whose params name a context, and where. What
// Chrome's protocol has; a method it adds later is judged by the tab's
// other rules alone.
var ctxParams = map[string][]ctxKey{
	"Runtime.evaluate":                      {{"contextId", refContext, true}, {"uniqueContextId", refUnique, true}},
	"Runtime.callFunctionOn":                {{"objectId", refObject, true}, {"executionContextId", refContext, true}, {"uniqueContextId", refUnique, true}, {"arguments[].objectId", refObject, false}},
	"Runtime.compileScript":                 {{"executionContextId", refContext, false}},
	"Runtime.runScript":                     {{"executionContextId", refContext, false}, {"scriptId", refScript, false}},
	"Runtime.globalLexicalScopeNames":       {{"executionContextId", refContext, false}},
	"Runtime.queryObjects":                  {{"prototypeObjectId", refObject, false}},
	"Runtime.getProperties":                 objectKey,
	"Runtime.releaseObject":                 objectKey,
	"Runtime.awaitPromise":                  {{"promiseObjectId", refObject, false}},
	"Runtime.getExceptionDetails":           {{"errorObjectId", refObject, false}},
	"Runtime.addBinding":                    {{"executionContextId", refContext, false}, {"executionContextName", refWorld, false}},
	"Page.createIsolatedWorld":              {{"worldName", refWorld, false}},
	"Page.addScriptToEvaluateOnNewDocument": {{"worldName", refWorld, false}},
	"DOM.resolveNode":                       {{"executionContextId", refContext, false}},
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
	"Debugger.evaluateOnCallFrame":          {{"callFrameId", refFrame, false}},
	"Debugger.restartFrame":                 {{"callFrameId", refFrame, false}},
	"Debugger.setVariableValue":             {{"callFrameId", refFrame, false}, {"newValue.objectId", refObject, false}},
	"Debugger.setReturnValue":               {{"newValue.objectId", refObject, false}},
	"Debugger.getScriptSource":              {{"scriptId", refScript, false}},
	"Debugger.setScriptSource":              {{"scriptId", refScript, false}},
	"Debugger.searchInContent":              {{"scriptId", refScript, false}},
	"Debugger.setBlackboxedRanges":          {{"scriptId", refScript, false}},
	"Debugger.disassembleWasmModule":        {{"scriptId", refScript, false}},
	"Debugger.getWasmBytecode":              {{"scriptId", refScript, false}},
	"Debugger.setBreakpoint":                {{"location.scriptId", refScript, false}},
	"Debugger.continueToLocation":           {{"location.scriptId", refScript, false}},
	"Debugger.getPossibleBreakpoints":       {{"start.scriptId", refScript, false}, {"end.scriptId", refScript, false}},
	"Debugger.stepInto":                     {{"skipList[].scriptId", refScript, false}},
	"Debugger.stepOver":                     {{"skipList[].scriptId", refScript, false}},
}

// Chrome's own answers for what does not exist: the relay's worlds, and
// what it cannot place, are answered the same.
const (
	msgNoContext   = "Cannot find context with specified id"
	msgNoObject    = "Could not find object with given id"
	msgNoCallFrame = "Could not find call frame with given id"
	msgNoScript    = "No script for id: "
	ruleContext    = "relay:context"
)

// ctxVerdict is what the contexts a command names make of it.
type ctxVerdict struct {
	refused bool
	msg     string // Chrome's error, or the relay's
	detail  string // for the audit log
	// isolated: the command's script runs in a client's isolated world
	// (and names no other).
	isolated bool
}

// guardsContexts reports whether commands on t (whose access is acc)
// naming a context the relay cannot place are refused: where tiers,
// secrets or a read-only tab are in force, or the relay has a world.
func (st *state) guardsContexts(t *tab, acc tabAccess) bool {
	return acc.level != accessFull || t.relayCtxs > 0 || st.in.hasTiers() || st.in.srv.secrets.load() != nil
}

// judgeContexts places every context the params of method m name on t's
// session sid. strict: refuse one it cannot place.
func (st *state) judgeContexts(t *tab, sid string, keys []ctxKey, params []byte, strict bool) ctxVerdict {
	sc := t.ctxs[sid]
	targets, isolated := 0, true
	var v ctxVerdict
	for _, key := range keys {
		if !strict && t.relayCtxs == 0 && key.kind != refWorld {
			continue
		}
		vals, err := valuesAt(params, key.path)
		if err != nil {
			return ctxVerdict{refused: true, msg: err.Error(), detail: "params the relay cannot read as Chrome does"}
		}
		for _, raw := range vals {
			if key.target {
				targets++
			}
			x, why := placeRef(sc, key.kind, raw)
			switch {
			case why != "":
				return ctxVerdict{refused: true, msg: why, detail: "names what the relay cannot read"}
			case key.kind == refWorld:
				if x != nil {
					return ctxVerdict{refused: true, msg: "cdprelay: world names starting with \"" + relayWorldPrefix + "\" are the relay's own", detail: "names the relay's own world"}
				}
				continue
			case key.kind == refScript:
				if x != nil {
					return ctxVerdict{refused: true, msg: msgNoScript + string(unquoted(raw)), detail: "names a script of the relay's own world"}
				}
				continue
			case x != nil && x.relay:
				return ctxVerdict{refused: true, msg: notFound(key.kind), detail: "names the relay's own world"}
			case x == nil && strict:
				return ctxVerdict{refused: true, msg: notFound(key.kind), detail: "names an execution context the relay cannot place on the page"}
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
	return msgNoContext
}

// relayScript marks a script id as one of the relay's own worlds'.
var relayScript = &execContext{relay: true}

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
		return sc.byID[id], ""
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
			return sc.byID[id], ""
		}
		return nil, ""
	}
	s, ok := wire.Unquote(raw)
	if !ok {
		return nil, "Invalid parameters: an object or call frame id must be a string"
	}
	id, ok := idContext(string(s))
	if !ok {
		if k == refFrame {
			return nil, "Invalid call frame id"
		}
		return nil, "Invalid remote object id"
	}
	if sc == nil {
		return nil, ""
	}
	return sc.byID[id], ""
}

// idContext reads the context of an object or call frame id:
// <isolate>.<context>.<n>.
func idContext(s string) (int64, bool) {
	a, rest, ok := strings.Cut(s, ".")
	if !ok || a == "" {
		return 0, false
	}
	b, c, ok := strings.Cut(rest, ".")
	if !ok || c == "" || strings.IndexByte(c, '.') >= 0 {
		return 0, false
	}
	if _, err := strconv.ParseInt(a, 10, 64); err != nil {
		return 0, false
	}
	if _, err := strconv.ParseInt(c, 10, 64); err != nil {
		return 0, false
	}
	id, err := strconv.ParseInt(b, 10, 64)
	return id, err == nil
}

func unquoted(raw []byte) []byte {
	s, _ := wire.Unquote(raw)
	return s
}

// valuesAt returns the raw values at path in params: a top-level key, a
// member of an object ("key.inner"), or a member of each element of an
// array ("key[].inner"). A key given twice anywhere on the path is
// refused, as Chrome and the relay need not read the same one.
func valuesAt(params []byte, path string) ([][]byte, error) {
	if params == nil {
		return nil, nil
	}
	outer, inner, nested := strings.Cut(path, ".")
	array := strings.HasSuffix(outer, "[]")
	outer = strings.TrimSuffix(outer, "[]")
	v, n := wire.Member(params, outer)
	switch {
	case n == 0:
		return nil, nil
	case n > 1:
		return nil, &paramsError{"Invalid parameters: params carry '" + outer + "' twice"}
	case !nested:
		return [][]byte{v}, nil
	}
	var objs [][]byte
	if array {
		if len(v) == 0 || v[0] != '[' {
			return nil, nil // Chrome refuses it
		}
		objs = make([][]byte, wire.Args(v, nil))
		wire.Args(v, objs)
	} else {
		objs = [][]byte{v}
	}
	var out [][]byte
	for _, o := range objs {
		if len(o) == 0 || o[0] != '{' {
			continue
		}
		w, n := wire.Member(o, inner)
		if n > 1 {
			return nil, &paramsError{"Invalid parameters: params carry '" + inner + "' twice"}
		}
		if n == 1 {
			out = append(out, w)
		}
	}
	return out, nil
}

// contexts is part of the access stage: the contexts k names, judged.
// It reports whether k may go on, and records whether its script runs in
// a client's isolated world.
func (c *clientConn) contexts(k *cmd) bool {
	sid := ""
	if k.r.via.child {
		sid = k.r.via.id
	}
	st := c.inst.lock()
	v := st.judgeContexts(k.r.tab, sid, k.m.ctx, k.params, st.guardsContexts(k.r.tab, k.r.acc))
	c.inst.unlock()
	if v.refused {
		return c.refuse(k, Decision{Verdict: Deny, Rule: ruleContext, Message: v.msg})
	}
	k.isolated = v.isolated
	return true
}

// Events about the relay's own worlds.

// relayEvent reports whether an event of t's session sid comes from one
// of the relay's own worlds (a console message, an exception, a binding
// call, a script parsed, a pause in its script): the client hears nothing
// of it. A pause there is resumed by the relay (unpause). Called only
// while the relay has a world on t.
func (st *state) relayEvent(t *tab, sid string, method, params []byte) (withhold, unpause bool) {
	sc := t.ctxs[sid]
	if sc == nil {
		return false, false
	}
	inRelay := func(raw []byte) bool {
		id, ok := wire.Int(raw)
		return ok && sc.byID[id] != nil && sc.byID[id].relay
	}
	switch string(method) {
	case "Runtime.consoleAPICalled", "Runtime.bindingCalled", "Runtime.inspectRequested":
		return inRelay(wire.Field(params, "executionContextId")), false
	case "Runtime.exceptionThrown":
		return inRelay(wire.Field(wire.Field(params, "exceptionDetails"), "executionContextId")), false
	case "Debugger.scriptParsed", "Debugger.scriptFailedToParse":
		if !inRelay(wire.Field(params, "executionContextId")) {
			return false, false
		}
		if id := wire.StringField(params, "scriptId"); len(id) > 0 && len(sc.scripts) < maxRelayScripts {
			if sc.scripts == nil {
				sc.scripts = map[string]bool{}
			}
			sc.scripts[string(id)] = true
		}
		return true, false
	case "Debugger.breakpointResolved":
		return sc.scripts[string(wire.StringField(wire.Field(params, "location"), "scriptId"))], false
	case "Debugger.paused":
		if pausedInRelay(sc, params) {
			sc.unpaused = true
			return true, true
		}
	case "Debugger.resumed":
		if sc.unpaused {
			sc.unpaused = false
			return true, false
		}
	}
	return false, false
}

// maxRelayScripts bounds the relay's own script ids kept per session.
const maxRelayScripts = 4096

// pausedInRelay reports whether a Debugger.paused stops with a frame of
// the relay's own worlds on the stack: its scopes would show what the
// relay's script holds.
func pausedInRelay(sc *sessionContexts, params []byte) bool {
	var p struct {
		CallFrames []struct {
			CallFrameID string `json:"callFrameId"`
			Location    struct {
				ScriptID string `json:"scriptId"`
			} `json:"location"`
		} `json:"callFrames"`
	}
	if json.Unmarshal(params, &p) != nil {
		return true // unreadable: as strict as can be
	}
	for _, f := range p.CallFrames {
		if sc.scripts[f.Location.ScriptID] {
			return true
		}
		if id, ok := idContext(f.CallFrameID); ok && sc.byID[id] != nil && sc.byID[id].relay {
			return true
		}
	}
	return false
}
