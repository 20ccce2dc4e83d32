package relay

import (
	"strings"

	"github.com/cdprelay/cdprelay/internal/wire"
)

// The client's settings of a tab, under tiers.
//
// A setting a client makes on a session stays with the session's target:
// Chrome applies it to every document the tab (or frame) shows from then
// on, wherever it goes. Made on a full site, it would act on a read-only
// or blind one the tab goes to later: a header or a user agent the site
// receives, a content security policy bypassed, a time zone its script is
// told, a binding its script can call. So every per-target setting a
// client can make is one of:
//
//   - lifted on read-only and blind pages: what the site receives or its
//     script is told (headers, user agent, network conditions, blocked
//     requests, locale, time zone, geolocation, sensors), what weakens it
//     (a bypassed content security policy, certificate errors ignored,
//     its script or cookies disabled), and what takes the person's own
//     input or prompts from them (file chooser, drags, inspect mode,
//     payment and protocol handler prompts, virtual authenticators and
//     devices);
//   - lifted on blind pages only: how the page is shown (viewport, media,
//     focus, touch, overlays, throttling), bindings the page could call,
//     and recordings that would cover it (profiles, coverage);
//   - refused while the policy has tiers: those no command takes back
//     (refusedSettings);
//   - kept: those that only start events (which the event side withholds
//     on a blind page), only act on the document they were made on (a node,
//     a style sheet, a breakpoint), or only change fonts.
//
// Lifting sends the command that takes the setting out of Chrome before
// the document of the stricter page commits (lifts.go); the setting is put
// back, as it was made, once the tab is on its way to a full site again.
// The client's scripts for new documents follow the same path
// (initscripts.go).

// liftRule is what one kind of setting becomes on a page that is not
// full.
type liftRule struct {
	// at is the least strict access the setting is lifted on.
	at access
	// undo returns the command that takes the setting, made with params,
	// out of Chrome.
	undo func(params []byte) (method string, p any)
}

func undoWith(method string, p any) func([]byte) (string, any) {
	return func([]byte) (string, any) { return method, p }
}

// undoKeyed undoes a setting keyed by one of its fields (a sensor's type,
// a binding's name): the clearing command names it too.
func undoKeyed(method, field string, p map[string]any) func([]byte) (string, any) {
	return func(params []byte) (string, any) {
		q := make(map[string]any, len(p)+1)
		for k, v := range p {
			q[k] = v
		}
		v, _, _ := exactString(params, field)
		q[field] = v
		return method, q
	}
}

// undoBlocked clears Network.setBlockedURLs in the form it was made.
func undoBlocked(params []byte) (string, any) {
	if wire.Field(params, "urlPatterns") != nil {
		return "Network.setBlockedURLs", map[string]any{"urlPatterns": []any{}}
	}
	return "Network.setBlockedURLs", map[string]any{"urls": []string{}}
}

var (
	noNetworkConditions = map[string]any{"offline": false, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1}
	off                 = map[string]any{"enabled": false}
	hide                = map[string]any{"show": false}
)

