package core

import (
	"bytes"

	tier "github.com/cdprelay/cdprelay/relay/internal/tiers"

	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/relay/internal/access"
)

// KeepScriptReply (tiers.KeepScript): a client's init script under tiers
// is kept with the identifier Chrome gave it (initscripts.go).
func (x *ExtConn) KeepScriptReply(r *Reply) bool {
	if r.Pc.keep != nil && !r.M.HasError {
		x.Inst.keepScript(&r.Pc, r.M.Result)
	}
	return true
}

// WentBlind (tiers.WentBlind): a reply from a page the tab went blind on
// is withheld, whatever it is.
func (x *ExtConn) WentBlind(r *Reply) bool {
	if Withheld(r) {
		*r.Buf = wire.AppendError(*r.Buf, r.Pc.ClientID, r.Session, CodeServerError, MsgWentBlind)
		return false
	}
	return true
}

// Scopes (tiers.Scopes): on a read-only tab a function's [[Scopes]] do
// not reach the client (they lead to the guard's closures).
func (x *ExtConn) Scopes(r *Reply) bool {
	if !r.Pc.Tab.readOnly.Load() {
		return true
	}
	*r.Buf = wire.AppendResult(*r.Buf, r.Pc.ClientID, r.Session, access.WithoutScopes(r.M.Result))
	return false
}

// History (tiers.History): a tab's history says nothing of the pages
// automation may not see.
func (x *ExtConn) History(r *Reply) bool {
	if !x.Inst.HasTiers() {
		return true
	}
	*r.Buf = wire.AppendResult(*r.Buf, r.Pc.ClientID, r.Session, x.Inst.blindHistory(r.M.Result))
	return false
}

// SideEffect (tiers.SideEffect): a read-only tab's refused side effect,
// explained.
func (x *ExtConn) SideEffect(r *Reply) bool {
	if !r.Pc.Tab.readOnly.Load() || !bytes.Contains(r.M.Result, tier.SideEffectText) {
		return true
	}
	*r.Buf = wire.AppendResult(*r.Buf, r.Pc.ClientID, r.Session, bytes.ReplaceAll(r.M.Result, tier.SideEffectText, tier.SideEffectExplained))
	return false
}
