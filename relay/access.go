package relay

import (
	"encoding/json"
	"github.com/cdprelay/cdprelay/internal/wire"
	"net/url"
	"slices"
	"strings"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

func timeNowMilli() int64 { return time.Now().UnixMilli() }

// What automation may do with a tab, decided by where the tab is right now
// and by who holds it.
//
//   - full: everything the policy allows;
//   - read-only: the automation may read the tab but not act on it — no
//     input, no navigation, no DOM writes, no script with side effects. A
//     person holding the tab from the live view makes it read-only;
//   - blind: the automation sees nothing of the tab and may only leave it:
//     navigate it away (through the URL fence), detach, or close a tab it
//     opened. A tab on a page that is never shared (a file, a browser or
//     extension page) is blind, and so is a tab that went somewhere the
//     URL fence refuses (a page restored from the back/forward cache makes
//     no request the backstop could stop).
//
// The access of a tab is kept with the tab and decided again whenever its
// top-level URL, its holder or the policy changes (state.updateAccess).
// The command side consults it in the pipeline's access stage; the event
// side withholds a blind tab's events (events.go) and replaces with an
// error the reply of any command that was still running when the tab went
// blind, since it may have run in the new page (tab.blindEpoch).

type access uint8

const (
	accessFull access = iota
	accessReadOnly
	accessBlind
)

func (a access) String() string {
	switch a {
	case accessReadOnly:
		return "read-only"
	case accessBlind:
		return "blind"
	}
	return "full"
}

// tabAccess is a tab's access with the reason a refusal gives.
type tabAccess struct {
	level access
	rule  string // bounded rule id, for records and metrics
	why   string // what a refusal says, after "cdprelay: "
}

// Rule ids of the access stage.
const (
	ruleNeverShared   = "relay:page-never-shared"
	ruleOutsideFence  = "relay:outside-allowed-hosts"
	ruleTakeOverRead  = ruleTakeOver
	ruleReadOnlyWrite = "relay:read-only"
	ruleBlindFrame    = "relay:blind-frame"
)

// pageScheme classifies a top-level URL: shareable web content, a page the
// relay treats as harmless (Chrome's error page, about:blank), or a page
// that is never shared.
func pageScheme(raw string) (web, special bool) {
	i := strings.IndexByte(raw, ':')
	if i <= 0 {
		return false, false
	}
	switch strings.ToLower(raw[:i]) {
	case "http", "https":
		return true, false
	case "about":
		rest := raw[i+1:]
		if j := strings.IndexAny(rest, "?#"); j >= 0 {
			rest = rest[:j]
		}
		return false, rest == "blank" || rest == "srcdoc"
	case "chrome-error":
		return false, strings.HasPrefix(raw, "chrome-error://chromewebdata/")
	case "blob", "filesystem":
		// Their content is their origin's: judge the URL inside.
		inner, _ := pageScheme(raw[i+1:])
		return inner, false
	}
	return false, false
}

// origin reduces a URL to its origin, for what a blind tab may show.
func origin(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		if i := strings.IndexByte(raw, ':'); i > 0 {
			return raw[:i+1]
		}
		return ""
	}
	if u.Host == "" {
		return u.Scheme + ":"
	}
	return u.Scheme + "://" + u.Host
}

// computeAccess decides t's access from the document it shows, its holder
// and the policy.
func (st *state) computeAccess(t *tab) tabAccess {
	in := st.in
	u := t.docURL
	if u == "" {
		u = t.url
	}
	web, special := pageScheme(u)
	switch {
	case !web && !special:
		return tabAccess{level: accessBlind, rule: ruleNeverShared,
			why: "the tab shows " + schemeOf(u) + " page, which is never shared with automation; navigate it to a web page or close it"}
	case web && in.fencing():
		if d := in.srv.policy.load().URL(in.profile, u); d.Verdict != Allow {
			return tabAccess{level: accessBlind, rule: ruleOutsideFence,
				why: "the tab is on " + origin(u) + ", outside the hosts automation may use (" + strings.TrimPrefix(d.Message, "Denied by cdprelay policy: ") + "); navigate it back"}
		}
	}
	var a tabAccess
	if web {
		a = st.tierAccess(u)
		for _, fu := range t.frames {
			if fa := st.childAccess(fu); fa.level > a.level {
				a = fa
				a.why = "a frame of the page is on another site: " + a.why
			}
		}
	}
	// On its way to a site automation may see less of: that counts from
	// the moment it is known (the URL fence has its own ways to stop the
	// navigation, and a refused one commits an error page).
	if to := st.navAccess(t.navTo); to.level > a.level {
		a = to
	}
	if (len(t.blindFrames) >= maxPendingFrames || len(t.blindReqs) >= maxPendingFrames) && a.level < accessBlind {
		a = tabAccess{level: accessBlind, rule: ruleBlindFrame, why: "the page has more frames on their way to sites hidden from automation than the relay follows"}
	}
	if a.level != accessFull {
		return a
	}
	if t.control != "" {
		return tabAccess{level: accessReadOnly, rule: ruleTakeOverRead, why: msgControlledWhy}
	}
	return tabAccess{}
}

