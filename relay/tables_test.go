package relay

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cdprelay/cdprelay/internal/fakeext"
)

// Tests of the three tables (order.go) and of what their steps changed.

// TestMethodsByIdentity: the methods the relay looks out for by identity
// are the method table's own entries, which every command is looked up
// in. An entry made before the table was filled would never be the one a
// command carries, and the check on it would never match.
func TestMethodsByIdentity(t *testing.T) {
	for _, m := range []*methodInfo{methodFetchEnable, methodGetProperties} {
		if got := lookupMethod([]byte(m.name)); got != m || m.unknown {
			t.Errorf("%s: the looked-out-for entry is not the table's (unknown %v)", m.name, m.unknown)
		}
	}
}

// TestReadOnlyPropertiesWithoutScopes: on a read-only tab a function's
// [[Scopes]] do not reach the client (they lead to the guard's closures).
func TestReadOnlyPropertiesWithoutScopes(t *testing.T) {
	h := newHarness(t, Config{Policy: tiers})
	e := h.ext(fakeext.Options{Tabs: []fakeext.Tab{{ID: 1, URL: "https://ro.example/account", Title: "Account"}},
		Handler: func(tabID int, sid, method string, p json.RawMessage) (any, error) {
			if method == "Runtime.getProperties" {
				return map[string]any{"result": []any{}, "internalProperties": []any{
					map[string]any{"name": "[[Scopes]]", "value": map[string]any{"type": "object", "objectId": "guard-closure"}},
					map[string]any{"name": "[[FunctionLocation]]", "value": map[string]any{"type": "object"}},
				}}, nil
			}
			return fakeext.DefaultHandler(tabID, sid, method, p)
		}})
	c := h.client()
	sess := h.autoAttach(c)[0]
	// The page's world, so that the function's id is one the relay places.
	h.call(c, sess, "Runtime.enable", nil)
	from := len(c.Messages())
	contextCreated(e, 1, "", 3, tid(1), "default", "", "https://ro.example")
	h.event(c, from, "Runtime.executionContextCreated")
	res := h.call(c, sess, "Runtime.getProperties", map[string]any{"objectId": "1.3.7"})
	if strings.Contains(string(res), "Scopes") || !strings.Contains(string(res), "FunctionLocation") {
		t.Fatalf("a read-only tab's function properties: %s", res)
	}
}