// liftRules are the settings that are lifted, by the method that makes
// them (a domain's enable for the domains whose switch has an effect).
// Each is kept for the tab as the resume keeps its settings
// (replayedMethods, and liftKept for the rest).
var liftRules = map[string]liftRule{
	// What the site receives.
	"Network.setExtraHTTPHeaders":            {accessReadOnly, undoWith("Network.setExtraHTTPHeaders", map[string]any{"headers": map[string]string{}})},
	"Network.setUserAgentOverride":           {accessReadOnly, undoWith("Network.setUserAgentOverride", map[string]any{"userAgent": ""})},
	"Emulation.setUserAgentOverride":         {accessReadOnly, undoWith("Emulation.setUserAgentOverride", map[string]any{"userAgent": ""})},
	"Network.setBlockedURLs":                 {accessReadOnly, undoBlocked},
	"Network.emulateNetworkConditions":       {accessReadOnly, undoWith("Network.emulateNetworkConditions", noNetworkConditions)},
	"Network.emulateNetworkConditionsByRule": {accessReadOnly, undoWith("Network.emulateNetworkConditionsByRule", map[string]any{"matchedNetworkConditions": []any{}})},
	"Network.overrideNetworkState":           {accessReadOnly, undoWith("Network.overrideNetworkState", noNetworkConditions)},
	"Network.setBypassServiceWorker":         {accessReadOnly, undoWith("Network.setBypassServiceWorker", map[string]any{"bypass": false})},
	"Emulation.setDataSaverOverride":         {accessReadOnly, undoWith("Emulation.setDataSaverOverride", map[string]any{})},
	"Page.setAdBlockingEnabled":              {accessReadOnly, undoWith("Page.setAdBlockingEnabled", off)},
	"Page.setDownloadBehavior":               {accessReadOnly, undoWith("Page.setDownloadBehavior", map[string]any{"behavior": "default"})},
	"ServiceWorker.setForceUpdateOnPageLoad": {accessReadOnly, undoWith("ServiceWorker.setForceUpdateOnPageLoad", map[string]any{"forceUpdateOnPageLoad": false})},
	// What its script is told.
	"Emulation.setLocaleOverride":                    {accessReadOnly, undoWith("Emulation.setLocaleOverride", map[string]any{})},
	"Emulation.setTimezoneOverride":                  {accessReadOnly, undoWith("Emulation.setTimezoneOverride", map[string]any{"timezoneId": ""})},
	"Emulation.setGeolocationOverride":               {accessReadOnly, undoWith("Emulation.clearGeolocationOverride", nil)},
	"Page.setGeolocationOverride":                    {accessReadOnly, undoWith("Page.clearGeolocationOverride", nil)},
	"DeviceOrientation.setDeviceOrientationOverride": {accessReadOnly, undoWith("DeviceOrientation.clearDeviceOrientationOverride", nil)},
	"Page.setDeviceOrientationOverride":              {accessReadOnly, undoWith("Page.clearDeviceOrientationOverride", nil)},
	"Emulation.setIdleOverride":                      {accessReadOnly, undoWith("Emulation.clearIdleOverride", nil)},
	"Emulation.setSensorOverrideEnabled":             {accessReadOnly, undoKeyed("Emulation.setSensorOverrideEnabled", "type", off)},
	"Emulation.setPressureSourceOverrideEnabled":     {accessReadOnly, undoKeyed("Emulation.setPressureSourceOverrideEnabled", "source", off)},
	"Emulation.setCPUPerformanceOverride":            {accessReadOnly, undoWith("Emulation.setCPUPerformanceOverride", map[string]any{})},
	"Emulation.setAutomationOverride":                {accessReadOnly, undoWith("Emulation.setAutomationOverride", off)},
	// What weakens the site or changes what it runs.
	"Page.setBypassCSP":                     {accessReadOnly, undoWith("Page.setBypassCSP", off)},
	"Security.setIgnoreCertificateErrors":   {accessReadOnly, undoWith("Security.setIgnoreCertificateErrors", map[string]any{"ignore": false})},
	"Security.setOverrideCertificateErrors": {accessReadOnly, undoWith("Security.setOverrideCertificateErrors", map[string]any{"override": false})},
	"Emulation.setScriptExecutionDisabled":  {accessReadOnly, undoWith("Emulation.setScriptExecutionDisabled", map[string]any{"value": false})},
	"Emulation.setDocumentCookieDisabled":   {accessReadOnly, undoWith("Emulation.setDocumentCookieDisabled", map[string]any{"disabled": false})},
	"Page.setWebLifecycleState":             {accessReadOnly, undoWith("Page.setWebLifecycleState", map[string]any{"state": "active"})},
	"Page.setPrerenderingAllowed":           {accessReadOnly, undoWith("Page.setPrerenderingAllowed", map[string]any{"isAllowed": true})},
	// What takes the person's input or prompts from them.
	"Page.setInterceptFileChooserDialog": {accessReadOnly, undoWith("Page.setInterceptFileChooserDialog", off)},
	"Input.setInterceptDrags":            {accessReadOnly, undoWith("Input.setInterceptDrags", off)},
	"Input.setIgnoreInputEvents":         {accessReadOnly, undoWith("Input.setIgnoreInputEvents", map[string]any{"ignore": false})},
	"Overlay.setInspectMode":             {accessReadOnly, undoWith("Overlay.setInspectMode", map[string]any{"mode": "none"})},
	"Overlay.setPausedInDebuggerMessage": {accessReadOnly, undoWith("Overlay.setPausedInDebuggerMessage", map[string]any{})},
	"Page.setSPCTransactionMode":         {accessReadOnly, undoWith("Page.setSPCTransactionMode", map[string]any{"mode": "none"})},
	"Page.setRPHRegistrationMode":        {accessReadOnly, undoWith("Page.setRPHRegistrationMode", map[string]any{"mode": "none"})},
	"WebAuthn.enable":                    {accessReadOnly, undoWith("WebAuthn.disable", nil)},
	"BluetoothEmulation.enable":          {accessReadOnly, undoWith("BluetoothEmulation.disable", nil)},
	"SmartCardEmulation.enable":          {accessReadOnly, undoWith("SmartCardEmulation.disable", nil)},
	"DeviceAccess.enable":                {accessReadOnly, undoWith("DeviceAccess.disable", nil)},
	"FedCm.enable":                       {accessReadOnly, undoWith("FedCm.disable", nil)},

	// How the page is shown, on a blind page: the person sees it as it is.
	"Emulation.setDeviceMetricsOverride":                 {accessBlind, undoWith("Emulation.clearDeviceMetricsOverride", nil)},
	"Page.setDeviceMetricsOverride":                      {accessBlind, undoWith("Page.clearDeviceMetricsOverride", nil)},
	"Emulation.setFocusEmulationEnabled":                 {accessBlind, undoWith("Emulation.setFocusEmulationEnabled", off)},
	"Emulation.setTouchEmulationEnabled":                 {accessBlind, undoWith("Emulation.setTouchEmulationEnabled", off)},
	"Page.setTouchEmulationEnabled":                      {accessBlind, undoWith("Page.setTouchEmulationEnabled", off)},
	"Emulation.setEmitTouchEventsForMouse":               {accessBlind, undoWith("Emulation.setEmitTouchEventsForMouse", off)},
	"Emulation.setEmulatedMedia":                         {accessBlind, undoWith("Emulation.setEmulatedMedia", map[string]any{"media": "", "features": []any{}})},
	"Emulation.setEmulatedVisionDeficiency":              {accessBlind, undoWith("Emulation.setEmulatedVisionDeficiency", map[string]any{"type": "none"})},
	"Emulation.setEmulatedOSTextScale":                   {accessBlind, undoWith("Emulation.setEmulatedOSTextScale", map[string]any{})},
	"Emulation.setDefaultBackgroundColorOverride":        {accessBlind, undoWith("Emulation.setDefaultBackgroundColorOverride", map[string]any{})},
	"Emulation.setScrollbarsHidden":                      {accessBlind, undoWith("Emulation.setScrollbarsHidden", map[string]any{"hidden": false})},
	"Emulation.setPageScaleFactor":                       {accessBlind, undoWith("Emulation.resetPageScaleFactor", nil)},
	"Emulation.setCPUThrottlingRate":                     {accessBlind, undoWith("Emulation.setCPUThrottlingRate", map[string]any{"rate": 1})},
	"Emulation.setAutoDarkModeOverride":                  {accessBlind, undoWith("Emulation.setAutoDarkModeOverride", map[string]any{})},
	"Emulation.setDisabledImageTypes":                    {accessBlind, undoWith("Emulation.setDisabledImageTypes", map[string]any{"imageTypes": []string{}})},
	"Emulation.setSafeAreaInsetsOverride":                {accessBlind, undoWith("Emulation.setSafeAreaInsetsOverride", map[string]any{"insets": map[string]any{}})},
	"Emulation.setDevicePostureOverride":                 {accessBlind, undoWith("Emulation.clearDevicePostureOverride", nil)},
	"Emulation.setDisplayFeaturesOverride":               {accessBlind, undoWith("Emulation.clearDisplayFeaturesOverride", nil)},
	"Emulation.setSmallViewportHeightDifferenceOverride": {accessBlind, undoWith("Emulation.setSmallViewportHeightDifferenceOverride", map[string]any{"difference": 0})},
	"Network.setCacheDisabled":                           {accessBlind, undoWith("Network.setCacheDisabled", map[string]any{"cacheDisabled": false})},
	"Animation.setPlaybackRate":                          {accessBlind, undoWith("Animation.setPlaybackRate", map[string]any{"playbackRate": 1})},
	"Page.setInputVisualization":                         {accessBlind, undoWith("Page.setInputVisualization", off)},
	"CSS.setLocalFontsEnabled":                           {accessBlind, undoWith("CSS.setLocalFontsEnabled", map[string]any{"enabled": true})},
	"Overlay.setShowAdHighlights":                        {accessBlind, undoWith("Overlay.setShowAdHighlights", hide)},
	"Overlay.setShowDebugBorders":                        {accessBlind, undoWith("Overlay.setShowDebugBorders", hide)},
	"Overlay.setShowFPSCounter":                          {accessBlind, undoWith("Overlay.setShowFPSCounter", hide)},
	"Overlay.setShowScrollBottleneckRects":               {accessBlind, undoWith("Overlay.setShowScrollBottleneckRects", hide)},
	"Overlay.setShowHitTestBorders":                      {accessBlind, undoWith("Overlay.setShowHitTestBorders", hide)},
	"Overlay.setShowWebVitals":                           {accessBlind, undoWith("Overlay.setShowWebVitals", hide)},
	"Overlay.setShowViewportSizeOnResize":                {accessBlind, undoWith("Overlay.setShowViewportSizeOnResize", hide)},
	"Overlay.setShowPaintRects":                          {accessBlind, undoWith("Overlay.setShowPaintRects", map[string]any{"result": false})},
	"Overlay.setShowLayoutShiftRegions":                  {accessBlind, undoWith("Overlay.setShowLayoutShiftRegions", map[string]any{"result": false})},
	"Overlay.setShowHinge":                               {accessBlind, undoWith("Overlay.setShowHinge", map[string]any{})},
	"Overlay.setShowDisplayCutout":                       {accessBlind, undoWith("Overlay.setShowDisplayCutout", map[string]any{})},
	"Overlay.setShowWindowControlsOverlay":               {accessBlind, undoWith("Overlay.setShowWindowControlsOverlay", map[string]any{})},
	// A binding the blind page's script could call, and with it send the
	// client whatever it likes.
	"Runtime.addBinding": {accessBlind, undoKeyed("Runtime.removeBinding", "name", nil)},
	// Recordings that would cover the blind page: stopped, and started
	// afresh on a full page.
	"Profiler.start":                        {accessBlind, undoWith("Profiler.stop", nil)},
	"Profiler.startPreciseCoverage":         {accessBlind, undoWith("Profiler.stopPreciseCoverage", nil)},
	"HeapProfiler.startSampling":            {accessBlind, undoWith("HeapProfiler.stopSampling", nil)},
	"HeapProfiler.startTrackingHeapObjects": {accessBlind, undoWith("HeapProfiler.stopTrackingHeapObjects", nil)},
	"Memory.startSampling":                  {accessBlind, undoWith("Memory.stopSampling", nil)},
	"CSS.startRuleUsageTracking":            {accessBlind, undoWith("CSS.stopRuleUsageTracking", nil)},
}

