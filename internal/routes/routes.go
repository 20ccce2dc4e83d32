package routes

import (
	"fmt"
	"net/http"
	"path"
	"strings"
)

// Kind is the endpoint that serves a request.
type Kind uint8

const (
	// KindNotFound: no endpoint serves the path; whoever serves its area
	// answers 404.
	KindNotFound Kind = iota
	// KindDiscovery: Chrome's discovery documents (/json/version,
	// /json/list, /json, /json/protocol, with or without a trailing
	// slash), of the default instance or, under /cdp/<guid>/, of that one.
	KindDiscovery
	// KindCDP: an instance's browser-level CDP socket,
	// /devtools/browser/<guid> or /cdp/<guid>.
	KindCDP
	// KindPage: one page's CDP socket, /devtools/page/<targetId> (the
	// default instance's) or /cdp/<guid>/devtools/page/<targetId>.
	KindPage
	// KindExtension: an instance's extension socket, /extension/<guid>.
	KindExtension
	// KindMint: a new instance, POST /v1/instances (any method but GET and
	// HEAD, which the relay answers with 405).
	KindMint
	// KindViewer: the live view's socket, /viewer.
	KindViewer
	// KindPageShell: the live-view page and the files it loads (GET and
	// HEAD only).
	KindPageShell
	// KindMetrics: Prometheus metrics, GET /metrics.
	KindMetrics
	// KindAudit: the audit ring, GET /v1/audit and /v1/audit/follow.
	KindAudit
	// KindInstances: the status of every instance, GET /v1/instances.
	KindInstances
	// KindInstance: one instance by its public id, /v1/instances/<id>:
	// GET and HEAD its status (other methods but DELETE get 405 there).
	KindInstance
	// KindPerson: a person's action on an instance, POST
	// /v1/instances/<id>/stop or /resume (InstanceID names the instance,
	// Action the action).
	KindPerson
	// KindRemove: removing an instance, DELETE /v1/instances/<id>: the
	// person's, as Stop is (its guid is a 404 from then on, and the
	// person's browser is unpaired).
	KindRemove
	numKinds
)

var kindNames = [numKinds]string{"not-found", "discovery", "cdp", "page", "extension", "mint", "viewer", "page-shell", "metrics", "audit", "instances", "instance", "person", "remove"}

func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Area is a family of paths with one ingress rule. Its names label the
// ingress metrics, so they are a closed set and stay as they are.
type Area uint8

const (
	// AreaPageShell: the live-view page shell, public.
	AreaPageShell Area = iota
	// AreaDiscovery: /json and everything under /json/.
	AreaDiscovery
	// AreaCDP: under /cdp/ and /devtools/browser/, capability URLs.
	AreaCDP
	// AreaDevtools: the rest of /devtools/ (/devtools/page/<targetId>).
	AreaDevtools
	// AreaExtension: under /extension/, capability URLs.
	AreaExtension
	// AreaViewer: /viewer and under /viewer/.
	AreaViewer
	// AreaAdmin: under /v1/ and /debug/, and /metrics: the operator's.
	AreaAdmin
	// AreaOther: anything else, treated as the operator's.
	AreaOther
	// AreaBadPath: not a clean absolute path (dot segments, doubled
	// slashes), which could route one way here and another way behind.
	AreaBadPath
	// AreaPerson: what only the person who lends the browser (or the
	// operator) may do to an instance: stop or resume its automation,
	// remove it. Never a CDP client's, whatever it holds.
	AreaPerson
	// NumAreas is the number of areas, for tables indexed by Area.
	NumAreas
)

var areaNames = [NumAreas]string{"page", "discovery", "cdp", "devtools", "extension", "viewer", "admin", "other", "bad_path", "person"}

func (a Area) String() string {
	if a < NumAreas {
		return areaNames[a]
	}
	return fmt.Sprintf("Area(%d)", uint8(a))
}

// Doc is one of Chrome's discovery documents.
type Doc uint8

const (
	DocList     Doc = iota // /json, /json/list: the targets
	DocVersion             // /json/version: the browser and its socket
	DocProtocol            // /json/protocol: the protocol's names
)

// Route is what a request is for.
type Route struct {
	Kind Kind
	Area Area
	// GUID is the instance's guid in a capability URL (/cdp/<guid>...,
	// /devtools/browser/<guid>, /extension/<guid>); "" for the default
	// instance's discovery documents and pages, and for other kinds.
	GUID string
	// TargetID is the page of KindPage.
	TargetID string
	// InstanceID is the public instance id of KindInstance.
	InstanceID string
	// Doc is the document of KindDiscovery.
	Doc Doc
	// Action is KindPerson's: "stop" or "resume" (of InstanceID), and
	// KindRemove's: "remove".
	Action string
}

// Relay reports whether the relay itself serves the route's area: the
// discovery, CDP and extension paths, served or answered 404 there, and
// minting.
func (r Route) Relay() bool {
	switch r.Area {
	case AreaDiscovery, AreaCDP, AreaDevtools, AreaExtension:
		return true
	}
	return r.Kind == KindMint
}

// DefaultPageShell are the paths of the live-view page shell: the HTML
// and what it loads. They hold no data (everything the page shows comes
// over /viewer, which needs a token), and a browser cannot put a token on
// the requests for a page's script and style.
var DefaultPageShell = []string{"/", "/index.html", "/app.js", "/style.css", "/favicon.svg"}

// Table classifies requests; its page shell is the only part that can be
// configured. Immutable.
type Table struct {
	pageShell map[string]bool
}

