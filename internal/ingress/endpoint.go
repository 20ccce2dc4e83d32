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
	epPerson     = routes.AreaPerson    // /v1/instances/<id>/stop, /resume
	numEndpoints = routes.NumAreas
)

type endpointRule struct {
	// scope is what a token must grant; 0 is public (the page shell).
	// alt, when set, is another scope that does as well.
	scope, alt Scope
	// capability endpoints answer every refusal past the Host and Origin
	// checks with the same 404 as an unknown guid, so that no answer says
	// whether a guid exists.
	capability bool
	origin     originPolicy
	// navigable lets a cross-site top-level navigation in.
	navigable bool
}

var endpointRules = [numEndpoints]endpointRule{
	epPage:       {origin: originSelf, navigable: true},
	epDiscovery:  {scope: ScopeCDP, origin: originCDP},
	epCapability: {scope: ScopeCDP, capability: true, origin: originCDP},
	epDevtools:   {scope: ScopeCDP, origin: originCDP},
	epExtension:  {scope: ScopeExtension, capability: true, origin: originExtension},
	epViewer:     {scope: ScopeViewer, origin: originSelf},
	epAdmin:      {scope: ScopeAdmin, origin: originSelf},
	epOther:      {scope: ScopeAdmin, origin: originSelf},
	epBadPath:    {capability: true, origin: originSelf},
	epPerson:     {scope: ScopeViewerInteractive, alt: ScopeAdmin, origin: originSelf},
}

func rule(e endpoint) endpointRule { return endpointRules[e] }

// DefaultPagePaths are the paths of the live-view page shell: the HTML
// and what it loads (routes.DefaultPageShell).
var DefaultPagePaths = routes.DefaultPageShell