// refusedSettings are refused while the policy has tiers: no command
// takes them back, or what they start would carry on into a page
// automation may not see.
var refusedSettings = map[string]string{
	"Emulation.setHardwareConcurrencyOverride":     "no command takes it back",
	"Emulation.setNavigatorOverrides":              "no command takes it back",
	"Emulation.setVirtualTimePolicy":               "no command takes it back",
	"Emulation.setVisibleSize":                     "no command takes it back",
	"Emulation.setVirtualKeyboardGeometryOverride": "no command takes it back",
	"Emulation.addScreen":                          "no command takes it back",
	"Emulation.updateScreen":                       "no command takes it back",
	"Emulation.setPrimaryScreen":                   "no command takes it back",
	"Network.setCookieControls":                    "it changes cookies for every site the tab reaches",
	"DigitalCredentials.setVirtualWalletBehavior":  "it would answer a blind page's identity requests",
	"Cast.setSinkToUse":                            "it would take a blind page's presentation",
	"Cast.startTabMirroring":                       "it would stream a blind page's pixels",
	"Cast.startDesktopMirroring":                   "it would stream a blind page's pixels",
	"Page.startScreenRecording":                    "it would record a blind page",
	"Tracing.start":                                "it would record a blind page",
	// An older name for scripts on new documents, which the relay does
	// not follow (Page.addScriptToEvaluateOnNewDocument is).
	"Page.addScriptToEvaluateOnLoad": "it would run in a blind page; use Page.addScriptToEvaluateOnNewDocument",
}

