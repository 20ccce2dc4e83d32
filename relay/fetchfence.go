package relay

import (
	"encoding/json"
	"strings"

	"github.com/cdprelay/cdprelay/internal/wire"
)

// The navigation backstop. The command fence sees Page.navigate and
// Target.createTarget, not a link click, location.href from an
// evaluation, a 30x redirect or a form post. When the policy can refuse a
// host, the relay enables the Fetch domain on each tab's session (and each
// out-of-process frame's) for Document requests and fails the disallowed
// ones as blocked-by-client before they leave the browser.
//
// chrome.debugger gives the relay and the client one session per target,
// and Fetch.enable replaces the patterns of the previous call, so the
// relay multiplexes: the client's own Fetch.enable and Fetch.disable are
// rewritten into one Fetch.enable with the relay's pattern added, and each
// Fetch.requestPaused goes to the client only when the client's own
// patterns match it. The client sees exactly the requests it asked for.

// fetchState is one session's Fetch configuration. Guarded by the
// instance's mu.
type fetchState struct {
	fence  bool         // the relay's Document pattern is enabled
	client *clientFetch // nil while the client has no Fetch enabled
}

type clientFetch struct {
	patterns   []fetchPattern
	handleAuth bool
}

type fetchPattern struct {
	URLPattern   string `json:"urlPattern,omitempty"`
	ResourceType string `json:"resourceType,omitempty"`
	RequestStage string `json:"requestStage,omitempty"`
}

var fencePattern = fetchPattern{URLPattern: "*", ResourceType: "Document", RequestStage: "Request"}

// fetchParams builds the Fetch.enable params for a session: the relay's
// pattern when fencing, and the client's.
func fetchParams(fence bool, cf *clientFetch) map[string]any {
	pats := []fetchPattern{}
	if fence {
		pats = append(pats, fencePattern)
	}
	auth := false
	if cf != nil {
		pats = append(pats, cf.patterns...)
		auth = cf.handleAuth
	}
	return map[string]any{"patterns": pats, "handleAuthRequests": auth}
}

// fencing reports whether navigations of this instance need the backstop.
func (in *Instance) fencing() bool {
	return in.srv.policy.load().FencesNavigation(in.profile)
}

// fetchOf returns the Fetch state of t's session sid ("" for the tab's
// own), creating it. Called with mu held.
func (t *tab) fetchOf(sid string) *fetchState {
	if t.fetch == nil {
		t.fetch = make(map[string]*fetchState)
	}
	st := t.fetch[sid]
	if st == nil {
		st = &fetchState{}
		t.fetch[sid] = st
	}
	return st
}

// enableFence turns the backstop on for t's session sid if the policy asks
// for it. It does not wait for Chrome's answer: it may run on the
// extension's read loop.
func (in *Instance) enableFence(x *extConn, t *tab, sid string) {
	if !in.fencing() {
		return
	}
	in.mu.Lock()
	st := t.fetchOf(sid)
	if st.fence {
		in.mu.Unlock()
		return
	}
	st.fence = true
	params := fetchParams(true, st.client)
	in.mu.Unlock()
	x.fire(debuggee(t.id, sid), "Fetch.enable", params)
}

func debuggee(tabID int64, sid string) map[string]any {
	d := map[string]any{"tabId": tabID}
	if sid != "" {
		d["sessionId"] = sid
	}
	return d
}

