package person

import (
	"errors"
	"testing"
)

func TestStopRules(t *testing.T) {
	for _, tc := range []struct {
		method, params, rule string
	}{
		{"Emulation.setVirtualTimePolicy", `{"policy":"pause"}`, ruleUndoable},
		{"Debugger.setBlackboxPatterns", `{"patterns":[]}`, ruleUnstoppable},
		{"Debugger.setBlackboxedRanges", `{}`, ruleUnstoppable},
		{"Debugger.setBlackboxExecutionContexts", `{}`, ruleUnstoppable},
		{"Runtime.callFunctionOn", `{"throwOnSideEffect":true}`, ruleUnstoppable},
		{"Runtime.callFunctionOn", `{"throwOnSideEffect":false,"throwOnSideEffect":true}`, ruleUnstoppable},
		{"Runtime.callFunctionOn", `{"throwOnSideEffect":1}`, ruleUnstoppable},
		{"Runtime.callFunctionOn", `{"throwOnSideEffect":false}`, ""},
		{"Runtime.callFunctionOn", `{"functionDeclaration":"()=>1"}`, ""},
		{"Runtime.evaluate", `{"throwOnSideEffect":true}`, ""},
	} {
		d, ok := stopRulesOf(tc.method, []byte(tc.params))
		if ok != (tc.rule == "") || d.Rule != tc.rule || (!ok && d.Message == "") {
			t.Errorf("%s %s: %+v %v, want rule %q", tc.method, tc.params, d, ok, tc.rule)
		}
		if !ok && !hasStopRule(tc.method) {
			t.Errorf("%s refused but hasStopRule says no word on it", tc.method)
		}
	}
	if hasStopRule("Runtime.evaluate") {
		t.Error("hasStopRule(Runtime.evaluate)")
	}
}

func TestLiftedDetail(t *testing.T) {
	for _, tc := range []struct {
		name string
		res  []liftedTab
		want string
	}{
		{"nothing", nil, ""},
		{"only tabs it left alone", []liftedTab{{}, {}}, ""},
		{"one tab", []liftedTab{{Target: "T1"}}, "the Stop by ann undid, on 1 tabs: tab T1: lifted what the automation set"},
		{"what was set, a busy script, a failure", []liftedTab{
			{Target: "T1", Ended: 2, Set: []string{"Page.addScriptToEvaluateOnNewDocument ×2", "Fetch.enable"}},
			{},
			{Target: "T3", Err: errors.New("no tab with given id")},
		}, "the Stop by ann undid, on 2 tabs: tab T1: ended the script that kept it busy; lifted what the automation set (Page.addScriptToEvaluateOnNewDocument ×2, Fetch.enable); tab T3: could not attach again (no tab with given id)"},
	} {
		if got := liftedDetail("ann", tc.res); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