// effectEnables are the domains whose switch does more than start events:
// on a read-only or blind page they are not switched on.
var effectEnables = map[string]bool{
	"WebAuthn.enable": true, "BluetoothEmulation.enable": true, "SmartCardEmulation.enable": true,
	"DeviceAccess.enable": true, "FedCm.enable": true,
}

// switchOnly reports whether m only switches a domain's events on or off.
func switchOnly(m *methodInfo) bool {
	return (m.enable || m.disable) && !effectEnables[m.name]
}

// setterName reports whether a method's name says it sets something: what
// a method of a newer Chrome that the relay does not know is taken to do.
func setterName(name string) bool {
	i := strings.IndexByte(name, '.')
	if i < 0 {
		return false
	}
	verb := name[i+1:]
	for _, p := range []string{"set", "override", "emulate", "start", "add", "force", "enable", "expose", "configure"} {
		if strings.HasPrefix(verb, p) {
			return true
		}
	}
	return false
}

// keptSettings are settings kept on every page, each with why: they only
// start events (which the event side withholds on a blind page) or only
// change how text is drawn. The settings of the protocol the relay was
// built with are classified by TestSettingsClassified; these are named
// for the ones a newer Chrome has, which would be refused unknown.
var keptSettings = map[string]string{
	"Page.setLifecycleEventsEnabled":            "events only",
	"Network.setAttachDebugStack":               "events only",
	"Network.enableReportingApi":                "events only",
	"Network.enableDeviceBoundSessions":         "events only",
	"Network.configureDurableMessages":          "events only",
	"Runtime.setAsyncCallStackDepth":            "events only",
	"Runtime.setCustomObjectFormatterEnabled":   "how the client's own object previews are made",
	"Runtime.setMaxCallStackSizeToCapture":      "events only",
	"Debugger.setAsyncCallStackDepth":           "events only",
	"Log.startViolationsReport":                 "events only",
	"Performance.setTimeDomain":                 "events only",
	"Profiler.setSamplingInterval":              "how a recording samples",
	"DOM.setNodeStackTracesEnabled":             "read by node, of the page the node is in",
	"Page.setFontFamilies":                      "fonts only: how text is drawn, nothing the site is told or sent",
	"Page.setFontSizes":                         "fonts only: how text is drawn, nothing the site is told or sent",
	"Autofill.setAddresses":                     "test addresses for the autofill panel, offered to nobody",
	"Memory.setPressureNotificationsSuppressed": "the browser's memory pressure signals, no page's content",
}

