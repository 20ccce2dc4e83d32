package ingress

import "context"

// Grant is what the guard let a request do.
type Grant struct {
	// TokenName is the name of the token the request presented; empty when no
	// token is configured (a loopback peer then gets every scope) or none
	// was needed (the page shell).
	TokenName string
	// Tenant is the tenant the token belongs to; empty for the operator
	// (a token without a tenant, or a loopback peer of the zero-config
	// relay), who reaches every instance.
	Tenant string
	// Scopes are the scopes granted.
	Scopes ScopeSet
	// Person: the request may act as the person who lends the browser
	// (Stop and Resume, approvals, dialogs, taking over a tab, removing an
	// instance), within its scopes. It holds for the person key, and for a
	// token without the cdp scope: what drives tabs never overrules the
	// person. A loopback peer of the zero-config relay, which gets every
	// scope, is not the person unless it presents the key.
	Person bool
	// PersonKey: the request presented the person key.
	PersonKey bool
	// KeyRefused: the request offered a person key that is not this
	// relay's (one the page kept from before the key file was replaced).
	// It goes on as if it had offered none, so that the live view can say
	// why it may only watch.
	KeyRefused bool
}

// Who names the credential of the grant, for the audit log and for what
// the person and the automation are told: "person key", "token <name>",
// or "" for none (a loopback peer of the zero-config relay).
func (g Grant) Who() string {
	switch {
	case g.PersonKey:
		return PersonKeyName
	case g.TokenName != "":
		return "token " + g.TokenName
	}
	return ""
}

type grantKey struct{}

func withGrant(ctx context.Context, g Grant) context.Context {
	return context.WithValue(ctx, grantKey{}, g)
}

// GrantFrom returns the grant of a request that passed a Guard.
func GrantFrom(ctx context.Context) (Grant, bool) {
	g, ok := ctx.Value(grantKey{}).(Grant)
	return g, ok
}

// Scopes returns the scopes granted to a request that passed a Guard, and
// none for any other: a handler mounted without the guard grants nothing
// by mistake.
func Scopes(ctx context.Context) ScopeSet {
	g, _ := GrantFrom(ctx)
	return g.Scopes
}

// Tenant returns the tenant a request that passed a Guard acts for: ""
// is the operator. A request that did not pass a Guard has no grant and
// is the operator's too: the handlers behind the guard are never mounted
// without it (Scopes then grants nothing anyway).
func Tenant(ctx context.Context) string {
	g, _ := GrantFrom(ctx)
	return g.Tenant
}
