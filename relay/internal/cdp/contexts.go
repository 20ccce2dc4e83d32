package cdp

import (
	"strings"

	"github.com/cdprelay/cdprelay/internal/wire"
)

// The params that name an execution context, and where: by its id, by its
// unique id, by a world's name, and through every object and call frame
// id, which carry their context (Chrome's ids read
// <isolate>.<context>.<n>). The core's context guard reads a command's
// params by these specs, in one pass, and judges what they name.

// RefKind is how a param names a context.
type RefKind uint8

const (
	RefContext RefKind = iota // an execution context id
	RefUnique                 // a unique context id
	RefObject                 // a remote object id
	RefFrame                  // a call frame id
	RefScript                 // a script id (the relay's own scripts)
	RefWorld                  // a world's name
)

// CtxKey is one param that names a context: a top-level key (outer), or
// the member inner of it, or of each of its elements when array. target:
// the key says where the command's script runs.
type CtxKey struct {
	Outer, Inner string
	Array        bool
	Kind         RefKind
	Target       bool
	At           int // Outer's index in its CtxSpec's Outer
}

// CtxSpec is what a method's params name, read in one pass over them.
type CtxSpec struct {
	Keys  []CtxKey
	Outer []string // the top-level keys of Keys, each once
	// Worlds: a key names a world by its name, which is judged on every
	// tab (the relay's names are its own everywhere).
	Worlds bool
}

// MaxCtxOuter bounds a spec's top-level keys (the read is on the stack).
const MaxCtxOuter = 4

// key makes a CtxKey of a path: "key", "key.Inner" or "key[].inner".
func key(path string, kind RefKind, target bool) CtxKey {
	outer, inner, _ := strings.Cut(path, ".")
	array := strings.HasSuffix(outer, "[]")
	return CtxKey{Outer: strings.TrimSuffix(outer, "[]"), Inner: inner, Array: array, Kind: kind, Target: target}
}

// CtxSpecs are ctxParams read into specs, by method.
var CtxSpecs = func() map[string]*CtxSpec {
	out := map[string]*CtxSpec{}
	for method, keys := range ctxParams {
		spec := &CtxSpec{}
		for _, k := range keys {
			k.At = -1
			for i, o := range spec.Outer {
				if o == k.Outer {
					k.At = i
				}
			}
			if k.At < 0 {
				k.At = len(spec.Outer)
				spec.Outer = append(spec.Outer, k.Outer)
			}
			spec.Worlds = spec.Worlds || k.Kind == RefWorld
			spec.Keys = append(spec.Keys, k)
		}
		if len(spec.Outer) > MaxCtxOuter {
			panic("cdp: " + method + " names contexts under too many keys")
		}
		out[method] = spec
	}
	return out
}()

var objectKey = []CtxKey{key("objectId", RefObject, false)}

// ctxParams are the methods whose params name a context, and where. What
// Chrome's protocol has; a method it adds later is judged by the tab's
// other rules alone.
var ctxParams = map[string][]CtxKey{
	"Runtime.evaluate":                      {key("contextId", RefContext, true), key("uniqueContextId", RefUnique, true)},
	"Runtime.callFunctionOn":                {key("objectId", RefObject, true), key("executionContextId", RefContext, true), key("uniqueContextId", RefUnique, true), key("arguments[].objectId", RefObject, false)},
	"Runtime.compileScript":                 {key("executionContextId", RefContext, false)},
	"Runtime.runScript":                     {key("executionContextId", RefContext, false), key("scriptId", RefScript, false)},
	"Runtime.globalLexicalScopeNames":       {key("executionContextId", RefContext, false)},
	"Runtime.queryObjects":                  {key("prototypeObjectId", RefObject, false)},
	"Runtime.getProperties":                 objectKey,
	"Runtime.releaseObject":                 objectKey,
	"Runtime.awaitPromise":                  {key("promiseObjectId", RefObject, false)},
	"Runtime.getExceptionDetails":           {key("errorObjectId", RefObject, false)},
	"Runtime.addBinding":                    {key("executionContextId", RefContext, false), key("executionContextName", RefWorld, false)},
	"Page.createIsolatedWorld":              {key("worldName", RefWorld, false)},
	"Page.addScriptToEvaluateOnNewDocument": {key("worldName", RefWorld, false)},
	"DOM.resolveNode":                       {key("executionContextId", RefContext, false)},
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
	"Debugger.evaluateOnCallFrame":          {key("callFrameId", RefFrame, false)},
	"Debugger.restartFrame":                 {key("callFrameId", RefFrame, false)},
	"Debugger.setVariableValue":             {key("callFrameId", RefFrame, false), key("newValue.objectId", RefObject, false)},
	"Debugger.setReturnValue":               {key("newValue.objectId", RefObject, false)},
	"Debugger.getScriptSource":              {key("scriptId", RefScript, false)},
	"Debugger.setScriptSource":              {key("scriptId", RefScript, false)},
	"Debugger.searchInContent":              {key("scriptId", RefScript, false)},
	"Debugger.setBlackboxedRanges":          {key("scriptId", RefScript, false)},
	"Debugger.disassembleWasmModule":        {key("scriptId", RefScript, false)},
	"Debugger.getWasmBytecode":              {key("scriptId", RefScript, false)},
	"Debugger.setBreakpoint":                {key("location.scriptId", RefScript, false)},
	"Debugger.continueToLocation":           {key("location.scriptId", RefScript, false)},
	"Debugger.getPossibleBreakpoints":       {key("start.scriptId", RefScript, false), key("end.scriptId", RefScript, false)},
	"Debugger.stepInto":                     {key("skipList[].scriptId", RefScript, false)},
	"Debugger.stepOver":                     {key("skipList[].scriptId", RefScript, false)},
}

// IDContext reads the context of an object or call frame id:
// <isolate>.<context>.<n>, each an integer (the isolate's may be
// negative).
func IDContext(s []byte) (int64, bool) {
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

// ValuesAt appends to dst the raw values key names in v, the value of
// its top-level key: v itself, its member key.Inner, or that member of
// each of its elements. A member given twice is refused, as Chrome and
// the relay need not read the same one.
func ValuesAt(dst [][]byte, v []byte, key CtxKey) ([][]byte, error) {
	if key.Inner == "" {
		return append(dst, v), nil
	}
	var few [8][]byte
	objs := few[:1]
	objs[0] = v
	if key.Array {
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
		w, n := wire.Member(o, key.Inner)
		if n > 1 {
			return nil, &ParamsError{Msg: "Invalid parameters: params carry '" + key.Inner + "' twice"}
		}
		if n == 1 {
			dst = append(dst, w)
		}
	}
	return dst, nil
}