// navAccess is the access the tiers give the page a frame is on its way
// to ("" for none).
func (st *state) navAccess(to string) tabAccess {
	if to == "" {
		return tabAccess{}
	}
	if web, _ := pageScheme(to); !web {
		return tabAccess{}
	}
	a := st.tierAccess(to)
	if a.level > accessFull {
		a.why = "it is on its way to a page where " + a.why
	}
	return a
}

// tierAccess is the access the policy's tiers give the page at u.
func (st *state) tierAccess(u string) tabAccess {
	in := st.in
	tr, ok := in.srv.policy.load().(TierRuler)
	if !ok {
		return tabAccess{}
	}
	switch tier, rule, host := tr.Tier(in.profile, u); tier {
	case "blind":
		return tabAccess{level: accessBlind, rule: rule, why: host + " is blind to automation (tier blind): it sees nothing of it and may only navigate away, detach, or close a tab it opened"}
	case "read-only":
		return tabAccess{level: accessReadOnly, rule: rule, why: host + " is read-only to automation (tier read-only): it may read the page but not act on it"}
	}
	return tabAccess{}
}

// hasTiers reports whether the instance's policy gives any site a tier.
func (in *Instance) hasTiers() bool {
	tr, ok := in.srv.policy.load().(TierRuler)
	return ok && tr.HasTiers(in.profile)
}

func schemeOf(raw string) string {
	if i := strings.IndexByte(raw, ':'); i > 0 {
		return "a " + strings.ToLower(raw[:i]) + ":"
	}
	return "a non-web"
}

// updateAccess decides t's access again and records a change. Going blind
// moves the tab's blind epoch on, so that replies to commands sent before
// are withheld. It reports the access before the change.
func (st *state) updateAccess(t *tab) (was tabAccess, changed bool) {
	now := st.computeAccess(t)
	was = t.acc
	if now == was {
		return was, false
	}
	t.acc = now
	if now.level == accessBlind && was.level != accessBlind {
		// Replies of commands still running are withheld, and the live
		// view forgets the tab's last frame, which shows it.
		t.blindEpoch.Add(1)
		notifyHandles(t.handles, TabEvent{Method: EventHidden})
	}
	st.syncScripts(t)
	if now.level == accessFull {
		st.replaySets(t)
	}
	t.readOnly.Store(now.level == accessReadOnly)
	switch {
	case now.level == accessReadOnly && was.level != accessReadOnly:
		// A fresh layer of the guard in every isolated world it has.
		l, src := newGuard()
		t.guard = &l
		for sid, w := range t.worlds {
			for id := range w.ids {
				st.fire(t.id, sid, "Runtime.evaluate", map[string]any{"expression": src, "contextId": id, "silent": true})
			}
		}
	case was.level == accessReadOnly && now.level != accessReadOnly && t.guard != nil:
		off := t.guard.offScript()
		for sid, w := range t.worlds {
			for id := range w.ids {
				st.fire(t.id, sid, "Runtime.evaluate", map[string]any{"expression": off, "contextId": id, "silent": true})
			}
		}
		t.guard = nil
	}
	return was, true
}

// The read-only command table: what automation may still send to a tab it
// may read but not act on. Everything not listed is refused; a listed
// method with a check passes only when the check does.

// readOnlyRule is how a read-only tab treats one method.
type readOnlyRule uint8

const (
	roRefuse    readOnlyRule = iota
	roAllow                  // reads, and switches that only start or stop events
	roNoEffects              // script: run with throwOnSideEffect forced on
	roEmptyInit              // Page.addScriptToEvaluateOnNewDocument: only with a source that runs nothing (an isolated world's bootstrap)
	roPlainCont              // Fetch.continueRequest: only unchanged (requestId alone)
)

var readOnlyDomains = map[string]readOnlyRule{
	"Accessibility": roAllow, "DOMSnapshot": roAllow, "Inspector": roAllow, "Log": roAllow,
	"Performance": roAllow, "PerformanceTimeline": roAllow, "Security": roAllow, "LayerTree": roAllow,
}

