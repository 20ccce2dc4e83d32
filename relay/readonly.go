package relay

import (
	"slices"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

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

	// Settings of the Security domain, whose events a read-only tab
	// shows: they weaken the site (settings.go).
	"Security.setIgnoreCertificateErrors": roRefuse, "Security.setOverrideCertificateErrors": roRefuse,

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

// interceptingEnables switch on more than events: the page's (or the
// person's) passkeys, device pickers, sign-in dialogs and Bluetooth go to
// the client until it answers.
var interceptingEnables = map[string]bool{
	"WebAuthn.enable": true, "DeviceAccess.enable": true, "FedCm.enable": true, "BluetoothEmulation.enable": true,
}

// readOnly returns how a read-only tab treats m.
func readOnly(m *methodInfo) readOnlyRule {
	if r, ok := readOnlyMethods[m.name]; ok {
		return r
	}
	if (m.enable || m.disable) && !interceptingEnables[m.name] {
		// A switch that only starts or stops events, as on a blind tab:
		// a client sets them up on every page it opens (Puppeteer's
		// Audits.enable), and a tab a person takes over must stay one it
		// can open.
		return roAllow
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

// gate decides a command on a tab whose access is acc, before the
// emulation and the tab see it. It returns the params to forward (rewritten
// for script on a read-only tab) and, when it refuses, the decision.
func (c *clientConn) gate(k *cmd, acc tabAccess) (refusal Decision, ok bool) {
	m := k.m
	switch acc.level {
	case accessBlind:
		if !blindAllowed[m.name] && !switchOnly(m) && !(m.name == "Page.addScriptToEvaluateOnNewDocument" && initRunsNothing(k.params)) {
			return accessRefusal(acc), false
		}
	case accessReadOnly:
		switch readOnly(m) {
		case roAllow:
		case roNoEffects:
			c.inst.lock()
			isolated := k.isolated && k.r.tab.guard != nil
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