// NewTable returns a table whose page shell is pageShell (nil:
// DefaultPageShell).
func NewTable(pageShell []string) (*Table, error) {
	if pageShell == nil {
		pageShell = DefaultPageShell
	}
	t := &Table{pageShell: make(map[string]bool, len(pageShell))}
	for i, p := range pageShell {
		if !CleanPath(p) {
			return nil, fmt.Errorf("page path [%d] %q is not a clean absolute path", i, p)
		}
		t.pageShell[p] = true
	}
	return t, nil
}

var defaultTable, _ = NewTable(nil)

// Classify classifies a request with the default page shell.
func Classify(method, path string) Route { return defaultTable.Classify(method, path) }

// Classify names the endpoint and the area of a request by its method and
// URL path (r.URL.Path, already unescaped).
func (t *Table) Classify(method, p string) Route {
	if !CleanPath(p) {
		return Route{Area: AreaBadPath}
	}
	read := method == http.MethodGet || method == http.MethodHead
	switch {
	case p == "/json" || strings.HasPrefix(p, "/json/"):
		r := Route{Area: AreaDiscovery}
		if d, ok := discoveryDoc(p); ok {
			r.Kind, r.Doc = KindDiscovery, d
		}
		return r
	case strings.HasPrefix(p, "/cdp/"):
		r := Route{Area: AreaCDP}
		guid, rest, _ := strings.Cut(p[len("/cdp/"):], "/")
		if guid == "" {
			return r
		}
		r.GUID = guid
		if rest == "" {
			r.Kind = KindCDP
		} else if d, ok := discoveryDoc("/" + rest); ok {
			r.Kind, r.Doc = KindDiscovery, d
		} else if id, ok := strings.CutPrefix(rest, "devtools/page/"); ok && id != "" {
			r.Kind, r.TargetID = KindPage, id
		} else {
			r.GUID = ""
		}
		return r
	case strings.HasPrefix(p, "/devtools/browser/"):
		r := Route{Area: AreaCDP}
		if guid := p[len("/devtools/browser/"):]; guid != "" {
			r.Kind, r.GUID = KindCDP, guid
		}
		return r
	case strings.HasPrefix(p, "/devtools/"):
		r := Route{Area: AreaDevtools}
		if id, ok := strings.CutPrefix(p, "/devtools/page/"); ok && id != "" {
			r.Kind, r.TargetID = KindPage, id
		}
		return r
	case strings.HasPrefix(p, "/extension/"):
		r := Route{Area: AreaExtension}
		if guid := p[len("/extension/"):]; guid != "" {
			r.Kind, r.GUID = KindExtension, guid
		}
		return r
	case p == "/viewer":
		return Route{Kind: KindViewer, Area: AreaViewer}
	case strings.HasPrefix(p, "/viewer/"):
		return Route{Area: AreaViewer}
	case strings.HasPrefix(p, "/v1/instances/") && personAction(p) != "":
		id, action, _ := strings.Cut(strings.TrimSuffix(p[len("/v1/instances/"):], "/"), "/")
		r := Route{Area: AreaPerson, InstanceID: id, Action: action}
		if method == http.MethodPost {
			r.Kind = KindPerson
		}
		return r
	case p == "/metrics" || strings.HasPrefix(p, "/metrics/") || strings.HasPrefix(p, "/v1/") || strings.HasPrefix(p, "/debug/"):
		r := Route{Area: AreaAdmin}
		switch {
		case p == "/metrics" && read:
			r.Kind = KindMetrics
		case (p == "/v1/audit" || p == "/v1/audit/follow") && read:
			r.Kind = KindAudit
		case p == "/v1/instances" && read:
			r.Kind = KindInstances
		case p == "/v1/instances":
			r.Kind = KindMint
		default:
			// /v1/instances/<id>, with nothing after the id: what may
			// come under it is another endpoint's.
			if id, ok := strings.CutPrefix(p, "/v1/instances/"); ok && id != "" && !strings.Contains(id, "/") {
				r.Kind, r.InstanceID = KindInstance, id
				if method == http.MethodDelete {
					r = Route{Kind: KindRemove, Area: AreaPerson, InstanceID: id, Action: "remove"}
				}
			}
		}
		return r
	case t.pageShell[p] && read:
		return Route{Kind: KindPageShell, Area: AreaPageShell}
	}
	return Route{Area: AreaOther}
}

// personAction is the action of /v1/instances/<id>/<action>, when it is
// one a person may take.
func personAction(p string) string {
	id, action, ok := strings.Cut(strings.TrimSuffix(p[len("/v1/instances/"):], "/"), "/")
	if !ok || id == "" || strings.Contains(action, "/") {
		return ""
	}
	switch action {
	case "stop", "resume":
		return action
	}
	return ""
}

// discoveryDoc names the document at p, the way Chrome's port reads it: a
// trailing slash is allowed.
func discoveryDoc(p string) (Doc, bool) {
	switch strings.TrimSuffix(p, "/") {
	case "/json", "/json/list":
		return DocList, true
	case "/json/version":
		return DocVersion, true
	case "/json/protocol":
		return DocProtocol, true
	}
	return 0, false
}

// CleanPath refuses what would route one way here and another way behind
// (dot segments, doubled slashes); a trailing slash is fine.
func CleanPath(p string) bool {
	if p == "" || p[0] != '/' {
		return false
	}
	c := path.Clean(p)
	return p == c || p == c+"/"
}