// tierRefusal is the refusal of a setting while the policy has tiers, or
// ok when m is not refused.
func tierRefusal(m *methodInfo) (Decision, bool) {
	why, refused := refusedSettings[m.name]
	if _, lifted := liftRules[m.name]; !refused && !lifted && keptSettings[m.name] == "" && m.unknown && setterName(m.name) {
		why, refused = "the relay does not know what it sets, so it could not take it back", true
	}
	if !refused {
		return Decision{}, true
	}
	return Decision{Verdict: Deny, Rule: ruleTierSetting,
		Message: "cdprelay: " + m.name + " is refused while some sites are read-only or blind to automation: " + why}, false
}

const ruleTierSetting = "relay:tier-setting"

// liftKept are the lifted settings, and what takes them back, that the
// resume's table (replayedMethods) does not keep already: kept the same
// way, for the tiers and for a resume.
var liftKept = map[string]replayKind{
	"Network.emulateNetworkConditionsByRule":             replaySet,
	"Network.overrideNetworkState":                       replaySet,
	"Emulation.setDataSaverOverride":                     replaySet,
	"Page.setDownloadBehavior":                           replaySet,
	"ServiceWorker.setForceUpdateOnPageLoad":             replaySet,
	"Page.setGeolocationOverride":                        replaySet,
	"DeviceOrientation.setDeviceOrientationOverride":     replaySet,
	"Page.setDeviceOrientationOverride":                  replaySet,
	"Emulation.setCPUPerformanceOverride":                replaySet,
	"Security.setOverrideCertificateErrors":              replaySet,
	"Page.setWebLifecycleState":                          replaySet,
	"Page.setPrerenderingAllowed":                        replaySet,
	"Input.setInterceptDrags":                            replaySet,
	"Input.setIgnoreInputEvents":                         replaySet,
	"Overlay.setInspectMode":                             replaySet,
	"Overlay.setPausedInDebuggerMessage":                 replaySet,
	"Page.setSPCTransactionMode":                         replaySet,
	"Page.setRPHRegistrationMode":                        replaySet,
	"Page.setDeviceMetricsOverride":                      replaySet,
	"Page.setTouchEmulationEnabled":                      replaySet,
	"Emulation.setEmulatedOSTextScale":                   replaySet,
	"Emulation.setDisabledImageTypes":                    replaySet,
	"Emulation.setSafeAreaInsetsOverride":                replaySet,
	"Emulation.setDevicePostureOverride":                 replaySet,
	"Emulation.setDisplayFeaturesOverride":               replaySet,
	"Emulation.setSmallViewportHeightDifferenceOverride": replaySet,
	"Animation.setPlaybackRate":                          replaySet,
	"Page.setInputVisualization":                         replaySet,
	"CSS.setLocalFontsEnabled":                           replaySet,
	"Overlay.setShowAdHighlights":                        replaySet,
	"Overlay.setShowDebugBorders":                        replaySet,
	"Overlay.setShowFPSCounter":                          replaySet,
	"Overlay.setShowScrollBottleneckRects":               replaySet,
	"Overlay.setShowHitTestBorders":                      replaySet,
	"Overlay.setShowWebVitals":                           replaySet,
	"Overlay.setShowViewportSizeOnResize":                replaySet,
	"Overlay.setShowPaintRects":                          replaySet,
	"Overlay.setShowLayoutShiftRegions":                  replaySet,
	"Overlay.setShowHinge":                               replaySet,
	"Overlay.setShowDisplayCutout":                       replaySet,
	"Overlay.setShowWindowControlsOverlay":               replaySet,
	"Profiler.start":                                     replaySet,
	"Profiler.startPreciseCoverage":                      replaySet,
	"HeapProfiler.startSampling":                         replaySet,
	"HeapProfiler.startTrackingHeapObjects":              replaySet,
	"Memory.startSampling":                               replaySet,
	"CSS.startRuleUsageTracking":                         replaySet,
	"Emulation.setSensorOverrideEnabled":                 replayKeyed,
	"Emulation.setPressureSourceOverrideEnabled":         replayKeyed,
	"Page.clearDeviceMetricsOverride":                    replayClear,
	"Page.clearGeolocationOverride":                      replayClear,
	"Page.clearDeviceOrientationOverride":                replayClear,
	"DeviceOrientation.clearDeviceOrientationOverride":   replayClear,
	"Emulation.clearDevicePostureOverride":               replayClear,
	"Emulation.clearDisplayFeaturesOverride":             replayClear,
	"Emulation.resetPageScaleFactor":                     replayClear,
	"Profiler.stop":                                      replayClear,
	"Profiler.stopPreciseCoverage":                       replayClear,
	"HeapProfiler.stopSampling":                          replayClear,
	"HeapProfiler.stopTrackingHeapObjects":               replayClear,
	"Memory.stopSampling":                                replayClear,
	"CSS.stopRuleUsageTracking":                          replayClear,
}

