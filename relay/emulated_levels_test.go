package relay

import (
	"reflect"
	"testing"

	"github.com/cdprelay/cdprelay/relay/internal/core"
	"github.com/cdprelay/cdprelay/relay/internal/targets"
)

// TestEmulatedLevels pins what answers a method at each level of session
// (the root, a browser session, a tab's top-level session, a tab's child
// session): a stage's handler, the core's refusal, a domain switch, or
// nobody, and then the command goes to the tab. A method answered at a
// level where it used to go to the tab, or the other way round, changes
// what a client can reach.
func TestEmulatedLevels(t *testing.T) {
	tab := &core.Tab{Id: 1, TargetID: "T1"}
	levels := []struct {
		name string
		s    *core.Session
	}{
		{"root", nil},
		{"browser session", core.NewSession("b", nil, false)},
		{"tab session", core.NewSession("s", tab, false)},
		{"child session", core.NewSession("c", tab, true)},
	}
	fnOf := func(e *core.Emulation) uintptr {
		if e == nil {
			return 0
		}
		return reflect.ValueOf(e.Fn).Pointer()
	}
	tg := targets.Emulations()
	// The core's own answers, found by what it returns for a method no
	// stage answers.
	unsupported := fnOf(core.Emulated(core.LookupMethod([]byte("Browser.noSuchMethod")), nil))
	domainSwitch := fnOf(core.Emulated(core.LookupMethod([]byte("Network.enable")), levels[2].s))
	tabOnly := fnOf(core.Emulated(core.LookupMethod([]byte("Page.setDownloadBehavior")), nil))
	if unsupported == 0 || domainSwitch == 0 || tabOnly == 0 || unsupported == tabOnly {
		t.Fatal("the core's own answers are not told apart")
	}
	target := func(name string, level func(core.Levels) *core.Emulation) uintptr { return fnOf(level(tg[name])) }
	root := func(l core.Levels) *core.Emulation { return l.Root }
	tabLv := func(l core.Levels) *core.Emulation { return l.Tab }
	const toTab = uintptr(0)
	for _, tc := range []struct {
		method string
		want   [4]uintptr // root, browser session, tab session, child session
		block  [4]bool
	}{
		{"Target.setAutoAttach", [4]uintptr{target("Target.setAutoAttach", root), target("Target.setAutoAttach", func(l core.Levels) *core.Emulation { return l.Browser }), toTab, toTab}, [4]bool{true, false, false, false}},
		{"Target.getTargetInfo", [4]uintptr{target("Target.getTargetInfo", root), target("Target.getTargetInfo", root), toTab, toTab}, [4]bool{}},
		{"Target.detachFromTarget", [4]uintptr{target("Target.detachFromTarget", root), target("Target.detachFromTarget", root), target("Target.detachFromTarget", tabLv), target("Target.detachFromTarget", tabLv)}, [4]bool{true, true, false, false}},
		{"Target.createTarget", [4]uintptr{target("Target.createTarget", root), target("Target.createTarget", root), target("Target.createTarget", root), target("Target.createTarget", root)}, [4]bool{true, true, true, true}},
		{"Target.attachToTarget", [4]uintptr{target("Target.attachToTarget", root), target("Target.attachToTarget", root), target("Target.attachToTarget", root), target("Target.attachToTarget", root)}, [4]bool{true, true, true, true}},
		{"Target.getTargets", [4]uintptr{target("Target.getTargets", root), target("Target.getTargets", root), target("Target.getTargets", root), target("Target.getTargets", root)}, [4]bool{}},
		{"Target.sendMessageToTarget", [4]uintptr{unsupported, unsupported, toTab, toTab}, [4]bool{}},
		// Judged wherever it can reach a tab: at the root and on a browser
		// session it goes to the tab the route finds.
		{"Page.navigateToHistoryEntry", [4]uintptr{target("Page.navigateToHistoryEntry", tabLv), target("Page.navigateToHistoryEntry", tabLv), target("Page.navigateToHistoryEntry", tabLv), target("Page.navigateToHistoryEntry", tabLv)}, [4]bool{true, true, true, true}},
		{"Browser.noSuchMethod", [4]uintptr{unsupported, unsupported, unsupported, unsupported}, [4]bool{}},
		{"Page.setDownloadBehavior", [4]uintptr{tabOnly, tabOnly, fnOf(core.Emulated(core.LookupMethod([]byte("Page.setDownloadBehavior")), levels[2].s)), fnOf(core.Emulated(core.LookupMethod([]byte("Page.setDownloadBehavior")), levels[3].s))}, [4]bool{}},
		{"Network.enable", [4]uintptr{toTab, toTab, domainSwitch, toTab}, [4]bool{}},
		{"Runtime.evaluate", [4]uintptr{toTab, toTab, toTab, toTab}, [4]bool{}},
	} {
		m := core.LookupMethod([]byte(tc.method))
		for i, lv := range levels {
			e := core.Emulated(m, lv.s)
			if got := fnOf(e); got != tc.want[i] {
				t.Errorf("%s on a %s: handler %#x, want %#x (0: to the tab)", tc.method, lv.name, got, tc.want[i])
				continue
			}
			if e != nil && e.Blocking != tc.block[i] {
				t.Errorf("%s on a %s: blocking %v, want %v", tc.method, lv.name, e.Blocking, tc.block[i])
			}
		}
	}
	// Browser.getVersion is answered at every level, by the browser stage.
	v := core.Emulated(core.LookupMethod([]byte("Browser.getVersion")), nil)
	for _, lv := range levels {
		if got := fnOf(core.Emulated(core.LookupMethod([]byte("Browser.getVersion")), lv.s)); got == 0 || got == unsupported || got != fnOf(v) {
			t.Errorf("Browser.getVersion on a %s: handler %#x, want the browser stage's", lv.name, got)
		}
	}
}