var readOnlyMethods = map[string]readOnlyRule{
	"CSS.enable": roAllow, "CSS.disable": roAllow, "CSS.getBackgroundColors": roAllow, "CSS.getComputedStyleForNode": roAllow,
	"CSS.getInlineStylesForNode": roAllow, "CSS.getMatchedStylesForNode": roAllow, "CSS.getMediaQueries": roAllow,
	"CSS.getPlatformFontsForNode": roAllow, "CSS.getStyleSheetText": roAllow, "CSS.getLayersForNode": roAllow,
	"CSS.getAnimatedStylesForNode": roAllow, "CSS.takeComputedStyleUpdates": roAllow, "CSS.trackComputedStyleUpdates": roAllow,
	"CSS.takeCoverageDelta": roAllow, "CSS.startRuleUsageTracking": roAllow, "CSS.stopRuleUsageTracking": roAllow,

	"DOM.enable": roAllow, "DOM.disable": roAllow, "DOM.describeNode": roAllow, "DOM.getAttributes": roAllow,
	"DOM.getBoxModel": roAllow, "DOM.getContentQuads": roAllow, "DOM.getDocument": roAllow, "DOM.getFlattenedDocument": roAllow,
	"DOM.getFrameOwner": roAllow, "DOM.getNodeForLocation": roAllow, "DOM.getNodesForSubtreeByStyle": roAllow,
	"DOM.getOuterHTML": roAllow, "DOM.getRelayoutBoundary": roAllow, "DOM.getSearchResults": roAllow,
	"DOM.discardSearchResults": roAllow, "DOM.performSearch": roAllow, "DOM.pushNodeByPathToFrontend": roAllow,
	"DOM.pushNodesByBackendIdsToFrontend": roAllow, "DOM.querySelector": roAllow, "DOM.querySelectorAll": roAllow,
	"DOM.requestChildNodes": roAllow, "DOM.requestNode": roAllow, "DOM.resolveNode": roAllow,
	"DOM.getTopLayerElements": roAllow, "DOM.getElementByRelation": roAllow, "DOM.getContainerForNode": roAllow,
	"DOM.getQueryingDescendantsForContainer": roAllow, "DOM.getAnchorElement": roAllow, "DOM.getFileInfo": roAllow,
	"DOM.getDetachedDomNodes": roAllow, "DOM.collectClassNamesFromSubtree": roAllow,
	"DOMDebugger.getEventListeners": roAllow,
	// Scrolling an element into view moves nothing of the page but where
	// it is shown; reading often needs it.
	"DOM.scrollIntoViewIfNeeded": roAllow,

	"IO.read": roAllow, "IO.close": roAllow, "IO.resolveBlob": roAllow,

	"Network.enable": roAllow, "Network.disable": roAllow, "Network.setCacheDisabled": roAllow, "Network.getResponseBody": roAllow,
	"Network.getRequestPostData": roAllow, "Network.getCertificate": roAllow, "Network.getSecurityIsolationStatus": roAllow,
	"Network.searchInResponseBody": roAllow, "Network.streamResourceContent": roAllow,
	"Network.takeResponseBodyForInterceptionAsStream": roAllow,

	"Fetch.enable": roAllow, "Fetch.disable": roAllow, "Fetch.getResponseBody": roAllow,
	"Fetch.takeResponseBodyAsStream": roAllow, "Fetch.continueRequest": roPlainCont,

	"Overlay.enable": roAllow, "Overlay.disable": roAllow, "Overlay.hideHighlight": roAllow,

	"Page.enable": roAllow, "Page.disable": roAllow, "Page.getFrameTree": roAllow, "Page.getResourceTree": roAllow,
	"Page.getResourceContent": roAllow, "Page.getLayoutMetrics": roAllow, "Page.getNavigationHistory": roAllow,
	"Page.getAppManifest": roAllow, "Page.getInstallabilityErrors": roAllow, "Page.getManifestIcons": roAllow,
	"Page.getAppId": roAllow, "Page.getOriginTrials": roAllow, "Page.getPermissionsPolicyState": roAllow,
	"Page.getAdScriptAncestry": roAllow, "Page.captureScreenshot": roAllow, "Page.captureSnapshot": roAllow,
	"Page.printToPDF": roAllow, "Page.startScreencast": roAllow, "Page.stopScreencast": roAllow,
	"Page.screencastFrameAck": roAllow, "Page.setLifecycleEventsEnabled": roAllow, "Page.createIsolatedWorld": roAllow,
	"Page.searchInResource": roAllow, "Page.removeScriptToEvaluateOnNewDocument": roAllow,
	"Page.addScriptToEvaluateOnNewDocument": roEmptyInit,

	"Runtime.enable": roAllow, "Runtime.disable": roAllow, "Runtime.getProperties": roAllow,
	"Runtime.releaseObject": roAllow, "Runtime.releaseObjectGroup": roAllow, "Runtime.getIsolateId": roAllow,
	"Runtime.getHeapUsage": roAllow, "Runtime.runIfWaitingForDebugger": roAllow, "Runtime.discardConsoleEntries": roAllow,
	"Runtime.awaitPromise": roAllow, "Runtime.globalLexicalScopeNames": roAllow,
	"Runtime.getExceptionDetails": roAllow, "Runtime.setAsyncCallStackDepth": roAllow,
	"Runtime.setCustomObjectFormatterEnabled": roAllow, "Runtime.setMaxCallStackSizeToCapture": roAllow,
	"Runtime.evaluate": roNoEffects, "Runtime.callFunctionOn": roNoEffects,

	"Storage.getUsageAndQuota": roAllow, "Storage.getStorageKeyForFrame": roAllow, "Storage.getStorageKey": roAllow,

	"Target.getTargetInfo": roAllow, "Target.setAutoAttach": roAllow, "Target.detachFromTarget": roAllow,
	"Target.getTargets": roAllow, "Target.setDiscoverTargets": roAllow, "Target.attachToTarget": roAllow,
	"Target.getBrowserContexts": roAllow, "Target.attachToBrowserTarget": roAllow,

	"Browser.getVersion": roAllow, "Browser.setDownloadBehavior": roAllow,
}

