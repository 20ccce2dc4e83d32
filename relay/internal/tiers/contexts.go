package tiers

import (
	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/cdp"
	"github.com/cdprelay/cdprelay/relay/internal/contexts"
	"github.com/cdprelay/cdprelay/relay/internal/core"
)

// Commands that name an execution context, judged by the context they
// name now.
//
// A context is named by its id, by its unique id, by the world's name,
// and through every object and call frame id, which carry their context
// (Chrome's ids read <isolate>.<context>.<n>; where each method's params
// name them: cdp.CtxSpecs). The relay places each in its view of the
// tab's contexts (the core's contexts.go) and:
//
//   - refuses one of its own worlds, as Chrome refuses a context or object
//     that does not exist: the client cannot tell them from nothing;
//   - on a tab where it matters (tiers, secrets, a read-only tab, a tab
//     where the relay has a world), refuses one it cannot place: an id of
//     a context that is gone, of a renderer the tab left, or guessed;
//   - on a read-only tab, lets script run without V8's side-effect check
//     only in a client's isolated world, where the guard is (tiers.Worlds),
//     and never in a world an id merely used to name.
//
// A world name starting with contexts.RelayWorldPrefix is the relay's,
// whoever asks: Chrome hands a frame's existing world to anyone who names
// it.
//
// Only the methods of cdp.CtxSpecs are looked at (core.MethodInfo.Ctx,
// tiers.Contexts wants them): the rest pay nothing.