// fenceFetch intercepts Fetch commands that would weaken the backstop on
// route, a fenced session: Fetch.enable and Fetch.disable are rewritten
// into one Fetch.enable that keeps the relay's pattern; a
// Fetch.continueRequest that changes a request's URL is judged by the
// fence like a navigation. It reports whether it answered or forwarded the
// command itself. replyTo is the session the client's reply names.
func (c *clientConn) fenceFetch(env *wire.Envelope, route, replyTo *session) bool {
	in := c.inst
	sid := ""
	if route.child {
		sid = route.id
	}
	in.mu.Lock()
	st := route.tab.fetch[sid]
	if st == nil || !st.fence {
		in.mu.Unlock()
		return false
	}
	var method string
	switch string(env.Method) {
	case "Fetch.enable":
		var p struct {
			Patterns           []fetchPattern `json:"patterns"`
			HandleAuthRequests bool           `json:"handleAuthRequests"`
		}
		if env.Params != nil && json.Unmarshal(env.Params, &p) != nil {
			in.mu.Unlock()
			// Never forwarded as it is: Chrome would take params the relay
			// could not read and drop the relay's pattern.
			c.replyErrorRawSession(env.ID, env.SessionID, codeInvalidParams, "Invalid parameters: Fetch.enable params the navigation fence cannot read")
			return true
		}
		if len(p.Patterns) == 0 {
			// Chrome's default for an empty list; it must be spelled out
			// now that the relay's pattern is in the list too.
			p.Patterns = []fetchPattern{{URLPattern: "*"}}
		}
		st.client = &clientFetch{patterns: p.Patterns, handleAuth: p.HandleAuthRequests}
		method = "Fetch.enable"
		// A further session on the tab gets the pauses too, as it would
		// through the ordinary domain switch.
		if replyTo != nil && !replyTo.child && replyTo.tab != nil {
			if replyTo.enabled == nil {
				replyTo.enabled = make(map[string]bool)
			}
			replyTo.enabled["Fetch"] = true
		}
	case "Fetch.disable":
		st.client = nil
		// Disabling would drop the relay's pattern too: keep it.
		method = "Fetch.enable"
	case "Fetch.continueRequest":
		in.mu.Unlock()
		url := ""
		if env.Params != nil {
			url = string(wire.StringField(env.Params, "url"))
		}
		if url == "" {
			return false
		}
		// A continued request with a new URL is a navigation nobody
		// announced: the fence judges it.
		if d := in.srv.policy.load().URL(in.profile, url); d.Verdict != Allow {
			in.srv.cfg.Metrics.countRefusal(d)
			in.observe(Event{Actor: ActorClient, Kind: KindDenied, Method: "Fetch.continueRequest", Rule: d.Rule, Outcome: OutcomeDenied, Detail: url})
			c.replyErrorRawSession(env.ID, env.SessionID, codeServerError, d.Message)
			return true
		}
		return false
	default:
		in.mu.Unlock()
		return false
	}
	params, _ := json.Marshal(fetchParams(true, st.client))
	in.mu.Unlock()
	rewritten := *env
	rewritten.Method = []byte(method)
	rewritten.Params = params
	if !c.ext.forwardAs(c, &rewritten, route, replyTo) {
		c.replyErrorRawSession(env.ID, env.SessionID, codeServerError, "Extension disconnected")
	}
	return true
}

// pausedRequest is what the backstop reads of Fetch.requestPaused.
type pausedRequest struct {
	RequestID string `json:"requestId"`
	Request   struct {
		URL string `json:"url"`
	} `json:"request"`
	ResourceType        string `json:"resourceType"`
	ResponseStatusCode  *int   `json:"responseStatusCode"`
	ResponseErrorReason string `json:"responseErrorReason"`
}