// readOnly returns how a read-only tab treats m.
func readOnly(m *methodInfo) readOnlyRule {
	if r, ok := readOnlyMethods[m.name]; ok {
		return r
	}
	if m.domain != domainOther {
		return readOnlyDomains[cdpDomains[m.domain]]
	}
	return roRefuse
}

// blindAllowed lists what automation may do on a blind tab: leave it.
// Page.navigate still goes through the URL fence, and may not go to a
// blind page; the enable switches only start events the relay withholds;
// the rest describe or end the automation's own session.
var blindAllowed = map[string]bool{
	"Page.navigate":                   true,
	"Target.detachFromTarget":         true,
	"Target.closeTarget":              true,
	"Target.getTargetInfo":            true,
	"Target.setAutoAttach":            true,
	"Target.getTargets":               true,
	"Target.setDiscoverTargets":       true,
	"Target.attachToBrowserTarget":    true,
	"Target.getBrowserContexts":       true,
	"Runtime.runIfWaitingForDebugger": true,
	"Page.setLifecycleEventsEnabled":  true,
	"Browser.getVersion":              true,
	"Browser.setDownloadBehavior":     true,
}

// hidesURL reports whether a tab's address-bar URL is one discovery must
// reduce to its origin, whatever the document shows (a page never shared
// that the tab is on its way to, say).
func (st *state) hidesURL(raw string) bool {
	return st.urlAccess(raw).level == accessBlind
}

// urlAccess is the access a tab would have on raw (with nobody holding
// it): what a navigation there would make of the tab. The automation may
// not navigate into a page it could not see.
func (st *state) urlAccess(raw string) tabAccess {
	return st.computeAccess(&tab{docURL: raw})
}

// gate decides a command on a tab whose access is acc, before the
// emulation and the tab see it. It returns the params to forward (rewritten
// for script on a read-only tab) and, when it refuses, the decision.
func (c *clientConn) gate(k *cmd, acc tabAccess) (refusal Decision, ok bool) {
	m := k.m
	switch acc.level {
	case accessBlind:
		if !blindAllowed[m.name] && !m.enable && !m.disable && !(m.name == "Page.addScriptToEvaluateOnNewDocument" && initRunsNothing(k.params)) {
			return accessRefusal(acc), false
		}
	case accessReadOnly:
		switch readOnly(m) {
		case roAllow:
		case roNoEffects:
			sid := ""
			if k.r.via.child {
				sid = k.r.via.id
			}
			st := c.inst.lock()
			isolated := k.r.tab.guard != nil && st.isolatedTarget(k.r.tab, sid, k.m.name, k.params)
			c.inst.unlock()
			if isolated {
				break // the guard is in that world (worlds.go)
			}
			p, err := forceNoSideEffects(k.params)
			if err != nil {
				return Decision{Verdict: Deny, Rule: acc.rule, Message: "cdprelay: " + err.Error()}, false
			}
			k.params = p
		case roEmptyInit:
			if src, _, err := exactString(k.params, "source"); err != nil || !runsNothing(src) {
				return accessRefusal(acc), false
			}
		case roPlainCont:
			if !onlyKeys(k.params, "requestId") {
				return accessRefusal(acc), false
			}
		default:
			return accessRefusal(acc), false
		}
	}
	return Decision{}, true
}

