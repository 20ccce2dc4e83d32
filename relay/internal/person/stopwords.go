package person

import (
	"strconv"
	"strings"

	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/relay/internal/api"
)

// Stop: what a person's Stop could not undo is refused to the automation
// from the start, and the words the Stop leaves in what it undoes.

// whyStopLift is why a tab's sessions are suspended while a Stop undoes
// what the automation set in it.
const whyStopLift = "cdprelay: a person stopped the automation; the relay undoes what it set in the tab"

// Rule ids of stopRulesOf, and of a Debugger command on a session that has
// not enabled the Debugger itself.
const (
	ruleUndoable    = "relay:outlives-stop"
	ruleUnstoppable = "relay:unstoppable-script"
	RuleDebuggerOff = "relay:debugger-not-enabled"
)

// stopRulesOf refuse what a person's Stop could not undo or end:
//
//   - Emulation.setVirtualTimePolicy: Chrome keeps virtual time when the
//     debugging session ends, and nothing sets it back;
//   - blackboxing (Debugger.setBlackboxPatterns, setBlackboxedRanges,
//     setBlackboxExecutionContexts): V8 takes no pause in blackboxed
//     script, the brake's included;
//   - Runtime.callFunctionOn with throwOnSideEffect: V8 takes no pause
//     under its side-effect check either, and callFunctionOn has no
//     timeout of its own (an evaluation has: the brake gives it one).
//
// It reports false, with the refusal, for the command method with params.
func stopRulesOf(method string, params []byte) (api.Decision, bool) {
	switch method {
	case "Emulation.setVirtualTimePolicy":
		return denyStop(ruleUndoable, "cdprelay: Emulation.setVirtualTimePolicy would stay in the person's tab after the automation stops (Chrome keeps virtual time when the debugging session ends), so it is not available through the relay"), false
	case "Debugger.setBlackboxPatterns", "Debugger.setBlackboxedRanges", "Debugger.setBlackboxExecutionContexts":
		return denyStop(ruleUnstoppable, "cdprelay: "+method+" would keep a person's Stop from ending the automation's script (the debugger takes no pause in blackboxed script), so it is not available through the relay"), false
	case "Runtime.callFunctionOn":
		if v, n := wire.Member(params, "throwOnSideEffect"); n > 1 || (n == 1 && string(v) != "false") {
			return denyStop(ruleUnstoppable, "cdprelay: Runtime.callFunctionOn with throwOnSideEffect runs where the debugger takes no pause, so a person's Stop could not end it; use Runtime.evaluate with throwOnSideEffect, which the relay bounds"), false
		}
	}
	return api.Decision{}, true
}

// hasStopRule reports whether stopRulesOf has a word on method.
func hasStopRule(method string) bool {
	switch method {
	case "Emulation.setVirtualTimePolicy", "Debugger.setBlackboxPatterns", "Debugger.setBlackboxedRanges", "Debugger.setBlackboxExecutionContexts", "Runtime.callFunctionOn":
		return true
	}
	return false
}

func denyStop(rule, msg string) api.Decision {
	return api.Decision{Verdict: api.Deny, Rule: rule, Message: msg}
}

// liftedTab is what a Stop undid on one tab.
type liftedTab struct {
	Target string   // the tab's target id; "" when nothing was undone there
	Ended  int      // sessions whose running script was ended
	Set    []string // what the client had set, as method names
	Err    error    // why the tab could not be attached again
}

// liftedDetail is the audit record's words for what the Stop by undid on
// the tabs of res; "" when it undid nothing.
func liftedDetail(by string, res []liftedTab) string {
	var parts []string
	for _, r := range res {
		if r.Target == "" {
			continue
		}
		p := "tab " + r.Target + ": "
		if r.Ended > 0 {
			p += "ended the script that kept it busy; "
		}
		if r.Err != nil {
			p += "could not attach again (" + r.Err.Error() + ")"
		} else if len(r.Set) > 0 {
			p += "lifted what the automation set (" + strings.Join(r.Set, ", ") + ")"
		} else {
			p += "lifted what the automation set"
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return ""
	}
	return "the Stop by " + by + " undid, on " + strconv.Itoa(len(parts)) + " tabs: " + strings.Join(parts, "; ")
}

// RuleIDs lists the rule ids of the person's stage's refusals, for
// counters that start at zero.
func RuleIDs() []string { return []string{ruleUndoable, ruleUnstoppable, RuleDebuggerOff} }
