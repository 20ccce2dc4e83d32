package person

import "testing"

func TestStopRules(t *testing.T) {
	for _, tc := range []struct {
		method, params, rule string
	}{
		{"Emulation.setVirtualTimePolicy", `{"policy":"pause"}`, RuleUndoable},
		{"Debugger.setBlackboxPatterns", `{"patterns":[]}`, RuleUnstoppable},
		{"Debugger.setBlackboxedRanges", `{}`, RuleUnstoppable},
		{"Debugger.setBlackboxExecutionContexts", `{}`, RuleUnstoppable},
		{"Runtime.callFunctionOn", `{"throwOnSideEffect":true}`, RuleUnstoppable},
		{"Runtime.callFunctionOn", `{"throwOnSideEffect":false,"throwOnSideEffect":true}`, RuleUnstoppable},
		{"Runtime.callFunctionOn", `{"throwOnSideEffect":1}`, RuleUnstoppable},
		{"Runtime.callFunctionOn", `{"throwOnSideEffect":false}`, ""},
		{"Runtime.callFunctionOn", `{"functionDeclaration":"()=>1"}`, ""},
		{"Runtime.evaluate", `{"throwOnSideEffect":true}`, ""},
	} {
		d, ok := StopRules(tc.method, []byte(tc.params))
		if ok != (tc.rule == "") || d.Rule != tc.rule || (!ok && d.Message == "") {
			t.Errorf("%s %s: %+v %v, want rule %q", tc.method, tc.params, d, ok, tc.rule)
		}
		if !ok && !HasStopRule(tc.method) {
			t.Errorf("%s refused but HasStopRule says no word on it", tc.method)
		}
	}
	if HasStopRule("Runtime.evaluate") {
		t.Error("HasStopRule(Runtime.evaluate)")
	}
}