func accessRefusal(acc tabAccess) Decision {
	return Decision{Verdict: Deny, Rule: acc.rule, Message: "cdprelay: " + acc.level.String() + ": " + acc.why}
}

// onlyKeys reports whether params have no top-level key but those given.
func onlyKeys(params []byte, keys ...string) bool {
	var m map[string]jsontext.Value
	if err := decodeStruct(params, &m); err != nil {
		return false
	}
	for k := range m {
		if !slices.Contains(keys, k) {
			return false
		}
	}
	return true
}

// forceNoSideEffects rewrites Runtime.evaluate or callFunctionOn params so
// that V8 refuses any evaluation whose side effects it cannot rule out
// (throwOnSideEffect), whatever the client asked.
func forceNoSideEffects(params []byte) ([]byte, error) {
	m := map[string]jsontext.Value{}
	if params != nil {
		if err := decodeStruct(params, &m); err != nil {
			return nil, invalidParams(err)
		}
	}
	m["throwOnSideEffect"] = jsontext.Value("true")
	return jsonv2.Marshal(m, jsonv2.Deterministic(true))
}

// accessChanged tells the client and the audit log that t's access
// changed from was.
func (st *state) accessChanged(t *tab, was tabAccess) {
	st.observe(Event{Actor: ActorRelay, Kind: KindAccess, Target: t.targetID, Rule: t.acc.rule, Outcome: OutcomeOK,
		Detail: was.level.String() + " -> " + t.acc.level.String() + " on " + origin(t.docURL)})
	c := st.client
	if c == nil || t.session == nil {
		return
	}
	enteringBlind := t.acc.level == accessBlind && was.level != accessBlind
	leavingBlind := was.level == accessBlind && t.acc.level != accessBlind
	ctxID := st.in.fakeContext.Add(1)
	for _, s := range st.topSessions(t) {
		if leavingBlind && s.enabled["Runtime"] {
			// The contexts it was shown while blind are gone.
			c.eventRaw("Runtime.executionContextsCleared", s, nil)
		}
		if t.acc.rule != ruleTakeOverRead && was.rule != ruleTakeOverRead {
			text := "cdprelay: automation has " + t.acc.level.String() + " access to this tab again"
			if t.acc.level != accessFull {
				text = "cdprelay: this tab is now " + t.acc.level.String() + " to automation: " + t.acc.why
			}
			c.event("Log.entryAdded", s, map[string]any{"entry": map[string]any{
				"source": "other", "level": "warning", "text": text, "timestamp": float64(timeNowMilli()),
			}})
		}
		c.event("CDPRelay.accessChanged", s, map[string]any{"access": t.acc.level.String(), "origin": t.shownOrigin(), "reason": t.acc.why})
		if enteringBlind {
			// The client's page follows the tab to its origin, and nothing
			// more: a main frame at the origin, loaded (so that a client
			// waiting for a load is not kept waiting), and a context that
			// refuses whatever is run in it.
			if s.enabled["Page"] {
				o := t.shownOrigin()
				loader := "CDPRELAY" + randHex(12)
				c.event("Page.frameNavigated", s, map[string]any{"frame": map[string]any{
					"id": t.targetID, "loaderId": loader, "url": o + "/", "domainAndRegistry": "",
					"securityOrigin": o, "mimeType": "text/html", "secureContextType": "Secure",
					"crossOriginIsolatedContextType": "NotIsolated", "gatedAPIFeatures": []string{},
				}, "type": "Navigation"})
				ts := float64(timeNowMilli()) / 1000
				for _, name := range []string{"DOMContentLoaded", "load"} {
					c.event("Page.lifecycleEvent", s, map[string]any{"frameId": t.targetID, "loaderId": loader, "name": name, "timestamp": ts})
				}
				c.event("Page.domContentEventFired", s, map[string]any{"timestamp": ts})
				c.event("Page.loadEventFired", s, map[string]any{"timestamp": ts})
				c.event("Page.frameStoppedLoading", s, map[string]any{"frameId": t.targetID})
			}
			if s.enabled["Runtime"] {
				c.eventRaw("Runtime.executionContextsCleared", s, nil)
				c.event("Runtime.executionContextCreated", s, map[string]any{"context": map[string]any{
					"id": ctxID, "origin": t.shownOrigin(), "name": "", "uniqueId": "cdprelay-blind-" + randHex(8),
					"auxData": map[string]any{"isDefault": true, "type": "default", "frameId": t.targetID},
				}})
				// And the client's own worlds, which refuse it as well (a
				// client waits for its utility world before it reads).
				for _, name := range t.worldNames {
					c.event("Runtime.executionContextCreated", s, map[string]any{"context": map[string]any{
						"id": st.in.fakeContext.Add(1), "origin": t.shownOrigin(), "name": name, "uniqueId": "cdprelay-blind-" + randHex(8),
						"auxData": map[string]any{"isDefault": false, "type": "isolated", "frameId": t.targetID},
					}})
				}
			}
		}
	}
}

