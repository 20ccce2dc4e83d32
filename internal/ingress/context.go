package ingress

import "context"

// Grant is what the guard let a request do.
type Grant struct {
	// TokenName is the name of the token the request presented; empty when no
	// token is configured (a loopback peer then gets every scope) or none
	// was needed (the page shell).
	TokenName string
	// Scopes are the scopes granted.
	Scopes ScopeSet
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
