package core

import (
	"slices"
	"strings"

	"github.com/cdprelay/cdprelay/internal/wire"
)

// Execution contexts, as the relay sees them.
//
// A command that names an execution context (a contextId, a
// uniqueContextId, an object or call frame id, which carry their
// context) runs where that context is now, and Chrome reuses context ids:
// a new renderer counts from 1 again. So the relay keeps its own view of
// every context of every session of a tab — its frame, its world, its
// origin — from Chrome's Runtime events, and keeps Runtime enabled on every
// session for that, whatever the client switches (runtimehold.go). Chrome
// announces a context before anyone can name it, and events arrive in
// order, so the view holds every context that exists: a context it does
// not know of is one that does not exist, or one the relay cannot place,
// and a command naming it is refused where it matters (the tiers' contexts.go).
//
// The view also knows the relay's own worlds (package look), which the
// client must never reach, and the isolated worlds of a read-only tab,
// which get the guard (the tiers' access.go and events.go).

// ctxKind is the world an execution context belongs to.
type ctxKind uint8

const (
	ctxDefault  ctxKind = iota // a frame's own world, where the page's scripts run
	CtxIsolated                // an isolated world (a client's, or the relay's)
	ctxOther                   // a worker's, or one Chrome gives no type
)

// execContext is one execution context of a session, as Chrome announced
// it. Guarded by the instance's mutex.
type ExecContext struct {
	Frame  string // the frame it runs in ("" for a worker)
	Kind   ctxKind
	origin string
	name   string // the world's name; "" for a page's own
	unique string
	Relay  bool // one of the relay's own worlds
	// raw is Chrome's context object, for the client's Runtime.enable.
	raw []byte
}

// sessionContexts are the execution contexts of one session of a tab.
// Guarded by the instance's mutex.
type SessionContexts struct {
	ByID     map[int64]*ExecContext
	ByUnique map[string]int64
	// held: Runtime is on in Chrome for the session, by the relay's own
	// Runtime.enable or by a client's it let through (runtimehold.go).
	held bool
	// full: more contexts than maxContexts were announced; those past the
	// bound are not known.
	full bool
	// scripts are the ids of the scripts that ran in the relay's own
	// worlds, from Debugger.scriptParsed (the tiers' contexts.go).
	Scripts map[string]bool
	// unpaused: the relay resumed a pause in its own world, and the
	// Debugger.resumed that follows is withheld too.
	unpaused bool
}

// maxContexts bounds the contexts the relay keeps per session: a page
// makes one per frame and world, and a hostile one could make more.
const maxContexts = 8192

// contextsOf returns the contexts of t's session sid ("" for the tab's
// own), made on first use.
func (t *Tab) contextsOf(sid string) *SessionContexts {
	if t.Ctxs == nil {
		t.Ctxs = make(map[string]*SessionContexts)
	}
	sc := t.Ctxs[sid]
	if sc == nil {
		sc = &SessionContexts{ByID: map[int64]*ExecContext{}, ByUnique: map[string]int64{}}
		t.Ctxs[sid] = sc
	}
	return sc
}

// FrameOrigin returns the origin of frame on t's session sid, as Chrome
// gave it for the frame's own world; "" when the relay knows of none.
func (t *Tab) FrameOrigin(sid, frame string) string {
	sc := t.Ctxs[sid]
	if sc == nil {
		return ""
	}
	best, origin := int64(-1), ""
	for id, x := range sc.ByID {
		if x.Frame == frame && x.Kind == ctxDefault && id > best {
			best, origin = id, x.origin
		}
	}
	return origin
}

// dropContexts forgets the contexts of t's session sid (a child that went).
func (t *Tab) dropContexts(sid string) {
	if sc := t.Ctxs[sid]; sc != nil {
		for _, x := range sc.ByID {
			if x.Relay {
				t.RelayCtxs.Add(-1)
			}
		}
		delete(t.Ctxs, sid)
	}
}

// ContextEvent follows a Runtime.executionContext* event of t's session
// sid. relay reports an event about one of the relay's own worlds, which
// the client must not hear of; isolated is the id of a new isolated world
// of the client's (the read-only guard goes in there first).
func (st *State) ContextEvent(t *Tab, sid string, method, params []byte) (relay bool, isolated int64) {
	switch string(method) {
	case "Runtime.executionContextCreated":
		ctx := wire.Field(params, "context")
		id, ok := wire.Int(wire.Field(ctx, "id"))
		if !ok {
			return false, 0
		}
		aux := wire.Field(ctx, "auxData")
		x := &ExecContext{
			Frame:  string(wire.StringField(aux, "frameId")),
			origin: string(wire.StringField(ctx, "origin")),
			name:   string(wire.StringField(ctx, "name")),
			unique: string(wire.StringField(ctx, "uniqueId")),
			Kind:   ctxOther,
		}
		switch string(wire.StringField(aux, "type")) {
		case "default":
			x.Kind = ctxDefault
		case "isolated":
			x.Kind = CtxIsolated
		}
		x.Relay = x.Kind == CtxIsolated && IsRelayWorldName(x.name)
		sc := t.contextsOf(sid)
		if old := sc.ByID[id]; old != nil {
			// A new renderer counts from 1 again: the id is this context's now.
			st.forgetContext(t, sc, id, old)
		}
		if len(sc.ByID) >= maxContexts {
			sc.full = true
			return x.Relay, 0
		}
		x.raw = slices.Clone(ctx)
		sc.ByID[id] = x
		if x.unique != "" {
			sc.ByUnique[x.unique] = id
		}
		if x.Relay {
			t.RelayCtxs.Add(1)
			return true, 0
		}
		if x.Kind == CtxIsolated {
			return false, id
		}
	case "Runtime.executionContextDestroyed":
		sc := t.Ctxs[sid]
		if sc == nil {
			return false, 0
		}
		id, ok := wire.Int(wire.Field(params, "executionContextId"))
		if !ok {
			if u := wire.StringField(params, "executionContextUniqueId"); len(u) > 0 {
				id, ok = sc.ByUnique[string(u)]
			}
		}
		if x := sc.ByID[id]; ok && x != nil {
			st.forgetContext(t, sc, id, x)
			return x.Relay, 0
		}
	case "Runtime.executionContextsCleared":
		if sc := t.Ctxs[sid]; sc != nil {
			for id, x := range sc.ByID {
				st.forgetContext(t, sc, id, x)
			}
			sc.full = false
		}
	}
	return false, 0
}

// forgetContext takes context id out of sc.
func (st *State) forgetContext(t *Tab, sc *SessionContexts, id int64, x *ExecContext) {
	delete(sc.ByID, id)
	if x.unique != "" && sc.ByUnique[x.unique] == id {
		delete(sc.ByUnique, x.unique)
	}
	if x.Relay {
		t.RelayCtxs.Add(-1)
	}
}

// IsolatedContexts returns the client's isolated worlds of t, by session:
// where the read-only guard goes.
func (t *Tab) IsolatedContexts() map[string][]int64 {
	out := map[string][]int64{}
	for sid, sc := range t.Ctxs {
		for id, x := range sc.ByID {
			if x.Kind == CtxIsolated && !x.Relay {
				out[sid] = append(out[sid], id)
			}
		}
	}
	return out
}

// relayWorldPrefix starts the name of every world the relay makes; the
// rest of the name is random, made anew for each world. A client may not
// name a world so (the tiers' contexts.go): Chrome gives a frame's existing world to
// whoever asks for it by name.
const RelayWorldPrefix = "cdprelay"

func IsRelayWorldName(name string) bool { return strings.HasPrefix(name, RelayWorldPrefix) }
