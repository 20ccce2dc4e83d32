package replay

// The tables: how each method's command is kept.

// Methods are the settings a resume sets again on a tab attached again
// (the client's sessions set them, and the debugger's new session does not
// have them), and how each is kept.
var Methods = map[string]Kind{
	"Page.setLifecycleEventsEnabled":              Set,
	"Page.setInterceptFileChooserDialog":          Set,
	"Page.setBypassCSP":                           Set,
	"Page.setAdBlockingEnabled":                   Set,
	"Page.setFontFamilies":                        Set,
	"Page.setFontSizes":                           Set,
	"Network.setExtraHTTPHeaders":                 Set,
	"Network.setUserAgentOverride":                Set,
	"Network.setCacheDisabled":                    Set,
	"Network.setBypassServiceWorker":              Set,
	"Network.emulateNetworkConditions":            Set,
	"Network.setBlockedURLs":                      Set,
	"Network.setAttachDebugStack":                 Set,
	"Emulation.setDeviceMetricsOverride":          Set,
	"Emulation.setUserAgentOverride":              Set,
	"Emulation.setTouchEmulationEnabled":          Set,
	"Emulation.setEmitTouchEventsForMouse":        Set,
	"Emulation.setEmulatedMedia":                  Set,
	"Emulation.setEmulatedVisionDeficiency":       Set,
	"Emulation.setLocaleOverride":                 Set,
	"Emulation.setTimezoneOverride":               Set,
	"Emulation.setGeolocationOverride":            Set,
	"Emulation.setFocusEmulationEnabled":          Set,
	"Emulation.setDefaultBackgroundColorOverride": Set,
	"Emulation.setScriptExecutionDisabled":        Set,
	"Emulation.setCPUThrottlingRate":              Set,
	"Emulation.setScrollbarsHidden":               Set,
	"Emulation.setAutoDarkModeOverride":           Set,
	"Emulation.setIdleOverride":                   Set,
	"Emulation.setHardwareConcurrencyOverride":    Set,
	"Emulation.setPageScaleFactor":                Set,
	"Emulation.setDocumentCookieDisabled":         Set,
	"Emulation.setAutomationOverride":             Set,
	"Security.setIgnoreCertificateErrors":         Set,
	"Runtime.setAsyncCallStackDepth":              Set,
	"Runtime.setCustomObjectFormatterEnabled":     Set,
	"Runtime.setMaxCallStackSizeToCapture":        Set,
	"Target.setAutoAttach":                        Set,
	"Log.startViolationsReport":                   Set,
	"Runtime.addBinding":                          Keyed,
	"Runtime.removeBinding":                       Unkey,
	"Emulation.clearDeviceMetricsOverride":        Clear,
	"Emulation.clearGeolocationOverride":          Clear,
	"Emulation.clearIdleOverride":                 Clear,
	"Log.stopViolationsReport":                    Clear,
	"Page.addScriptToEvaluateOnNewDocument":       Script,
	"Page.removeScriptToEvaluateOnNewDocument":    Unscript,
}

// cleared says which Set setting each Clear call of Methods takes back.
var cleared = map[string]string{
	"Emulation.clearDeviceMetricsOverride": "Emulation.setDeviceMetricsOverride",
	"Emulation.clearGeolocationOverride":   "Emulation.setGeolocationOverride",
	"Emulation.clearIdleOverride":          "Emulation.setIdleOverride",
	"Log.stopViolationsReport":             "Log.startViolationsReport",
}

