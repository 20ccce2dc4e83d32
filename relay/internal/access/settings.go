package access

import (
	"iter"
	"maps"
	"strings"

	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/cdp"
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
// the document of the stricter page commits (the tiers' lifts.go); the setting is put
// back, as it was made, once the tab is on its way to a full site again.
// The client's scripts for new documents follow the same path (the
// tiers' worldscripts.go).

// LiftRule is what one kind of setting becomes on a page that is not
// full.
type LiftRule struct {
	// At is the least strict access the setting is lifted on.
	At Level
	// Undo returns the command that takes the setting, made with params,
	// out of Chrome.
	Undo func(params []byte) (method string, p any)
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
		v := stringField(params, field)
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
// (relay/internal/replay: Methods, and liftKept for the rest).
var liftRules = map[string]LiftRule{
	// What the site receives.
	"Network.setExtraHTTPHeaders":            {ReadOnly, undoWith("Network.setExtraHTTPHeaders", map[string]any{"headers": map[string]string{}})},
	"Network.setUserAgentOverride":           {ReadOnly, undoWith("Network.setUserAgentOverride", map[string]any{"userAgent": ""})},
	"Emulation.setUserAgentOverride":         {ReadOnly, undoWith("Emulation.setUserAgentOverride", map[string]any{"userAgent": ""})},
	"Network.setBlockedURLs":                 {ReadOnly, undoBlocked},
	"Network.emulateNetworkConditions":       {ReadOnly, undoWith("Network.emulateNetworkConditions", noNetworkConditions)},
	"Network.emulateNetworkConditionsByRule": {ReadOnly, undoWith("Network.emulateNetworkConditionsByRule", map[string]any{"matchedNetworkConditions": []any{}})},
	"Network.overrideNetworkState":           {ReadOnly, undoWith("Network.overrideNetworkState", noNetworkConditions)},
	"Network.setBypassServiceWorker":         {ReadOnly, undoWith("Network.setBypassServiceWorker", map[string]any{"bypass": false})},
	"Emulation.setDataSaverOverride":         {ReadOnly, undoWith("Emulation.setDataSaverOverride", map[string]any{})},
	"Page.setAdBlockingEnabled":              {ReadOnly, undoWith("Page.setAdBlockingEnabled", off)},
	"Page.setDownloadBehavior":               {ReadOnly, undoWith("Page.setDownloadBehavior", map[string]any{"behavior": "default"})},
	"ServiceWorker.setForceUpdateOnPageLoad": {ReadOnly, undoWith("ServiceWorker.setForceUpdateOnPageLoad", map[string]any{"forceUpdateOnPageLoad": false})},
	// What its script is told.
	"Emulation.setLocaleOverride":                    {ReadOnly, undoWith("Emulation.setLocaleOverride", map[string]any{})},
	"Emulation.setTimezoneOverride":                  {ReadOnly, undoWith("Emulation.setTimezoneOverride", map[string]any{"timezoneId": ""})},
	"Emulation.setGeolocationOverride":               {ReadOnly, undoWith("Emulation.clearGeolocationOverride", nil)},
	"Page.setGeolocationOverride":                    {ReadOnly, undoWith("Page.clearGeolocationOverride", nil)},
	"DeviceOrientation.setDeviceOrientationOverride": {ReadOnly, undoWith("DeviceOrientation.clearDeviceOrientationOverride", nil)},
	"Page.setDeviceOrientationOverride":              {ReadOnly, undoWith("Page.clearDeviceOrientationOverride", nil)},
	"Emulation.setIdleOverride":                      {ReadOnly, undoWith("Emulation.clearIdleOverride", nil)},
	"Emulation.setSensorOverrideEnabled":             {ReadOnly, undoKeyed("Emulation.setSensorOverrideEnabled", "type", off)},
	"Emulation.setPressureSourceOverrideEnabled":     {ReadOnly, undoKeyed("Emulation.setPressureSourceOverrideEnabled", "source", off)},
	"Emulation.setCPUPerformanceOverride":            {ReadOnly, undoWith("Emulation.setCPUPerformanceOverride", map[string]any{})},
	"Emulation.setAutomationOverride":                {ReadOnly, undoWith("Emulation.setAutomationOverride", off)},
	// What weakens the site or changes what it runs.
	"Page.setBypassCSP":                     {ReadOnly, undoWith("Page.setBypassCSP", off)},
	"Security.setIgnoreCertificateErrors":   {ReadOnly, undoWith("Security.setIgnoreCertificateErrors", map[string]any{"ignore": false})},
	"Security.setOverrideCertificateErrors": {ReadOnly, undoWith("Security.setOverrideCertificateErrors", map[string]any{"override": false})},
	"Emulation.setScriptExecutionDisabled":  {ReadOnly, undoWith("Emulation.setScriptExecutionDisabled", map[string]any{"value": false})},
	"Emulation.setDocumentCookieDisabled":   {ReadOnly, undoWith("Emulation.setDocumentCookieDisabled", map[string]any{"disabled": false})},
	"Page.setWebLifecycleState":             {ReadOnly, undoWith("Page.setWebLifecycleState", map[string]any{"state": "active"})},
	"Page.setPrerenderingAllowed":           {ReadOnly, undoWith("Page.setPrerenderingAllowed", map[string]any{"isAllowed": true})},
	// What takes the person's input or prompts from them.
	"Page.setInterceptFileChooserDialog": {ReadOnly, undoWith("Page.setInterceptFileChooserDialog", off)},
	"Input.setInterceptDrags":            {ReadOnly, undoWith("Input.setInterceptDrags", off)},
	"Input.setIgnoreInputEvents":         {ReadOnly, undoWith("Input.setIgnoreInputEvents", map[string]any{"ignore": false})},
	"Overlay.setInspectMode":             {ReadOnly, undoWith("Overlay.setInspectMode", map[string]any{"mode": "none"})},
	"Overlay.setPausedInDebuggerMessage": {ReadOnly, undoWith("Overlay.setPausedInDebuggerMessage", map[string]any{})},
	"Page.setSPCTransactionMode":         {ReadOnly, undoWith("Page.setSPCTransactionMode", map[string]any{"mode": "none"})},
	"Page.setRPHRegistrationMode":        {ReadOnly, undoWith("Page.setRPHRegistrationMode", map[string]any{"mode": "none"})},
	"WebAuthn.enable":                    {ReadOnly, undoWith("WebAuthn.disable", nil)},
	"BluetoothEmulation.enable":          {ReadOnly, undoWith("BluetoothEmulation.disable", nil)},
	"SmartCardEmulation.enable":          {ReadOnly, undoWith("SmartCardEmulation.disable", nil)},
	"DeviceAccess.enable":                {ReadOnly, undoWith("DeviceAccess.disable", nil)},
	"FedCm.enable":                       {ReadOnly, undoWith("FedCm.disable", nil)},

	// How the page is shown, on a blind page: the person sees it as it is.
	"Emulation.setDeviceMetricsOverride":                 {Blind, undoWith("Emulation.clearDeviceMetricsOverride", nil)},
	"Page.setDeviceMetricsOverride":                      {Blind, undoWith("Page.clearDeviceMetricsOverride", nil)},
	"Emulation.setFocusEmulationEnabled":                 {Blind, undoWith("Emulation.setFocusEmulationEnabled", off)},
	"Emulation.setTouchEmulationEnabled":                 {Blind, undoWith("Emulation.setTouchEmulationEnabled", off)},
	"Page.setTouchEmulationEnabled":                      {Blind, undoWith("Page.setTouchEmulationEnabled", off)},
	"Emulation.setEmitTouchEventsForMouse":               {Blind, undoWith("Emulation.setEmitTouchEventsForMouse", off)},
	"Emulation.setEmulatedMedia":                         {Blind, undoWith("Emulation.setEmulatedMedia", map[string]any{"media": "", "features": []any{}})},
	"Emulation.setEmulatedVisionDeficiency":              {Blind, undoWith("Emulation.setEmulatedVisionDeficiency", map[string]any{"type": "none"})},
	"Emulation.setEmulatedOSTextScale":                   {Blind, undoWith("Emulation.setEmulatedOSTextScale", map[string]any{})},
	"Emulation.setDefaultBackgroundColorOverride":        {Blind, undoWith("Emulation.setDefaultBackgroundColorOverride", map[string]any{})},
	"Emulation.setScrollbarsHidden":                      {Blind, undoWith("Emulation.setScrollbarsHidden", map[string]any{"hidden": false})},
	"Emulation.setPageScaleFactor":                       {Blind, undoWith("Emulation.resetPageScaleFactor", nil)},
	"Emulation.setCPUThrottlingRate":                     {Blind, undoWith("Emulation.setCPUThrottlingRate", map[string]any{"rate": 1})},
	"Emulation.setAutoDarkModeOverride":                  {Blind, undoWith("Emulation.setAutoDarkModeOverride", map[string]any{})},
	"Emulation.setDisabledImageTypes":                    {Blind, undoWith("Emulation.setDisabledImageTypes", map[string]any{"imageTypes": []string{}})},
	"Emulation.setSafeAreaInsetsOverride":                {Blind, undoWith("Emulation.setSafeAreaInsetsOverride", map[string]any{"insets": map[string]any{}})},
	"Emulation.setDevicePostureOverride":                 {Blind, undoWith("Emulation.clearDevicePostureOverride", nil)},
	"Emulation.setDisplayFeaturesOverride":               {Blind, undoWith("Emulation.clearDisplayFeaturesOverride", nil)},
	"Emulation.setSmallViewportHeightDifferenceOverride": {Blind, undoWith("Emulation.setSmallViewportHeightDifferenceOverride", map[string]any{"difference": 0})},
	"Network.setCacheDisabled":                           {Blind, undoWith("Network.setCacheDisabled", map[string]any{"cacheDisabled": false})},
	"Animation.setPlaybackRate":                          {Blind, undoWith("Animation.setPlaybackRate", map[string]any{"playbackRate": 1})},
	"Page.setInputVisualization":                         {Blind, undoWith("Page.setInputVisualization", off)},
	"CSS.setLocalFontsEnabled":                           {Blind, undoWith("CSS.setLocalFontsEnabled", map[string]any{"enabled": true})},
	"Overlay.setShowAdHighlights":                        {Blind, undoWith("Overlay.setShowAdHighlights", hide)},
	"Overlay.setShowDebugBorders":                        {Blind, undoWith("Overlay.setShowDebugBorders", hide)},
	"Overlay.setShowFPSCounter":                          {Blind, undoWith("Overlay.setShowFPSCounter", hide)},
	"Overlay.setShowScrollBottleneckRects":               {Blind, undoWith("Overlay.setShowScrollBottleneckRects", hide)},
	"Overlay.setShowHitTestBorders":                      {Blind, undoWith("Overlay.setShowHitTestBorders", hide)},
	"Overlay.setShowWebVitals":                           {Blind, undoWith("Overlay.setShowWebVitals", hide)},
	"Overlay.setShowViewportSizeOnResize":                {Blind, undoWith("Overlay.setShowViewportSizeOnResize", hide)},
	"Overlay.setShowPaintRects":                          {Blind, undoWith("Overlay.setShowPaintRects", map[string]any{"result": false})},
	"Overlay.setShowLayoutShiftRegions":                  {Blind, undoWith("Overlay.setShowLayoutShiftRegions", map[string]any{"result": false})},
	"Overlay.setShowHinge":                               {Blind, undoWith("Overlay.setShowHinge", map[string]any{})},
	"Overlay.setShowDisplayCutout":                       {Blind, undoWith("Overlay.setShowDisplayCutout", map[string]any{})},
	"Overlay.setShowWindowControlsOverlay":               {Blind, undoWith("Overlay.setShowWindowControlsOverlay", map[string]any{})},
	// A binding the blind page's script could call, and with it send the
	// client whatever it likes.
	"Runtime.addBinding": {Blind, undoKeyed("Runtime.removeBinding", "name", nil)},
	// Recordings that would cover the blind page: stopped, and started
	// afresh on a full page.
	"Profiler.start":                        {Blind, undoWith("Profiler.stop", nil)},
	"Profiler.startPreciseCoverage":         {Blind, undoWith("Profiler.stopPreciseCoverage", nil)},
	"HeapProfiler.startSampling":            {Blind, undoWith("HeapProfiler.stopSampling", nil)},
	"HeapProfiler.startTrackingHeapObjects": {Blind, undoWith("HeapProfiler.stopTrackingHeapObjects", nil)},
	"Memory.startSampling":                  {Blind, undoWith("Memory.stopSampling", nil)},
	"CSS.startRuleUsageTracking":            {Blind, undoWith("CSS.stopRuleUsageTracking", nil)},
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

// SettingRefusal is the refusal of method name, a setting, while the
// policy has tiers, or ok when it is not refused; unknown says the relay
// does not know the method (a newer Chrome's).
func SettingRefusal(name string, unknown bool) (api.Decision, bool) {
	why, refused := refusedSettings[name]
	if _, lifted := liftRules[name]; !refused && !lifted && keptSettings[name] == "" && unknown && setterName(name) {
		why, refused = "the relay does not know what it sets, so it could not take it back", true
	}
	if !refused {
		return api.Decision{}, true
	}
	return api.Decision{Verdict: api.Deny, Rule: RuleSetting,
		Message: "cdprelay: " + name + " is refused while some sites are read-only or blind to automation: " + why}, false
}

// RuleSetting is the rule id of a setting refused while the policy has
// tiers.
const RuleSetting = "relay:tier-setting"

// Lift returns the rule of the setting method makes, ok false when it is
// not lifted.
func Lift(method string) (rule LiftRule, ok bool) {
	rule, ok = liftRules[method]
	return rule, ok
}

// Lifted are the methods whose settings are lifted, in no order.
func Lifted() iter.Seq[string] { return maps.Keys(liftRules) }

// Refused says why method, a setting, is refused while the policy has
// tiers ("" when it is not).
func Refused(method string) string { return refusedSettings[method] }

// Kept says why method, a setting, is kept on every page ("" when it is
// not one of those named: see keptSettings).
func Kept(method string) string { return keptSettings[method] }

// HasEffect reports whether method is a domain's enable that does more
// than start events.
func HasEffect(method string) bool { return effectEnables[method] }

// SetterName reports whether a method's name says it sets something: what
// a method of a newer Chrome that the relay does not know is taken to do.
func SetterName(name string) bool { return setterName(name) }

// stringField is params' string member key, "" when it has none, has it
// twice or it is not a string (as the relay reads a command's params).
func stringField(params []byte, key string) string {
	s, _, err := cdp.ExactString(params, key)
	if err != nil {
		return ""
	}
	return s
}
