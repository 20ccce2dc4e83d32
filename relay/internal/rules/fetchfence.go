package rules

import (
	"encoding/json"
	"strings"
)

// The navigation backstop's data (the relay's fetchfence.go runs it). The
// command fence sees Page.navigate and Target.createTarget, not a link
// click, location.href from an evaluation, a 30x redirect or a form post,
// so the relay enables the Fetch domain on each tab's session for Document
// requests (FencePattern) and for requests of every type to its own
// origins (Origins.FetchPatterns), and judges what Chrome pauses.
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
	Fence    bool           // the relay's patterns are enabled
	Patterns []FetchPattern // the relay's patterns in force
	Client   *ClientFetch   // nil while the client has no Fetch enabled
}

// ClientFetch is what a client's own Fetch.enable asked for.
type ClientFetch struct {
	Patterns   []FetchPattern
	HandleAuth bool
}

// FetchPattern is one pattern of Fetch.enable, as Chrome reads it.
type FetchPattern struct {
	URLPattern   string `json:"urlPattern,omitempty"`
	ResourceType string `json:"resourceType,omitempty"`
	RequestStage string `json:"requestStage,omitempty"`
}

// FencePattern is the backstop's pattern for navigations: every Document
// request, at the request stage.
var FencePattern = FetchPattern{URLPattern: "*", ResourceType: "Document", RequestStage: "Request"}

// FetchParams builds the Fetch.enable params for a session: the relay's
// patterns, and the client's (cf may be nil). The "patterns" value is a
// []FetchPattern.
func FetchParams(relay []FetchPattern, cf *ClientFetch) map[string]any {
	pats := append([]FetchPattern{}, relay...)
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
func (fs *FetchState) Rewrite(patterns []FetchPattern, handleAuth, enable bool) []byte {
	if enable {
		pats := patterns
		if len(pats) == 0 {
			// Chrome's default for an empty list; it must be spelled out
			// now that the relay's pattern is in the list too.
			pats = []FetchPattern{{URLPattern: "*"}}
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
		if WildcardMatch(u, url) {
			return true
		}
	}
	return false
}

// WildcardMatch matches s against a Fetch urlPattern: '*' is any run, '?'
// one character, and a backslash escapes the next character.
func WildcardMatch(pattern, s string) bool {
	// Iterative matching with one backtrack point for the last '*'.
	pi, si := 0, 0
	starP, starS := -1, 0
	for si < len(s) {
		if pi < len(pattern) {
			switch c := pattern[pi]; c {
			case '*':
				starP, starS = pi, si
				pi++
				continue
			case '?':
				pi++
				si++
				continue
			case '\\':
				if pi+1 < len(pattern) && pattern[pi+1] == s[si] {
					pi += 2
					si++
					continue
				}
			default:
				if c == s[si] {
					pi++
					si++
					continue
				}
			}
		}
		if starP < 0 {
			return false
		}
		pi = starP + 1
		starS++
		si = starS
	}
	return strings.Trim(pattern[pi:], "*") == ""
}