// shownOrigin is the origin a blind tab shows the client: where it is on
// its way to, when that is what made it blind, or where it is.
func (t *tab) shownOrigin() string {
	if t.navTo != "" {
		return origin(t.navTo)
	}
	return origin(t.docURL)
}

// blindFrameTree answers Page.getFrameTree for a blind tab: its main frame
// at its origin, and nothing of what it shows.
func blindFrameTree(t *tab) map[string]any {
	o := t.shownOrigin()
	return map[string]any{"frameTree": map[string]any{"frame": map[string]any{
		"id": t.targetID, "loaderId": "CDPRELAY", "url": o + "/", "domainAndRegistry": "", "securityOrigin": o,
		"mimeType": "text/html", "secureContextType": "Secure", "crossOriginIsolatedContextType": "NotIsolated",
		"gatedAPIFeatures": []string{},
	}}}
}

// refreshAccess decides every tab's access again after the policy changed.
func (s *Server) refreshAccess() {
	for _, in := range s.Instances() {
		st := in.lock()
		for _, t := range st.tabs {
			if was, changed := st.updateAccess(t); changed {
				st.accessChanged(t, was)
			}
		}
		in.unlock()
	}
}

// childAccess is what automation may do with a child session's frame at
// u: the tiers of its own site (a frame that shares its parent's process
// has no session of its own and goes with the tab).
//
// A frame of a page that is never shared (an extension's frame that a
// password manager puts into the page, above all) is blind: it has its
// extension's powers. A frame of about:blank, srcdoc or data: is its
// embedder's.
func (st *state) childAccess(u string) tabAccess {
	web, special := pageScheme(u)
	switch {
	case web:
		return st.tierAccess(u)
	case special || u == "" || strings.HasPrefix(strings.ToLower(u), "data:"):
		return tabAccess{}
	}
	return tabAccess{level: accessBlind, rule: ruleNeverShared,
		why: "the frame shows " + schemeOf(u) + " page, which is never shared with automation"}
}

// setChildNav records where child session cs's frame is on its way to.
func (st *state) setChildNav(cs *session, u string) {
	if u == "" || u == cs.navTo {
		return
	}
	cs.navTo = u
	st.setChildURL(cs, cs.url)
}

// setChildURL records where child session cs now is (and where it is on
// its way to). It reports whether the frame went blind.
func (st *state) setChildURL(cs *session, u string) {
	if u != cs.url {
		cs.navTo = "" // committed
	}
	cs.url = u
	was := cs.acc
	cs.acc = stricter(st.childAccess(u), st.navAccess(cs.navTo))
	for _, fu := range cs.frames {
		if fa := st.childAccess(fu); fa.level > cs.acc.level {
			cs.acc = fa
			cs.acc.why = "a frame of the frame is on another site: " + fa.why
		}
	}
	if n, ok := cs.tab.blindFrames[cs.targetID]; ok && n.acc.level > cs.acc.level {
		cs.acc = n.acc
	}
	if cs.acc.level == accessBlind && was.level != accessBlind {
		// Replies of commands still running in the frame are withheld,
		// and the live view forgets the tab's last frame, which shows it.
		cs.tab.blindEpoch.Add(1)
		notifyHandles(cs.tab.handles, TabEvent{Method: EventHidden})
	}
	if cs.acc != was {
		st.syncScripts(cs.tab)
		st.observe(Event{Actor: ActorRelay, Kind: KindAccess, Target: cs.targetID, Rule: cs.acc.rule, Outcome: OutcomeOK,
			Detail: "frame " + was.level.String() + " -> " + cs.acc.level.String() + " on " + origin(u)})
	}
}

