package ingress

import "github.com/cdprelay/cdprelay/internal/routes"

// endpoint is a class of request with one rule: which scope it needs,
// whether its URL is a capability, and how its Origin is judged. The
// classes are the areas of the route table (internal/routes), which the
// handlers behind the guard route on too.
type endpoint = routes.Area

const (
	epPage       = routes.AreaPageShell // the live-view page shell: public
	epDiscovery  = routes.AreaDiscovery // /json/*: the default instance's discovery
	epCapability = routes.AreaCDP       // /cdp/<guid>..., /devtools/browser/<guid>
	epDevtools   = routes.AreaDevtools  // other /devtools/... (/devtools/page/<targetId>)
	epExtension  = routes.AreaExtension // /extension/<guid>
	epViewer     = routes.AreaViewer    // /viewer
	epAdmin      = routes.AreaAdmin     // /v1/..., /metrics, /debug/...
	epOther      = routes.AreaOther     // anything else: treated as an operator's
	epBadPath    = routes.AreaBadPath   // not a clean absolute path
	epPerson     = routes.AreaPerson    // /v1/instances/<id>/stop, /resume; DELETE /v1/instances/<id>
	numEndpoints = routes.NumAreas
)

type endpointRule struct {
	// scopes are what a token must grant, one of them; 0 is public (the
	// page shell).
	scopes ScopeSet
	// operatorOnly refuses a tenant's token, whatever its scopes: what
	// the endpoint shows (metrics, the relay's internals) is about every
	// tenant at once.
	operatorOnly bool
	// capability endpoints answer every refusal past the Host and Origin
	// checks with the same 404 as an unknown guid, so that no answer says
	// whether a guid exists.
	capability bool
	origin     originPolicy
	// navigable lets a cross-site top-level navigation in.
	navigable bool
	// person endpoints are the person's actions: they need the person's
	// credential (Grant.Person) besides the scope, on loopback too.
	person bool
	// sameOrigin refuses what a browser says another page sent, of the
	// same site (Sec-Fetch-Site: same-site: another port of the same
	// host) as well as of another: the person's actions and the live
	// view's socket are the relay's own page's.
	sameOrigin bool
}

var endpointRules = [numEndpoints]endpointRule{
	epPage:       {origin: originSelf, navigable: true},
	epDiscovery:  {scopes: ScopeSet(ScopeCDP), origin: originCDP},
	epCapability: {scopes: ScopeSet(ScopeCDP), capability: true, origin: originCDP},
	epDevtools:   {scopes: ScopeSet(ScopeCDP), origin: originCDP},
	epExtension:  {scopes: ScopeSet(ScopeExtension), capability: true, origin: originExtension},
	epViewer:     {scopes: ScopeSet(ScopeViewer), origin: originSelf, sameOrigin: true},
	epAdmin:      {scopes: ScopeSet(ScopeAdmin), operatorOnly: true, origin: originSelf},
	epOther:      {scopes: ScopeSet(ScopeAdmin), operatorOnly: true, origin: originSelf},
	epBadPath:    {capability: true, origin: originSelf},
	epPerson:     {scopes: ScopeSet(ScopeViewerInteractive | ScopeAdmin), origin: originSelf, person: true, sameOrigin: true},
}

func rule(e endpoint) endpointRule { return endpointRules[e] }

// ruleFor is the rule of one route: its area's, except for the operator's
// endpoints that a tenant's token may use too, each answering for that
// tenant's instances only (the handlers behind scope them). Every other
// admin path, /metrics and /debug/ among them and any added later until
// it is listed here, stays the operator's.
func ruleFor(rt routes.Route) endpointRule {
	r := rule(rt.Area)
	if rt.Kind == routes.KindRemove {
		// Removing an instance is what pairing undoes, as before; it is
		// the person's now, as Stop is.
		r.scopes = ScopeSet(ScopeAdmin | ScopePair)
	}
	if rt.Area != epAdmin {
		return r
	}
	switch rt.Kind {
	case routes.KindMint:
		r.scopes = ScopeSet(ScopeAdmin | ScopePair)
		r.operatorOnly = false
	case routes.KindInstance:
		// Reading one instance is the admin's (the handler answers other
		// methods 405).
		r.scopes = ScopeSet(ScopeAdmin | ScopePair)
		r.operatorOnly = false
	case routes.KindInstances, routes.KindAudit:
		r.operatorOnly = false
	}
	return r
}

// DefaultPagePaths are the paths of the live-view page shell: the HTML
// and what it loads (routes.DefaultPageShell).
var DefaultPagePaths = routes.DefaultPageShell
