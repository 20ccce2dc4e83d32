package access

import (
	"slices"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// The read-only command table: what automation may still send to a tab it
// may read but not act on. Everything not listed is refused; a listed
// method with a check passes only when the check does.

// ReadOnlyRule is how a read-only tab treats one method.
type ReadOnlyRule uint8

const (
	RORefuse    ReadOnlyRule = iota
	ROAllow                  // reads, and switches that only start or stop events
	RONoEffects              // script: run with throwOnSideEffect forced on
	ROEmptyInit              // Page.addScriptToEvaluateOnNewDocument: only with a source that runs nothing (an isolated world's bootstrap)
	ROPlainCont              // Fetch.continueRequest: only unchanged (requestId alone)
)

var readOnlyDomains = map[string]ReadOnlyRule{
	"Accessibility": ROAllow, "DOMSnapshot": ROAllow, "Inspector": ROAllow, "Log": ROAllow,
	"Performance": ROAllow, "PerformanceTimeline": ROAllow, "Security": ROAllow, "LayerTree": ROAllow,
}

var readOnlyMethods = map[string]ReadOnlyRule{
	"CSS.enable": ROAllow, "CSS.disable": ROAllow, "CSS.getBackgroundColors": ROAllow, "CSS.getComputedStyleForNode": ROAllow,
	"CSS.getInlineStylesForNode": ROAllow, "CSS.getMatchedStylesForNode": ROAllow, "CSS.getMediaQueries": ROAllow,
	"CSS.getPlatformFontsForNode": ROAllow, "CSS.getStyleSheetText": ROAllow, "CSS.getLayersForNode": ROAllow,
	"CSS.getAnimatedStylesForNode": ROAllow, "CSS.takeComputedStyleUpdates": ROAllow, "CSS.trackComputedStyleUpdates": ROAllow,
	"CSS.takeCoverageDelta": ROAllow, "CSS.startRuleUsageTracking": ROAllow, "CSS.stopRuleUsageTracking": ROAllow,

	"DOM.enable": ROAllow, "DOM.disable": ROAllow, "DOM.describeNode": ROAllow, "DOM.getAttributes": ROAllow,
	"DOM.getBoxModel": ROAllow, "DOM.getContentQuads": ROAllow, "DOM.getDocument": ROAllow, "DOM.getFlattenedDocument": ROAllow,
	"DOM.getFrameOwner": ROAllow, "DOM.getNodeForLocation": ROAllow, "DOM.getNodesForSubtreeByStyle": ROAllow,
	"DOM.getOuterHTML": ROAllow, "DOM.getRelayoutBoundary": ROAllow, "DOM.getSearchResults": ROAllow,
	"DOM.discardSearchResults": ROAllow, "DOM.performSearch": ROAllow, "DOM.pushNodeByPathToFrontend": ROAllow,
	"DOM.pushNodesByBackendIdsToFrontend": ROAllow, "DOM.querySelector": ROAllow, "DOM.querySelectorAll": ROAllow,
	"DOM.requestChildNodes": ROAllow, "DOM.requestNode": ROAllow, "DOM.resolveNode": ROAllow,
	"DOM.getTopLayerElements": ROAllow, "DOM.getElementByRelation": ROAllow, "DOM.getContainerForNode": ROAllow,
	"DOM.getQueryingDescendantsForContainer": ROAllow, "DOM.getAnchorElement": ROAllow, "DOM.getFileInfo": ROAllow,
	"DOM.getDetachedDomNodes": ROAllow, "DOM.collectClassNamesFromSubtree": ROAllow,
	"DOMDebugger.getEventListeners": ROAllow,
	// Scrolling an element into view moves nothing of the page but where
	// it is shown; reading often needs it.
	"DOM.scrollIntoViewIfNeeded": ROAllow,

	"IO.read": ROAllow, "IO.close": ROAllow, "IO.resolveBlob": ROAllow,

	"Network.enable": ROAllow, "Network.disable": ROAllow, "Network.setCacheDisabled": ROAllow, "Network.getResponseBody": ROAllow,
	"Network.getRequestPostData": ROAllow, "Network.getCertificate": ROAllow, "Network.getSecurityIsolationStatus": ROAllow,
	"Network.searchInResponseBody": ROAllow, "Network.streamResourceContent": ROAllow,
	"Network.takeResponseBodyForInterceptionAsStream": ROAllow,

	"Fetch.enable": ROAllow, "Fetch.disable": ROAllow, "Fetch.getResponseBody": ROAllow,
	"Fetch.takeResponseBodyAsStream": ROAllow, "Fetch.continueRequest": ROPlainCont,

	"Overlay.enable": ROAllow, "Overlay.disable": ROAllow, "Overlay.hideHighlight": ROAllow,

	// Settings of the Security domain, whose events a read-only tab
	// shows: they weaken the site (settings.go).
	"Security.setIgnoreCertificateErrors": RORefuse, "Security.setOverrideCertificateErrors": RORefuse,

	"Page.enable": ROAllow, "Page.disable": ROAllow, "Page.getFrameTree": ROAllow, "Page.getResourceTree": ROAllow,
	"Page.getResourceContent": ROAllow, "Page.getLayoutMetrics": ROAllow, "Page.getNavigationHistory": ROAllow,
	"Page.getAppManifest": ROAllow, "Page.getInstallabilityErrors": ROAllow, "Page.getManifestIcons": ROAllow,
	"Page.getAppId": ROAllow, "Page.getOriginTrials": ROAllow, "Page.getPermissionsPolicyState": ROAllow,
	"Page.getAdScriptAncestry": ROAllow, "Page.captureScreenshot": ROAllow, "Page.captureSnapshot": ROAllow,
	"Page.printToPDF": ROAllow, "Page.startScreencast": ROAllow, "Page.stopScreencast": ROAllow,
	"Page.screencastFrameAck": ROAllow, "Page.setLifecycleEventsEnabled": ROAllow, "Page.createIsolatedWorld": ROAllow,
	"Page.searchInResource": ROAllow, "Page.removeScriptToEvaluateOnNewDocument": ROAllow,
	"Page.addScriptToEvaluateOnNewDocument": ROEmptyInit,

	"Runtime.enable": ROAllow, "Runtime.disable": ROAllow, "Runtime.getProperties": ROAllow,
	"Runtime.releaseObject": ROAllow, "Runtime.releaseObjectGroup": ROAllow, "Runtime.getIsolateId": ROAllow,
	"Runtime.getHeapUsage": ROAllow, "Runtime.runIfWaitingForDebugger": ROAllow, "Runtime.discardConsoleEntries": ROAllow,
	"Runtime.awaitPromise": ROAllow, "Runtime.globalLexicalScopeNames": ROAllow,
	"Runtime.getExceptionDetails": ROAllow, "Runtime.setAsyncCallStackDepth": ROAllow,
	"Runtime.setCustomObjectFormatterEnabled": ROAllow, "Runtime.setMaxCallStackSizeToCapture": ROAllow,
	"Runtime.evaluate": RONoEffects, "Runtime.callFunctionOn": RONoEffects,

	"Storage.getUsageAndQuota": ROAllow, "Storage.getStorageKeyForFrame": ROAllow, "Storage.getStorageKey": ROAllow,

	"Target.getTargetInfo": ROAllow, "Target.setAutoAttach": ROAllow, "Target.detachFromTarget": ROAllow,
	"Target.getTargets": ROAllow, "Target.setDiscoverTargets": ROAllow, "Target.attachToTarget": ROAllow,
	"Target.getBrowserContexts": ROAllow, "Target.attachToBrowserTarget": ROAllow,

	"Browser.getVersion": ROAllow, "Browser.setDownloadBehavior": ROAllow,
}

// interceptingEnables switch on more than events: the page's (or the
// person's) passkeys, device pickers, sign-in dialogs and Bluetooth go to
// the client until it answers.
var interceptingEnables = map[string]bool{
	"WebAuthn.enable": true, "DeviceAccess.enable": true, "FedCm.enable": true, "BluetoothEmulation.enable": true,
}

// ReadOnlyRuleOf returns how a read-only tab treats method name: isSwitch
// says it is a domain's enable or disable, domain is its domain when the
// relay knows it ("" otherwise).
func ReadOnlyRuleOf(name string, isSwitch bool, domain string) ReadOnlyRule {
	if r, ok := readOnlyMethods[name]; ok {
		return r
	}
	if isSwitch && !interceptingEnables[name] {
		// A switch that only starts or stops events, as on a blind tab:
		// a client sets them up on every page it opens (Puppeteer's
		// Audits.enable), and a tab a person takes over must stay one it
		// can open.
		return ROAllow
	}
	if domain != "" {
		return readOnlyDomains[domain]
	}
	return RORefuse
}

// ReadOnlyListed returns the rule the read-only table lists for method
// name itself, RORefuse when it lists none (a domain's rule or a switch
// does not count).
func ReadOnlyListed(name string) ReadOnlyRule { return readOnlyMethods[name] }

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

// BlindAllowed reports whether a blind tab lets automation send method
// name (through the rest of the pipeline: the URL fence still judges a
// navigation).
func BlindAllowed(name string) bool { return blindAllowed[name] }

// OnlyKeys reports whether params have no top-level key but those given
// (nil params have none).
func OnlyKeys(params []byte, keys ...string) bool {
	var m map[string]jsontext.Value
	if params != nil {
		if err := jsonv2.Unmarshal(params, &m); err != nil {
			return false
		}
	}
	for k := range m {
		if !slices.Contains(keys, k) {
			return false
		}
	}
	return true
}

// ForceNoSideEffects rewrites Runtime.evaluate or callFunctionOn params so
// that V8 refuses any evaluation whose side effects it cannot rule out
// (throwOnSideEffect), whatever the client asked. The error is the
// decoder's, for params that are not a JSON object.
func ForceNoSideEffects(params []byte) ([]byte, error) {
	m := map[string]jsontext.Value{}
	if params != nil {
		if err := jsonv2.Unmarshal(params, &m); err != nil {
			return nil, err
		}
	}
	m["throwOnSideEffect"] = jsontext.Value("true")
	return jsonv2.Marshal(m, jsonv2.Deterministic(true))
}
