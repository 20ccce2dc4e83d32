package relay

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/cdprelay/cdprelay/relay/internal/cdp"
)

// TestMethodNamesAreChromes: every CDP method or event the relay's code
// names in a string is one of the protocol's (cdproto's list, the one
// /json/protocol serves), or one of the few the relay and the extension
// protocol add. A misspelt name in a rule table would otherwise pass every
// test that does not send that exact method.
func TestMethodNamesAreChromes(t *testing.T) {
	known := map[string]bool{}
	for _, n := range cdp.Names() {
		known[n.Method] = true
	}
	// Chrome's, newer than cdproto's list, or the relay's own.
	for _, name := range []string{
		"Page.frameStartedNavigating", "Runtime.getExceptionDetails", "Page.getAdScriptAncestry",
		"DOM.getDetachedDomNodes", "DOM.getAnchorElement", "Network.streamResourceContent",
		"CDPRelay.fillSecret", "CDPRelay.accessChanged", "CDPRelay.controlChanged", "CDPRelay.stopped",
		// Deprecated or experimental ones cdproto dropped, that Chrome
		// still has and the relay must still judge.
		"DOM.getFlattenedDocument", "IO.resolveBlob", "Network.takeResponseBodyForInterceptionAsStream",
		"Page.getManifestIcons", "Runtime.setAsyncCallStackDepth", "Storage.getStorageKeyForFrame",
		"Network.requestIntercepted", "Network.getAllCookies", "Page.getCookies", "Target.sendMessageToTarget",
		"Page.setDownloadBehavior", "Page.downloadWillBegin", "Page.downloadProgress",
		"Debugger.setScriptSource", "Debugger.getWasmBytecode", "Debugger.breakpointResolved",
		// Sent by Playwright and Puppeteer, and kept for a resume.
		"Network.setUserAgentOverride", "Network.emulateNetworkConditions",
		// Settings Chrome still takes, under older names or newer than
		// cdproto's list, that the tiers lift or refuse (tiers/settings.go).
		"Page.setGeolocationOverride", "Page.clearGeolocationOverride", "Page.setDeviceOrientationOverride",
		"Page.clearDeviceOrientationOverride", "Page.setDeviceMetricsOverride", "Page.clearDeviceMetricsOverride",
		"Page.setTouchEmulationEnabled", "Security.setOverrideCertificateErrors", "Overlay.setShowHitTestBorders",
		"Overlay.setShowWebVitals", "Emulation.setNavigatorOverrides", "Emulation.setVisibleSize",
		"Page.addScriptToEvaluateOnLoad", "Performance.setTimeDomain",
		// A prefix the event router matches on.
		"Runtime.executionContext",
	} {
		known[name] = true
	}
	ownPrefix := regexp.MustCompile(`^(chrome|extension)\.`)
	method := regexp.MustCompile(`^[A-Z][A-Za-z]+\.[a-z][A-Za-z]+$`)
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	below, err := filepath.Glob("internal/*/*.go")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, below...)
	fset := token.NewFileSet()
	checked := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil || !method.MatchString(s) || ownPrefix.MatchString(s) {
				return true
			}
			checked++
			if !known[s] {
				t.Errorf("%s: %q is not a CDP method or event", fset.Position(lit.Pos()), s)
			}
			return true
		})
	}
	if checked < 100 {
		t.Fatalf("only %d method names found: the scan is broken", checked)
	}
}
