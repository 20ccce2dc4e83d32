package ingress

import (
	"net/http"
	"path"
	"strings"
)

// endpoint is a class of request with one rule: which scope it needs,
// whether its URL is a capability, and how its Origin is judged.
type endpoint uint8

const (
	epPage       endpoint = iota // the live-view page shell: public
	epDiscovery                  // /json/*: the default instance's discovery
	epCapability                 // /cdp/<guid>..., /devtools/browser/<guid>
	epDevtools                   // other /devtools/... (/devtools/page/<targetId>)
	epExtension                  // /extension/<guid>
	epViewer                     // /viewer
	epAdmin                      // /v1/..., /metrics, /debug/...
	epOther                      // anything else: treated as an operator's
	epBadPath                    // not a clean absolute path
	numEndpoints
)

type endpointRule struct {
	name string
	// scope is what a token must grant; 0 is public (the page shell).
	scope Scope
	// capability endpoints answer every refusal past the Host and Origin
	// checks with the same 404 as an unknown guid, so that no answer says
	// whether a guid exists.
	capability bool
	origin     originPolicy
	// navigable lets a cross-site top-level navigation in.
	navigable bool
}

var endpointRules = [numEndpoints]endpointRule{
	epPage:       {name: "page", origin: originSelf, navigable: true},
	epDiscovery:  {name: "discovery", scope: ScopeCDP, origin: originCDP},
	epCapability: {name: "cdp", scope: ScopeCDP, capability: true, origin: originCDP},
	epDevtools:   {name: "devtools", scope: ScopeCDP, origin: originCDP},
	epExtension:  {name: "extension", scope: ScopeExtension, capability: true, origin: originExtension},
	epViewer:     {name: "viewer", scope: ScopeViewer, origin: originSelf},
	epAdmin:      {name: "admin", scope: ScopeAdmin, origin: originSelf},
	epOther:      {name: "other", scope: ScopeAdmin, origin: originSelf},
	epBadPath:    {name: "bad_path", capability: true, origin: originSelf},
}

func (e endpoint) rule() endpointRule { return endpointRules[e] }
func (e endpoint) String() string     { return endpointRules[e].name }

// DefaultPagePaths are the paths of the live-view page shell: the HTML
// and what it loads. They hold no data (everything the page shows comes
// over /viewer, which needs a token), and a browser cannot put a token on
// the requests for a page's script and style.
var DefaultPagePaths = []string{"/", "/index.html", "/app.js", "/style.css", "/favicon.svg"}

// classify names the endpoint a request is for, from what the relay and
// the handlers behind it route on.
func classify(method, p string, pagePaths map[string]bool) endpoint {
	if !cleanPath(p) {
		return epBadPath
	}
	switch {
	case strings.HasPrefix(p, "/json/") || p == "/json":
		return epDiscovery
	case strings.HasPrefix(p, "/cdp/"), strings.HasPrefix(p, "/devtools/browser/"):
		return epCapability
	case strings.HasPrefix(p, "/devtools/"):
		return epDevtools
	case strings.HasPrefix(p, "/extension/"):
		return epExtension
	case p == "/viewer" || strings.HasPrefix(p, "/viewer/"):
		return epViewer
	case strings.HasPrefix(p, "/v1/"), p == "/metrics", strings.HasPrefix(p, "/metrics/"), strings.HasPrefix(p, "/debug/"):
		return epAdmin
	case pagePaths[p] && (method == http.MethodGet || method == http.MethodHead):
		return epPage
	}
	return epOther
}

// cleanPath refuses what would route one way here and another way behind
// (dot segments, doubled slashes); a trailing slash is fine.
func cleanPath(p string) bool {
	if p == "" || p[0] != '/' {
		return false
	}
	c := path.Clean(p)
	return p == c || p == c+"/"
}