// Chrome's own answers for what does not exist: the relay's worlds, and
// what it cannot place, are answered the same.
const (
	MsgNoContext   = "Cannot find context with specified id"
	msgNoObject    = "Could not find object with given id"
	msgNoCallFrame = "Could not find call frame with given id"
	msgNoScript    = "No script for id: "
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
func guardsContexts(in *core.Instance, acc core.TabAccess, tiers bool) bool {
	return acc.Level != api.Full || tiers || in.Srv.Secrets.Load() != nil
}

// judgeContexts places every context that params name on t's session
// sid, from the values of spec's top-level keys (vals, counts as
// wire.MembersOf gives them). strict: refuse one it cannot place.
func judgeContexts(st *core.State, t *core.Tab, sid string, spec *cdp.CtxSpec, vals [][]byte, counts []int, strict bool) ctxVerdict {
	sc := t.Ctxs.Get(sid)
	relay := t.Ctxs.RelayWorlds() > 0
	targets, isolated := 0, true
	var v ctxVerdict
	for _, key := range spec.Keys {
		if !strict && !relay && key.Kind != cdp.RefWorld {
			continue
		}
		switch counts[key.At] {
		case 0:
			continue
		case 1:
		default:
			return ctxVerdict{refused: true, code: core.CodeInvalidParams, msg: "Invalid parameters: params carry '" + key.Outer + "' twice"}
		}
		var buf [4][]byte
		found, err := cdp.ValuesAt(buf[:0], vals[key.At], key)
		if err != nil {
			return ctxVerdict{refused: true, code: core.CodeInvalidParams, msg: err.Error()}
		}
		for _, raw := range found {
			if key.Target {
				targets++
			}
			x, why := placeRef(sc, key.Kind, raw)
			switch {
			case why != "":
				return ctxVerdict{refused: true, code: core.CodeInvalidParams, msg: why}
			case key.Kind == cdp.RefWorld:
				if x != nil {
					return ctxVerdict{refused: true, relay: true, msg: "cdprelay: world names starting with \"" + contexts.RelayWorldPrefix + "\" are the relay's own"}
				}
				continue
			case key.Kind == cdp.RefScript:
				if x != nil {
					return ctxVerdict{refused: true, relay: true, msg: msgNoScript + string(unquoted(raw))}
				}
				continue
			case x != nil && x.Relay:
				return ctxVerdict{refused: true, relay: true, msg: notFound(key.Kind)}
			case x == nil && strict:
				return ctxVerdict{refused: true, code: core.CodeServerError, msg: notFound(key.Kind)}
			}
			if key.Target && (x == nil || x.Kind != contexts.Isolated) {
				isolated = false
			}
		}
	}
	v.isolated = targets == 1 && isolated
	return v
}

func notFound(k cdp.RefKind) string {
	switch k {
	case cdp.RefObject:
		return msgNoObject
	case cdp.RefFrame:
		return msgNoCallFrame
	}
	return MsgNoContext
}

// relayScript marks a script id as one of the relay's own worlds'.
var relayScript = &contexts.Context{Relay: true}

// placeRef returns the context raw names in sc: nil when there is none.
// For a world name, it returns a context when the name is the relay's;
// for a script id, when the script is the relay's. why is Chrome's answer
// for a value it could not read either.
func placeRef(sc *contexts.Session, k cdp.RefKind, raw []byte) (x *contexts.Context, why string) {
	switch k {
	case cdp.RefContext:
		id, ok := wire.Int(raw)
		if !ok {
			return nil, "Invalid parameters: an execution context id must be an integer"
		}
		if sc == nil {
			return nil, ""
		}
		return sc.ByID[id], ""
	case cdp.RefWorld:
		s, ok := wire.Unquote(raw)
		if !ok {
			return nil, "Invalid parameters: a world name must be a string"
		}
		if contexts.IsRelayWorldName(string(s)) {
			return relayScript, ""
		}
		return nil, ""
	case cdp.RefScript:
		s, ok := wire.Unquote(raw)
		if !ok {
			return nil, "Invalid parameters: a script id must be a string"
		}
		if sc != nil && sc.Scripts[string(s)] {
			return relayScript, ""
		}
		return nil, ""
	case cdp.RefUnique:
		s, ok := wire.Unquote(raw)
		if !ok {
			return nil, "Invalid parameters: a unique context id must be a string"
		}
		if sc == nil {
			return nil, ""
		}
		if id, ok := sc.ByUnique[string(s)]; ok {
			return sc.ByID[id], ""
		}
		return nil, ""
	}
	s, ok := wire.Unquote(raw)
	if !ok {
		return nil, "Invalid parameters: an object or call frame id must be a string"
	}
	id, ok := cdp.IDContext(s)
	if !ok {
		if k == cdp.RefFrame {
			return nil, "Invalid call frame id"
		}
		return nil, "Invalid remote object id"
	}
	if sc == nil {
		return nil, ""
	}
	return sc.ByID[id], ""
}

func unquoted(raw []byte) []byte {
	s, _ := wire.Unquote(raw)
	return s
}

// Contexts is part of the access stage: the contexts k names, judged.
// It reports whether k may go on, and records whether its script runs in
// a client's isolated world. A command on a tab where nothing is guarded
// (and of a method that names no world) costs a few loads, no lock.
func Contexts(c *core.ClientConn, k *core.Cmd) bool {
	spec, t := k.M.Ctx, k.Route.Tab
	strict := guardsContexts(c.Inst, k.Route.Acc, k.Policy.Tiers)
	if !strict && !spec.Worlds && t.Ctxs.RelayWorlds() == 0 {
		return true
	}
	var vals [cdp.MaxCtxOuter][]byte
	var counts [cdp.MaxCtxOuter]int
	wire.MembersOf(k.Params, spec.Outer, vals[:], counts[:])
	named := false
	for _, n := range counts[:len(spec.Outer)] {
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
	v := judgeContexts(st, t, sid, spec, vals[:], counts[:], strict)
	c.Inst.Unlock()
	switch {
	case v.refused && v.relay:
		return c.Refuse(k, core.Decision{Verdict: core.Deny, Rule: api.RuleContext, Message: v.msg})
	case v.refused:
		return c.Failed(k, v.code, v.msg)
	}
	k.Isolated = v.isolated
	return true
}
