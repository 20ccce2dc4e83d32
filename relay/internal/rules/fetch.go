package rules

import (
	"encoding/json"

	"github.com/cdprelay/cdprelay/relay/internal/cdp"
)

// The navigation backstop's Fetch setup (backstop.go runs it). The
// command fence sees Page.navigate and Target.createTarget, not a link
// click, location.href from an evaluation, a 30x redirect or a form post,
// so the relay enables the Fetch domain on each tab's session for Document
// requests (FencePattern) and for requests of every type to its own
// origins (origins.Origins.FetchPatterns), and judges what Chrome pauses.
//
// chrome.debugger gives the relay and the client one session per target,
// and Fetch.enable replaces the patterns of the previous call, so the
// relay multiplexes: the client's own Fetch.enable and Fetch.disable are
// rewritten into one Fetch.enable with the relay's pattern added
// (FetchState.Rewrite), and each Fetch.requestPaused goes to the client
// only when the client's own patterns match it (ClientFetch.Matches). The
// client sees exactly the requests it asked for.

// FetchState is one session's Fetch configuration. Whoever holds it
// guards it (the relay: the instance's mutex).
type FetchState struct {
	Fence    bool               // the relay's patterns are enabled
	Patterns []cdp.FetchPattern // the relay's patterns in force
	Client   *ClientFetch       // nil while the client has no Fetch enabled
}

// ClientFetch is what a client's own Fetch.enable asked for.
type ClientFetch struct {
	Patterns   []cdp.FetchPattern
	HandleAuth bool
}

// FencePattern is the backstop's pattern for navigations: every Document
// request, at the request stage.
var FencePattern = cdp.FetchPattern{URLPattern: "*", ResourceType: "Document", RequestStage: "Request"}

// FetchParams builds the Fetch.enable params for a session: the relay's
// patterns, and the client's (cf may be nil). The "patterns" value is a
// []cdp.FetchPattern.
func FetchParams(relay []cdp.FetchPattern, cf *ClientFetch) map[string]any {
	pats := append([]cdp.FetchPattern{}, relay...)
	auth := false
	if cf != nil {
		pats = append(pats, cf.Patterns...)
		auth = cf.HandleAuth
	}
	return map[string]any{"patterns": pats, "handleAuthRequests": auth}
}

// Rewrite records a client's Fetch.enable (enable, with its patterns and
// handleAuthRequests) or Fetch.disable on a fenced session, and returns
// the params of what goes to Chrome in its place: one Fetch.enable with
// the relay's patterns and the client's.
func (fs *FetchState) Rewrite(patterns []cdp.FetchPattern, handleAuth, enable bool) []byte {
	if enable {
		pats := patterns
		if len(pats) == 0 {
			// Chrome's default for an empty list; it must be spelled out
			// now that the relay's pattern is in the list too.
			pats = []cdp.FetchPattern{{URLPattern: "*"}}
		}
		fs.Client = &ClientFetch{Patterns: pats, HandleAuth: handleAuth}
	} else {
		// Disabling would drop the relay's pattern too: keep it.
		fs.Client = nil
	}
	b, _ := json.Marshal(FetchParams(fs.Patterns, fs.Client))
	return b
}

// Matches reports whether the client's patterns ask for a pause of a
// request to url of resourceType, at the response stage or not.
func (cf *ClientFetch) Matches(url, resourceType string, responseStage bool) bool {
	for _, pat := range cf.Patterns {
		stage := pat.RequestStage == "Response"
		if stage != responseStage {
			continue
		}
		if pat.ResourceType != "" && pat.ResourceType != resourceType {
			continue
		}
		u := pat.URLPattern
		if u == "" {
			u = "*"
		}
		if cdp.WildcardMatch(u, url) {
			return true
		}
	}
	return false
}