// setChildFrame records that frame id in child session cs's process is
// now at url ("" when it is gone), and decides the child's access again.
func (st *state) setChildFrame(cs *session, id, url string) {
	if id == "" || !st.in.hasTiers() {
		return
	}
	if url == "" {
		if _, ok := cs.frames[id]; !ok {
			return
		}
		delete(cs.frames, id)
	} else {
		if cs.frames == nil {
			cs.frames = make(map[string]string)
		}
		if len(cs.frames) >= maxPendingFrames {
			url = "cdprelay:too-many-frames" // not a web page: blind
		}
		cs.frames[id] = url
	}
	st.setChildURL(cs, cs.url)
}

// hasBlindChild reports whether an out-of-process frame of t is blind (or
// on its way to a blind site): the tab's pixels then show it.
func (st *state) hasBlindChild(t *tab) bool {
	if !st.in.hasTiers() {
		return false
	}
	if t.pendingBlind() {
		// A frame on its way to a blind site that did not commit in the
		// tab's process: it is in a process of its own now, whether or
		// not the client has a session on it.
		return true
	}
	for _, s := range st.sessions {
		if s.child && s.tab == t && s.acc.level == accessBlind {
			return true
		}
	}
	return false
}

// storageDomains name their storage by origin or storage key in their
// params, not by the tab that carries them.
var storageDomains = map[string]bool{"Storage.": true, "CacheStorage.": true, "IndexedDB.": true, "DOMStorage.": true}

// storageKeys are where those params name a storage: at the top, or in
// the object of storageObjects.
var (
	storageKeys    = []string{"origin", "securityOrigin", "storageKey", "topLevelSite"}
	storageObjects = []string{"storageId", "storageBucket", "bucket"}
)

// storageAccess returns the strictest access of the storages params name
// (a storage key reads <origin>/[^…]), and which one.
func (st *state) storageAccess(params []byte) (tabAccess, string) {
	var a tabAccess
	where := ""
	look := func(obj []byte) {
		for _, key := range storageKeys {
			v, found, err := exactString(obj, key)
			if !found && err == nil {
				continue
			}
			u := v
			if i := strings.IndexByte(u, '^'); i >= 0 {
				u = u[:i]
			}
			to := st.urlAccess(u)
			if err != nil {
				to = tabAccess{level: accessBlind, rule: ruleNeverShared, why: err.Error()}
			}
			if to.level > a.level {
				a, where = to, origin(u)
			}
		}
	}
	look(params)
	for _, key := range storageObjects {
		if obj := wire.Field(params, key); obj != nil {
			look(obj)
		}
	}
	return a, where
}

// strictFrame returns the strictest access of t's frames in processes of
// their own (with a session of the client's, or followed on their way):
// full when there is none that is not.
func (st *state) strictFrame(t *tab) tabAccess {
	var a tabAccess
	for _, n := range t.blindFrames {
		if n.acc.level > a.level {
			a = n.acc
		}
	}
	for _, s := range st.sessions {
		if s.child && s.tab == t && s.acc.level > a.level {
			a = s.acc
		}
	}
	return a
}

// pixelMethods are what renders a tab's pixels, blind frames and all.
var pixelMethods = map[string]bool{
	"Page.captureScreenshot": true, "Page.printToPDF": true, "Page.captureSnapshot": true,
	"Page.startScreencast": true, "LayerTree.makeSnapshot": true, "LayerTree.replaySnapshot": true,
	"LayerTree.snapshotCommandLog": true, "LayerTree.profileSnapshot": true,
}

// stricter returns the stricter of two accesses.
func stricter(a, b tabAccess) tabAccess {
	if b.level > a.level {
		return b
	}
	return a
}

// V8's refusal of script with side effects, and what it says on a
// read-only tab: why.
var (
	sideEffectText      = []byte("Possible side-effect in debug-evaluate")
	sideEffectExplained = []byte("Possible side-effect in debug-evaluate (cdprelay: this tab is read-only to automation, so script that could change the page is refused; read through locators)")
)

// blindHistory reduces the entries of a Page.getNavigationHistory result
// that are on pages automation may not see to their origin, with no title.
func (in *Instance) blindHistory(result []byte) []byte {
	var h struct {
		CurrentIndex int              `json:"currentIndex"`
		Entries      []map[string]any `json:"entries"`
	}
	if json.Unmarshal(result, &h) != nil {
		return []byte(`{"currentIndex":0,"entries":[]}`)
	}
	st := &in.st // computeAccess of a page reads only the policy
	for _, e := range h.Entries {
		u, _ := e["url"].(string)
		if st.urlAccess(u).level != accessBlind {
			continue
		}
		o := origin(u)
		e["url"], e["userTypedURL"], e["title"] = o+"/", o+"/", ""
	}
	b, err := json.Marshal(h)
	if err != nil {
		return []byte(`{"currentIndex":0,"entries":[]}`)
	}
	return b
}