// liftCleared says, as replayCleared, which setting each replayClear
// call of liftKept takes back.
var liftCleared = map[string]string{
	"Page.clearDeviceMetricsOverride":                  "Page.setDeviceMetricsOverride",
	"Page.clearGeolocationOverride":                    "Page.setGeolocationOverride",
	"Page.clearDeviceOrientationOverride":              "Page.setDeviceOrientationOverride",
	"DeviceOrientation.clearDeviceOrientationOverride": "DeviceOrientation.setDeviceOrientationOverride",
	"Emulation.clearDevicePostureOverride":             "Emulation.setDevicePostureOverride",
	"Emulation.clearDisplayFeaturesOverride":           "Emulation.setDisplayFeaturesOverride",
	"Emulation.resetPageScaleFactor":                   "Emulation.setPageScaleFactor",
	"Profiler.stop":                                    "Profiler.start",
	"Profiler.stopPreciseCoverage":                     "Profiler.startPreciseCoverage",
	"HeapProfiler.stopSampling":                        "HeapProfiler.startSampling",
	"HeapProfiler.stopTrackingHeapObjects":             "HeapProfiler.startTrackingHeapObjects",
	"Memory.stopSampling":                              "Memory.startSampling",
	"CSS.stopRuleUsageTracking":                        "CSS.startRuleUsageTracking",
}

// replayKeyField names the field a replayKeyed call is kept by: the last
// call per value counts.
var replayKeyField = map[string]string{
	"Runtime.addBinding":                         "name",
	"Emulation.setSensorOverrideEnabled":         "type",
	"Emulation.setPressureSourceOverrideEnabled": "source",
}

// replayOf is how a command of method is kept (resume.go).
func replayOf(method string) replayKind {
	if k := replayedMethods[method]; k != replayNone {
		return k
	}
	return liftKept[method]
}

// clearedBy is the setting a replayClear call of method takes back.
func clearedBy(method string) string {
	if s := replayCleared[method]; s != "" {
		return s
	}
	return liftCleared[method]
}
