package access

import (
	_ "embed"
	"strconv"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
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
// Which world a command's script runs in is judged by the context it
// names now (the tiers' contexts.go): an id of a world that is gone, or
// of a page the tab left, is refused, never taken for an isolated world.
//
// The guard is not a sandbox: an API it does not know, or a location
// assignment (which no script can redefine), still acts. The CDP commands
// and blind tabs are held exactly; the page's own world as exactly as V8's
// side-effect check, which does not follow promise jobs: the then of an
// object an async function of the client's returns runs after the check.

//go:embed readonly_guard.js
var guardSource string

// Guard is one installation of the guard: its secret turns it off; why is
// the tab's reason, which its refusals give.
type Guard struct{ secret, why string }

// NewGuard returns a new layer of the guard and its source, on, for a tab
// that is read-only for the reason why; secret, which turns it off, is
// random and at least 8 characters.
func NewGuard(secret, why string) (Guard, string) {
	return GuardFrom(Guard{secret: secret, why: why})
}

// GuardFrom returns layer l's source, for a world that appears while l is
// in force.
func GuardFrom(l Guard) (Guard, string) {
	src := strings.Replace(guardSource, `"SECRET"`, strconv.Quote(l.secret), 1)
	src = strings.Replace(src, "const why = WHY;", "const why = "+jsString(l.why)+";", 1)
	return l, strings.Replace(src, "let on = ON;", "let on = true;", 1)
}

// jsString writes s as a JavaScript string literal (JSON's, which is one).
func jsString(s string) string {
	b, _ := jsonv2.Marshal(s)
	return string(b)
}

// OffScript turns layer l off in a world.
func (l Guard) OffScript() string {
	return "globalThis[Symbol.for(\"cdprelay.readOnly." + l.secret[:8] + "\")]?.(" + strconv.Quote(l.secret) + ", false)"
}

// WithoutScopes removes the [[Scopes]] of functions from a
// Runtime.getProperties result: on a read-only tab they would lead a
// client to the guard's closures and the functions it replaced.
func WithoutScopes(result []byte) []byte {
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