// blindStandIn answers, on a blind tab, the commands a client sends to set
// a page up (Playwright on every page it finds): as if they had worked,
// without any of them reaching the page. Its worlds are stand-ins that
// refuse whatever is run in them; what it sets is not applied. Without
// this, a client that finds a tab already blind would wait for good for a
// page it can never use, and not use it again once it leaves. It reports
// whether it answered k.
func (c *clientConn) blindStandIn(k *cmd) bool {
	if k.ask.Verdict == Ask {
		return false // what needs a person's approval is not acknowledged unasked
	}
	in := c.inst
	frame := k.r.tab.targetID
	if k.r.via.child {
		frame = k.r.via.targetID
	}
	switch name := k.m.name; {
	case name == "Runtime.enable":
		// Forwarded (its events are withheld); the client is shown the
		// page's main world as a stand-in.
		c.event("Runtime.executionContextCreated", k.r.replyTo, map[string]any{"context": map[string]any{
			"id": in.fakeContext.Add(1), "origin": k.r.tab.shownOrigin(), "name": "", "uniqueId": "cdprelay-blind-" + randHex(8),
			"auxData": map[string]any{"isDefault": true, "type": "default", "frameId": frame},
		}})
		return false
	case name == "Page.createIsolatedWorld":
		world, _, _ := exactString(k.params, "worldName")
		in.lock()
		k.r.tab.noteWorld(k.params)
		in.unlock()
		id := in.fakeContext.Add(1)
		c.event("Runtime.executionContextCreated", k.r.replyTo, map[string]any{"context": map[string]any{
			"id": id, "origin": k.r.tab.shownOrigin(), "name": world, "uniqueId": "cdprelay-blind-" + randHex(8),
			"auxData": map[string]any{"isDefault": false, "type": "isolated", "frameId": frame},
		}})
		c.reply(call{id: k.env.ID, sess: k.r.replyTo}, map[string]int64{"executionContextId": id})
	case name == "Page.addScriptToEvaluateOnNewDocument":
		if initRunsNothing(k.params) {
			// An isolated world's bootstrap runs nothing: it goes to
			// Chrome, so that the world is there once the tab leaves.
			return false
		}
		// Kept, out of Chrome, and put in once the tab is on a full site.
		id := "cdprelay-blind-" + randHex(6)
		in.lock()
		if t := k.r.tab; len(t.scripts) < maxInitScripts {
			sc := &initScript{client: id, params: append([]byte(nil), k.params...)}
			if k.r.via.child {
				sc.sid, sc.child = k.r.via.id, k.r.via
			}
			t.scripts = append(t.scripts, sc)
		}
		in.unlock()
		c.reply(call{id: k.env.ID, sess: k.r.replyTo}, map[string]string{"identifier": id})
	case name == "Target.getTargetInfo":
		// Chrome's answer names the page (its URL, its title): the relay's
		// own view of the tab says its origin only, as discovery does.
		id, _, _ := exactString(k.params, "targetId")
		st := in.lock()
		var ti TargetInfo
		switch {
		case k.r.via.child && (id == "" || id == k.r.via.targetID):
			ti = TargetInfo{TargetID: k.r.via.targetID, Type: "iframe", URL: origin(k.r.via.url), Attached: true, BrowserContextID: st.browserCtx}
		case !k.r.via.child && (id == "" || id == k.r.tab.targetID):
			ti = st.targetInfo(k.r.tab)
		default:
			in.unlock()
			return false // another target's: as Chrome answers it on this session
		}
		in.unlock()
		c.reply(call{id: k.env.ID, sess: k.r.replyTo}, map[string]any{"targetInfo": ti})
	case name == "Page.removeScriptToEvaluateOnNewDocument":
		// Out of Chrome while the tab is blind: forgotten, so that it is
		// not put back.
		st := in.lock()
		st.removeScript(k.r.tab, k.r.via, k.params)
		in.unlock()
		c.replyEmptyRaw(k.env.ID, k.env.SessionID)
	case name == "Runtime.addBinding", name == "Runtime.removeBinding",
		strings.HasPrefix(name[strings.IndexByte(name, '.')+1:], "set") && !blindAllowed[name]:
		if !k.r.via.child {
			// Applied once the tab is on a full site again.
			in.lock()
			k.r.tab.deferSet(name, k.params)
			in.unlock()
		}
		c.replyEmptyRaw(k.env.ID, k.env.SessionID)
	default:
		return false
	}
	k.out.kind = outEmulated
	return true
}
