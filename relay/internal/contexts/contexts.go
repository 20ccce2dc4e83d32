// Package contexts is the relay's view of the execution contexts of a
// tab's sessions.
//
// A command that names an execution context (a contextId, a
// uniqueContextId, an object or call frame id, which carry their
// context) runs where that context is now, and Chrome reuses context ids:
// a new renderer counts from 1 again. So the relay keeps its own view of
// every context of every session of a tab — its frame, its world, its
// origin — from Chrome's Runtime events, and keeps Runtime enabled on
// every session for that, whatever the client switches (the core's
// runtimehold.go). Chrome announces a context before anyone can name it,
// and events arrive in order, so the view holds every context that
// exists: a context it does not know of is one that does not exist, or
// one the relay cannot place, and a command naming it is refused where it
// matters (the tiers' contexts.go).
//
// The view also knows the relay's own worlds (package look), which the
// client must never reach and hears nothing of (relay.go), and the
// isolated worlds of a read-only tab, which get the guard (the tiers'
// access.go and events.go).
//
// It is a leaf: the core keeps one Tab per tab, guarded by the instance's
// mutex (but for the count of the relay's worlds, read without it), and
// feeds it the events; nothing here calls anything.
package contexts

import (
	"slices"
	"strings"
	"sync/atomic"

	"github.com/cdprelay/cdprelay/internal/wire"
)

// Kind is the world an execution context belongs to.
type Kind uint8

const (
	Default  Kind = iota // a frame's own world, where the page's scripts run
	Isolated             // an isolated world (a client's, or the relay's)
	Other                // a worker's, or one Chrome gives no type
)

// Context is one execution context of a session, as Chrome announced it.
type Context struct {
	Frame  string // the frame it runs in ("" for a worker)
	Kind   Kind
	origin string
	name   string // the world's name; "" for a page's own
	unique string
	Relay  bool // one of the relay's own worlds
	// Raw is Chrome's context object, for the client's Runtime.enable.
	Raw []byte
}

// Session is the execution contexts of one session of a tab.
type Session struct {
	ByID     map[int64]*Context
	ByUnique map[string]int64
	// Held: Runtime is on in Chrome for the session, by the relay's own
	// Runtime.enable or by a client's it let through.
	Held bool
	// full: more contexts than maxContexts were announced; those past the
	// bound are not known.
	full bool
	// Scripts are the ids of the scripts that ran in the relay's own
	// worlds, from Debugger.scriptParsed (relay.go).
	Scripts map[string]bool
	// unpaused: the relay resumed a pause in its own world, and the
	// Debugger.resumed that follows is withheld too.
	unpaused bool
}

// maxContexts bounds the contexts the relay keeps per session: a page
// makes one per frame and world, and a hostile one could make more.
const maxContexts = 8192

// Tab is the execution contexts of a tab's sessions, by session ("" for
// the tab's own).
type Tab struct {
	sessions map[string]*Session
	// relay counts the relay's own worlds among them; read without the
	// lock on the command path (RelayWorlds).
	relay atomic.Int32
}

// Of returns the contexts of session sid, made on first use.
func (t *Tab) Of(sid string) *Session {
	if t.sessions == nil {
		t.sessions = make(map[string]*Session)
	}
	sc := t.sessions[sid]
	if sc == nil {
		sc = &Session{ByID: map[int64]*Context{}, ByUnique: map[string]int64{}}
		t.sessions[sid] = sc
	}
	return sc
}

// Get returns the contexts of session sid, nil when none are known.
func (t *Tab) Get(sid string) *Session { return t.sessions[sid] }

// RelayWorlds is how many of the relay's own worlds the tab has.
func (t *Tab) RelayWorlds() int32 { return t.relay.Load() }

// Reset forgets every session's contexts: the debugger is off the tab.
func (t *Tab) Reset() {
	t.sessions = nil
	t.relay.Store(0)
}

