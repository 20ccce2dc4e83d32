package relay

import (
	_ "embed"
	"strconv"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/cdprelay/cdprelay/internal/wire"
)

// Script on a read-only tab.
//
// V8 can refuse any evaluation whose side effects it cannot rule out
// (throwOnSideEffect), and on a read-only tab the relay forces that on
// every script that runs in the page's own world. It refuses too much for
// the isolated worlds where clients run their own code: Playwright's
// selector engine keeps state between calls, which V8 counts as a side
// effect. So script in an isolated world runs as the client asks, and the
// relay first installs a guard in the world (readonly_guard.js) that makes
// the common ways of acting throw: clicks and events, focus, DOM and form
// writes, history, storage, network, new windows. The guard's original
// functions are kept out of the client's reach on a read-only tab: the
// closures that hold them are stripped from Runtime.getProperties, and
// Runtime.queryObjects is refused.
//
// The guard is not a sandbox: an API it does not know, or a location
// assignment (which no script can redefine), still acts. The CDP commands
// and blind tabs are held exactly; the page's own world as exactly as V8's
// side-effect check, which does not follow promise jobs: the then of an
// object an async function of the client's returns runs after the check.

//go:embed readonly_guard.js
var guardSource string

// worlds are the isolated execution contexts of one of a tab's sessions,
// learnt from Runtime events. Guarded by the instance's mutex.
type worlds struct {
	ids     map[int64]bool
	uniques map[string]bool
}

// worldsOf returns the worlds of t's session sid ("" for the tab's own).
func (t *tab) worldsOf(sid string) *worlds {
	if t.worlds == nil {
		t.worlds = make(map[string]*worlds)
	}
	w := t.worlds[sid]
	if w == nil {
		w = &worlds{ids: map[int64]bool{}, uniques: map[string]bool{}}
		t.worlds[sid] = w
	}
	return w
}

// trackWorlds follows a Runtime event of t's session sid. It returns the
// id of a new isolated context when the tab is read-only: the caller
// installs the guard there before the client hears of it.
func (st *state) trackWorlds(t *tab, sid string, method, params []byte) (guard int64) {
	switch string(method) {
	case "Runtime.executionContextCreated":
		ctx := wire.Field(params, "context")
		if string(wire.StringField(wire.Field(ctx, "auxData"), "type")) != "isolated" {
			return 0
		}
		id, ok := wire.Int(wire.Field(ctx, "id"))
		if !ok {
			return 0
		}
		w := t.worldsOf(sid)
		w.ids[id] = true
		if u := wire.StringField(ctx, "uniqueId"); len(u) > 0 {
			w.uniques[string(u)] = true
		}
		if t.acc.level == accessReadOnly {
			return id
		}
	case "Runtime.executionContextDestroyed":
		if w := t.worlds[sid]; w != nil {
			if id, ok := wire.Int(wire.Field(params, "executionContextId")); ok {
				delete(w.ids, id)
			}
			if u := wire.StringField(params, "executionContextUniqueId"); len(u) > 0 {
				delete(w.uniques, string(u))
			}
		}
	case "Runtime.executionContextsCleared":
		delete(t.worlds, sid)
	}
	return 0
}

// isolatedTarget reports whether a Runtime.evaluate or callFunctionOn
// (method) with params runs in a known isolated world of t's session sid.
// Without a context of its own, a command runs in the page's own world.
// Only the keys Chrome reads for the method count, and exactly one of them
// must name the world: a key the method does not have is ignored by
// Chrome, so a decoy one must not make the relay think it isolated.
func (st *state) isolatedTarget(t *tab, sid, method string, params []byte) bool {
	w := t.worlds[sid]
	if w == nil {
		return false
	}
	var keys []string
	switch method {
	case "Runtime.evaluate":
		keys = []string{"contextId", "uniqueContextId"}
	case "Runtime.callFunctionOn":
		keys = []string{"objectId", "executionContextId", "uniqueContextId"}
	default:
		return false
	}
	named := 0
	for _, key := range keys {
		v, n := wire.Member(params, key)
		if n == 0 {
			continue
		}
		if n > 1 {
			return false
		}
		named++
		switch key {
		case "contextId", "executionContextId":
			if id, ok := wire.Int(v); !ok || !w.ids[id] {
				return false
			}
		case "uniqueContextId":
			if u, _, err := exactString(params, key); err != nil || !w.uniques[u] {
				return false
			}
		case "objectId":
			// Chrome's object ids read <isolate>.<context>.<object>.
			o, _, err := exactString(params, key)
			parts := strings.Split(o, ".")
			if err != nil || len(parts) != 3 {
				return false
			}
			if id, err := strconv.ParseInt(parts[1], 10, 64); err != nil || !w.ids[id] {
				return false
			}
		}
	}
	return named == 1
}

// guardLayer is one installation of the guard: its secret turns it off;
// why is the tab's reason, which its refusals give.
type guardLayer struct{ secret, why string }

// newGuard returns a new layer of the guard and its source, on, for a tab
// that is read-only for the reason why.
func newGuard(why string) (guardLayer, string) {
	return newGuardFrom(guardLayer{secret: randHex(16), why: why})
}

// newGuardFrom returns layer l's source, for a world that appears while l
// is in force.
func newGuardFrom(l guardLayer) (guardLayer, string) {
	src := strings.Replace(guardSource, `"SECRET"`, strconv.Quote(l.secret), 1)
	src = strings.Replace(src, "const why = WHY;", "const why = "+jsString(l.why)+";", 1)
	return l, strings.Replace(src, "let on = ON;", "let on = true;", 1)
}

// jsString writes s as a JavaScript string literal (JSON's, which is one).
func jsString(s string) string {
	b, _ := jsonv2.Marshal(s)
	return string(b)
}

// offScript turns layer l off in a world.
func (l guardLayer) offScript() string {
	return "globalThis[Symbol.for(\"cdprelay.readOnly." + l.secret[:8] + "\")]?.(" + strconv.Quote(l.secret) + ", false)"
}

// withoutScopes removes the [[Scopes]] of functions from a
// Runtime.getProperties result: on a read-only tab they would lead a
// client to the guard's closures and the functions it replaced.
func withoutScopes(result []byte) []byte {
	if !strings.Contains(string(result), "[[Scopes]]") {
		return result
	}
	var r map[string]jsontext.Value
	if jsonv2.Unmarshal(result, &r) != nil {
		return []byte(`{"result":[]}`)
	}
	var internal []map[string]jsontext.Value
	if jsonv2.Unmarshal(r["internalProperties"], &internal) == nil {
		kept := internal[:0]
		for _, p := range internal {
			if string(p["name"]) != `"[[Scopes]]"` {
				kept = append(kept, p)
			}
		}
		r["internalProperties"], _ = jsonv2.Marshal(kept)
	}
	b, err := jsonv2.Marshal(r, jsonv2.Deterministic(true))
	if err != nil {
		return []byte(`{"result":[]}`)
	}
	return b
}