// liftKept are the settings the tiers lift on a page where automation may
// do less, and what takes them back, that Methods does not keep already:
// kept the same way, for the tiers and for a resume.
var liftKept = map[string]Kind{
	"Network.emulateNetworkConditionsByRule":             Set,
	"Network.overrideNetworkState":                       Set,
	"Emulation.setDataSaverOverride":                     Set,
	"Page.setDownloadBehavior":                           Set,
	"ServiceWorker.setForceUpdateOnPageLoad":             Set,
	"Page.setGeolocationOverride":                        Set,
	"DeviceOrientation.setDeviceOrientationOverride":     Set,
	"Page.setDeviceOrientationOverride":                  Set,
	"Emulation.setCPUPerformanceOverride":                Set,
	"Security.setOverrideCertificateErrors":              Set,
	"Page.setWebLifecycleState":                          Set,
	"Page.setPrerenderingAllowed":                        Set,
	"Input.setInterceptDrags":                            Set,
	"Input.setIgnoreInputEvents":                         Set,
	"Overlay.setInspectMode":                             Set,
	"Overlay.setPausedInDebuggerMessage":                 Set,
	"Page.setSPCTransactionMode":                         Set,
	"Page.setRPHRegistrationMode":                        Set,
	"Page.setDeviceMetricsOverride":                      Set,
	"Page.setTouchEmulationEnabled":                      Set,
	"Emulation.setEmulatedOSTextScale":                   Set,
	"Emulation.setDisabledImageTypes":                    Set,
	"Emulation.setSafeAreaInsetsOverride":                Set,
	"Emulation.setDevicePostureOverride":                 Set,
	"Emulation.setDisplayFeaturesOverride":               Set,
	"Emulation.setSmallViewportHeightDifferenceOverride": Set,
	"Animation.setPlaybackRate":                          Set,
	"Page.setInputVisualization":                         Set,
	"CSS.setLocalFontsEnabled":                           Set,
	"Overlay.setShowAdHighlights":                        Set,
	"Overlay.setShowDebugBorders":                        Set,
	"Overlay.setShowFPSCounter":                          Set,
	"Overlay.setShowScrollBottleneckRects":               Set,
	"Overlay.setShowHitTestBorders":                      Set,
	"Overlay.setShowWebVitals":                           Set,
	"Overlay.setShowViewportSizeOnResize":                Set,
	"Overlay.setShowPaintRects":                          Set,
	"Overlay.setShowLayoutShiftRegions":                  Set,
	"Overlay.setShowHinge":                               Set,
	"Overlay.setShowDisplayCutout":                       Set,
	"Overlay.setShowWindowControlsOverlay":               Set,
	"Profiler.start":                                     Set,
	"Profiler.startPreciseCoverage":                      Set,
	"HeapProfiler.startSampling":                         Set,
	"HeapProfiler.startTrackingHeapObjects":              Set,
	"Memory.startSampling":                               Set,
	"CSS.startRuleUsageTracking":                         Set,
	"Emulation.setSensorOverrideEnabled":                 Keyed,
	"Emulation.setPressureSourceOverrideEnabled":         Keyed,
	"Page.clearDeviceMetricsOverride":                    Clear,
	"Page.clearGeolocationOverride":                      Clear,
	"Page.clearDeviceOrientationOverride":                Clear,
	"DeviceOrientation.clearDeviceOrientationOverride":   Clear,
	"Emulation.clearDevicePostureOverride":               Clear,
	"Emulation.clearDisplayFeaturesOverride":             Clear,
	"Emulation.resetPageScaleFactor":                     Clear,
	"Profiler.stop":                                      Clear,
	"Profiler.stopPreciseCoverage":                       Clear,
	"HeapProfiler.stopSampling":                          Clear,
	"HeapProfiler.stopTrackingHeapObjects":               Clear,
	"Memory.stopSampling":                                Clear,
	"CSS.stopRuleUsageTracking":                          Clear,
}

// liftCleared says, as cleared, which setting each Clear call of liftKept
// takes back.
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

// keyField names the field a Keyed call is kept by: the last call per
// value counts.
var keyField = map[string]string{
	"Runtime.addBinding":                         "name",
	"Emulation.setSensorOverrideEnabled":         "type",
	"Emulation.setPressureSourceOverrideEnabled": "source",
}

// KindOf is how a command of method is kept (None: it is not).
func KindOf(method string) Kind {
	if k := Methods[method]; k != None {
		return k
	}
	return liftKept[method]
}

// ClearedBy is the setting a Clear call of method takes back ("" for a
// method that is not one).
func ClearedBy(method string) string {
	if s := cleared[method]; s != "" {
		return s
	}
	return liftCleared[method]
}