// Drop forgets the contexts of session sid (a child that went).
func (t *Tab) Drop(sid string) {
	if sc := t.sessions[sid]; sc != nil {
		for _, x := range sc.ByID {
			if x.Relay {
				t.relay.Add(-1)
			}
		}
		delete(t.sessions, sid)
	}
}

// FrameOrigin returns the origin of frame on session sid, as Chrome gave
// it for the frame's own world; "" when the relay knows of none.
func (t *Tab) FrameOrigin(sid, frame string) string {
	sc := t.sessions[sid]
	if sc == nil {
		return ""
	}
	best, origin := int64(-1), ""
	for id, x := range sc.ByID {
		if x.Frame == frame && x.Kind == Default && id > best {
			best, origin = id, x.origin
		}
	}
	return origin
}

// Event follows a Runtime.executionContext* event of session sid. relay
// reports an event about one of the relay's own worlds, which the client
// must not hear of; isolated is the id of a new isolated world of the
// client's (the read-only guard goes in there first).
func (t *Tab) Event(sid string, method, params []byte) (relay bool, isolated int64) {
	switch string(method) {
	case "Runtime.executionContextCreated":
		ctx := wire.Field(params, "context")
		id, ok := wire.Int(wire.Field(ctx, "id"))
		if !ok {
			return false, 0
		}
		aux := wire.Field(ctx, "auxData")
		x := &Context{
			Frame:  string(wire.StringField(aux, "frameId")),
			origin: string(wire.StringField(ctx, "origin")),
			name:   string(wire.StringField(ctx, "name")),
			unique: string(wire.StringField(ctx, "uniqueId")),
			Kind:   Other,
		}
		switch string(wire.StringField(aux, "type")) {
		case "default":
			x.Kind = Default
		case "isolated":
			x.Kind = Isolated
		}
		x.Relay = x.Kind == Isolated && IsRelayWorldName(x.name)
		sc := t.Of(sid)
		if old := sc.ByID[id]; old != nil {
			// A new renderer counts from 1 again: the id is this context's now.
			t.forget(sc, id, old)
		}
		if len(sc.ByID) >= maxContexts {
			sc.full = true
			return x.Relay, 0
		}
		x.Raw = slices.Clone(ctx)
		sc.ByID[id] = x
		if x.unique != "" {
			sc.ByUnique[x.unique] = id
		}
		if x.Relay {
			t.relay.Add(1)
			return true, 0
		}
		if x.Kind == Isolated {
			return false, id
		}
	case "Runtime.executionContextDestroyed":
		sc := t.sessions[sid]
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
			t.forget(sc, id, x)
			return x.Relay, 0
		}
	case "Runtime.executionContextsCleared":
		if sc := t.sessions[sid]; sc != nil {
			for id, x := range sc.ByID {
				t.forget(sc, id, x)
			}
			sc.full = false
		}
	}
	return false, 0
}

// forget takes context id out of sc.
func (t *Tab) forget(sc *Session, id int64, x *Context) {
	delete(sc.ByID, id)
	if x.unique != "" && sc.ByUnique[x.unique] == id {
		delete(sc.ByUnique, x.unique)
	}
	if x.Relay {
		t.relay.Add(-1)
	}
}

// IsolatedWorlds returns the client's isolated worlds, by session: where
// the read-only guard goes.
func (t *Tab) IsolatedWorlds() map[string][]int64 {
	out := map[string][]int64{}
	for sid, sc := range t.sessions {
		for id, x := range sc.ByID {
			if x.Kind == Isolated && !x.Relay {
				out[sid] = append(out[sid], id)
			}
		}
	}
	return out
}

// RelayWorldPrefix starts the name of every world the relay makes; the
// rest of the name is random, made anew for each world. A client may not
// name a world so (the tiers' contexts.go): Chrome gives a frame's
// existing world to whoever asks for it by name.
const RelayWorldPrefix = "cdprelay"

// IsRelayWorldName reports whether name is one of the relay's worlds'.
func IsRelayWorldName(name string) bool { return strings.HasPrefix(name, RelayWorldPrefix) }
