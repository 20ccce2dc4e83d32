package tiers

import (
	"bytes"

	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/relay/internal/access"
	"github.com/cdprelay/cdprelay/relay/internal/core"
)

// KeepScriptReply (tiers.KeepScript): a client's init script under tiers
// is kept with the identifier Chrome gave it (worldscripts.go).
func KeepScriptReply(in *core.Instance, r *core.Reply) bool {
	if r.Pc.Keep != nil && !r.M.HasError {
		keepScript(in, &r.Pc, r.M.Result)
	}
	return true
}

// WentBlind (tiers.WentBlind): a reply from a page the tab went blind on
// is withheld, whatever it is.
func WentBlind(in *core.Instance, r *core.Reply) bool {
	if core.Withheld(r) {
		*r.Buf = wire.AppendError(*r.Buf, r.Pc.ClientID, r.Session, core.CodeServerError, core.MsgWentBlind)
		return false
	}
	return true
}

// Scopes (tiers.Scopes): on a read-only tab a function's [[Scopes]] do
// not reach the client (they lead to the guard's closures).
func Scopes(in *core.Instance, r *core.Reply) bool {
	if !tabSlot.Of(r.Pc.Tab).readOnly.Load() {
		return true
	}
	*r.Buf = wire.AppendResult(*r.Buf, r.Pc.ClientID, r.Session, access.WithoutScopes(r.M.Result))
	return false
}

// History (tiers.History): a tab's history says nothing of the pages
// automation may not see.
func History(in *core.Instance, r *core.Reply) bool {
	if !in.HasTiers() {
		return true
	}
	*r.Buf = wire.AppendResult(*r.Buf, r.Pc.ClientID, r.Session, blindHistory(in, r.M.Result))
	return false
}

// SideEffect (tiers.SideEffect): a read-only tab's refused side effect,
// explained.
func SideEffect(in *core.Instance, r *core.Reply) bool {
	if !tabSlot.Of(r.Pc.Tab).readOnly.Load() || !bytes.Contains(r.M.Result, SideEffectText) {
		return true
	}
	*r.Buf = wire.AppendResult(*r.Buf, r.Pc.ClientID, r.Session, bytes.ReplaceAll(r.M.Result, SideEffectText, SideEffectExplained))
	return false
}
