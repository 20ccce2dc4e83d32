package core

import "github.com/cdprelay/cdprelay/relay/internal/access"

// The client's settings of a tab, under tiers: which are lifted where,
// refused or kept is the tiers' table (relay/internal/tiers/settings.go);
// how the lifted ones are kept is the resume's (replayKind), below.

// ruleTierSetting is the rule id of a setting refused while the policy
// has tiers.
const ruleTierSetting = access.RuleSetting

// SwitchOnly reports whether m only switches a domain's events on or off.
func SwitchOnly(m *MethodInfo) bool {
	return (m.Enable || m.Disable) && !access.HasEffect(m.Name)
}

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

// ReplayOf is how a command of method is kept (resume.go).
func ReplayOf(method string) replayKind {
	if k := ReplayedMethods[method]; k != ReplayNone {
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