// judgePaused decides a Fetch.requestPaused on a fenced session. It
// reports whether the relay dealt with the request itself (failed or
// continued it); otherwise the event goes to the client. Runs on the
// extension's read loop: it must not wait for Chrome.
func (in *Instance) judgePaused(x *extConn, t *tab, sid string, params []byte) (handled bool) {
	in.mu.Lock()
	st := t.fetch[sid]
	if st == nil || !st.fence {
		in.mu.Unlock()
		return false
	}
	var cf *clientFetch
	if st.client != nil && in.client != nil {
		cf = st.client
	}
	in.mu.Unlock()

	var p pausedRequest
	if json.Unmarshal(params, &p) != nil || p.RequestID == "" {
		return false
	}
	responseStage := p.ResponseStatusCode != nil || p.ResponseErrorReason != ""
	if !responseStage && p.ResourceType == "Document" {
		if d := in.srv.policy.load().URL(in.profile, p.Request.URL); d.Verdict != Allow {
			x.fire(debuggee(t.id, sid), "Fetch.failRequest", map[string]string{"requestId": p.RequestID, "errorReason": "BlockedByClient"})
			in.observe(Event{Actor: ActorRelay, Kind: KindNavigate, Target: t.targetID, Rule: d.Rule, Outcome: OutcomeDenied, Detail: p.Request.URL})
			in.srv.cfg.Metrics.countRefusal(d)
			return true
		}
	}
	if cf != nil && cf.matches(p, responseStage) {
		return false
	}
	x.fire(debuggee(t.id, sid), "Fetch.continueRequest", map[string]string{"requestId": p.RequestID})
	return true
}

// matches reports whether the client's patterns ask for this pause.
func (cf *clientFetch) matches(p pausedRequest, responseStage bool) bool {
	for _, pat := range cf.patterns {
		stage := pat.RequestStage == "Response"
		if stage != responseStage {
			continue
		}
		if pat.ResourceType != "" && pat.ResourceType != p.ResourceType {
			continue
		}
		u := pat.URLPattern
		if u == "" {
			u = "*"
		}
		if wildcardMatch(u, p.Request.URL) {
			return true
		}
	}
	return false
}

// wildcardMatch matches s against a Fetch urlPattern: '*' is any run, '?'
// one character, and a backslash escapes the next character.
func wildcardMatch(pattern, s string) bool {
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

// fire sends a command of the relay's own without waiting for its reply:
// the backstop runs on the extension's read loop, where waiting for a
// reply would deadlock. Waiting for room in the queue does not (the writer
// drains it on its own), and a fence command must never be dropped.
func (x *extConn) fire(deb map[string]any, method string, params any) {
	args, err := json.Marshal([]any{deb, method, params})
	if err != nil {
		return
	}
	x.mu.Lock()
	if x.gone {
		x.mu.Unlock()
		return
	}
	x.nextID++
	id := x.nextID
	x.pending[id] = pendingCall{fire: true}
	x.mu.Unlock()
	buf := getBuf()
	b := append(*buf, `{"id":`...)
	b = wire.AppendInt(b, id)
	b = append(b, `,"method":"chrome.debugger.sendCommand","params":`...)
	b = append(b, args...)
	b = append(b, '}')
	*buf = b
	if !x.p.send(buf) {
		x.forget(id)
	}
}

// refreshFences brings every attached tab's own session in line with the
// policy after it changed: the backstop goes on where it is now needed and
// off where it no longer is, keeping the client's own Fetch patterns.
func (s *Server) refreshFences() {
	for _, in := range s.Instances() {
		want := in.fencing()
		in.mu.Lock()
		x := in.ext
		var turnOn, turnOff []*tab
		for _, t := range in.tabs {
			if t.state != tabAttached {
				continue
			}
			st := t.fetch[""]
			has := st != nil && st.fence
			switch {
			case want && !has:
				turnOn = append(turnOn, t)
			case !want && has:
				turnOff = append(turnOff, t)
				st.fence = false
			}
		}
		params := make([]map[string]any, len(turnOff))
		for i, t := range turnOff {
			params[i] = fetchParams(false, t.fetch[""].client)
		}
		in.mu.Unlock()
		if x == nil {
			continue
		}
		for _, t := range turnOn {
			in.enableFence(x, t, "")
		}
		for i, t := range turnOff {
			if len(params[i]["patterns"].([]fetchPattern)) == 0 {
				x.fire(debuggee(t.id, ""), "Fetch.disable", nil)
			} else {
				x.fire(debuggee(t.id, ""), "Fetch.enable", params[i])
			}
		}
	}
}
