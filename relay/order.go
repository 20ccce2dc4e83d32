package relay

import (
	"math/bits"
	"slices"
	"strings"

	"github.com/cdprelay/cdprelay/relay/internal/creds"
)

// The order: what the relay does with each message, top to bottom, in
// three tables, one per path. Each row is a stage: one function, named
// "concern.Name" (the concern that owns it, the step it takes). The order
// of the rows is a security contract, pinned by TestCommandOrder,
// TestEventOrder and TestReplyOrder (the names) and by the behavioural
// pins of order_*_test.go (each adjacency that matters).
//
// A stage is called only for the methods it wants (a command stage's
// wants, once per method: the method's plan, a bitset on the interned
// methodInfo), so the per-message path calls nothing for a stage that
// does not care.

// cmdStage is one row of the commands table. run reports whether the
// command goes on to the next row: false when the stage answered it,
// refused it or held it.
type cmdStage struct {
	name string
	run  func(c *clientConn, k *cmd) bool
	// wants reports whether the stage is called for a method; nil: for
	// every one. Called once per method, when the method is interned.
	wants func(m *methodInfo) bool
	// arrival: only when a command arrives, not when a held command is
	// judged again off its line.
	arrival bool
	// judges: the row judges (decide): it changes nothing of the tab. The
	// relay's own commands (a resume's replay) run these rows only.
	judges bool
}

// commandStages is the commands table (pipeline.go says what each row
// does). Set in init: its stages reach, through held commands, the runner
// that reads it.
var commandStages []cmdStage

// Plan masks over commandStages, set in init.
var (
	arrivalStages uint64 // the rows a command taken off its line skips
	judgingStages uint64 // the rows the relay's own commands run
)

func init() {
	replyStages = replyTable()
	commandStages = []cmdStage{
		{name: "core.Limits", run: (*clientConn).limits, arrival: true},
		{name: "person.Running", run: (*clientConn).running},
		{name: "core.Route", run: (*clientConn).route},
		{name: "core.Line", run: (*clientConn).inLine, arrival: true},
		// decide: the judging stages.
		{name: "rules.Operator", run: (*clientConn).operator, judges: true},
		{name: "rules.Relay", run: (*clientConn).relayRules, judges: true},
		{name: "creds.Restore", run: (*clientConn).restore, wants: wantsRestore, judges: true},
		{name: "rules.Uploads", run: (*clientConn).uploadsStage, wants: wantsUploads, judges: true},
		{name: "person.StopRules", run: (*clientConn).stopRulesStage, wants: wantsStopRules, judges: true},
		{name: "rules.TargetOnTab", run: (*clientConn).targetOnTab, wants: wantsTargetOnTab, judges: true},
		{name: "tiers.Navigate", run: (*clientConn).navigateTo, wants: wantsNavigateTo, judges: true},
		{name: "tiers.Checks", run: (*clientConn).tierStage, judges: true},
		{name: "tiers.StandIn", run: (*clientConn).standIn, judges: true},
		{name: "tiers.FrameTree", run: (*clientConn).frameTree, wants: wantsFrameTree, judges: true},
		{name: "tiers.Contexts", run: (*clientConn).contextsStage, wants: wantsContexts, judges: true},
		{name: "tiers.Retried", run: (*clientConn).retried, wants: wantsRetried, judges: true},
		{name: "tiers.Gate", run: (*clientConn).gateStage, judges: true},
		{name: "tiers.Pixels", run: (*clientConn).pixels, wants: wantsPixels, judges: true},
		{name: "person.Recheck", run: (*clientConn).checkApproved, judges: true},
		{name: "person.Ask", run: (*clientConn).asks, judges: true},
		// act: the stages that act, on a command the judges let through.
		{name: "tiers.NavTo", run: (*clientConn).prepare, wants: wantsNavTo},
		{name: "creds.Secret", run: (*clientConn).secret, wants: wantsSecret},
		{name: "creds.LockGates", run: (*clientConn).secretGates, wants: wantsLockGates},
		{name: "rules.Fence", run: (*clientConn).fence, wants: wantsFence},
		{name: "core.Emulate", run: (*clientConn).emulate, wants: wantsEmulate},
		{name: "core.NeedsPage", run: (*clientConn).needsPage},
		{name: "core.ScreencastNote", run: (*clientConn).screencastNote, wants: wantsScreencastNote},
		{name: "person.DialogClaim", run: (*clientConn).dialogClaim, wants: wantsDialog},
		{name: "tiers.Worlds", run: (*clientConn).worlds, wants: wantsWorlds},
		{name: "tiers.RemoveScript", run: (*clientConn).removeScriptStage, wants: wantsRemoveScript},
		{name: "creds.Streams", run: (*clientConn).streamsStage, wants: wantsStreams},
		{name: "person.Brake", run: (*clientConn).brakeStage, wants: wantsBrake},
		{name: "core.Send", run: (*clientConn).sendStage},
	}
	if len(commandStages) > 64 {
		panic("relay: more than 64 command stages: the plans are 64-bit")
	}
	for i, s := range commandStages {
		if s.arrival {
			arrivalStages |= 1 << i
		}
		if s.judges {
			judgingStages |= 1 << i
		}
	}
	// Every method interned so far gets its plan; lookupMethod gives the
	// later ones theirs.
	for _, m := range methodTable {
		setPlan(m)
	}
	methodNames.mu.Lock()
	for _, m := range methodNames.m {
		setPlan(m)
	}
	methodNames.mu.Unlock()
}

// eventStage is one row of the events table. run runs with the instance
// lock held and reports whether the event goes on to the next row.
type eventStage struct {
	name  string
	run   func(in *Instance, e *event) bool
	wants func(name string) bool // nil: every event
}

// eventStages is the events table (events.go says what each row does).
var eventStages []eventStage

func init() {
	eventStages = []eventStage{
		{name: "tiers.FrameGuard", run: (*Instance).frameGuard, wants: isEvent("Page.screencastFrame")},
		{name: "core.Screencast", run: (*Instance).screencast, wants: isEvent("Page.screencastFrame")},
		{name: "core.PageTrack", run: (*Instance).pageTrack, wants: func(n string) bool {
			return strings.HasPrefix(n, "Page.") && n != "Page.screencastFrame"
		}},
		{name: "core.Child", run: (*Instance).childOf},
		{name: "tiers.ChildFrames", run: (*Instance).childFrames, wants: isEvent("Page.frameNavigated", "Page.frameDetached", "Page.frameStartedNavigating", "Page.frameRequestedNavigation")},
		{name: "tiers.Requests", run: (*Instance).requests, wants: isEvent("Fetch.requestPaused", "Network.requestWillBeSent")},
		{name: "tiers.BlindSources", run: (*Instance).blindSources, wants: isEvent("Debugger.scriptParsed", "Debugger.scriptFailedToParse", "CSS.styleSheetAdded")},
		{name: "tiers.Blind", run: (*Instance).blindEvent},
		{name: "core.RelayWorld", run: (*Instance).relayWorld, wants: func(n string) bool {
			return strings.HasPrefix(n, "Runtime.") || strings.HasPrefix(n, "Debugger.")
		}},
		{name: "tiers.Guard", run: (*Instance).guardWorld, wants: func(n string) bool { return strings.HasPrefix(n, "Runtime.executionContext") }},
		{name: "person.BrakePause", run: (*Instance).brakePause, wants: isEvent("Debugger.paused")},
		{name: "rules.Backstop", run: (*Instance).backstopPause, wants: isEvent("Fetch.requestPaused")},
		{name: "person.LetGoOn", run: (*Instance).letGoOn, wants: isEvent("Fetch.requestPaused", "Fetch.authRequired", "Debugger.paused")},
		{name: "core.Session", run: (*Instance).sessionOf},
		{name: "core.Children", run: (*Instance).children, wants: isEvent("Target.attachedToTarget", "Target.detachedFromTarget")},
		{name: "person.BrakeChild", run: (*Instance).brakeChild, wants: isEvent("Target.attachedToTarget")},
		{name: "rules.FenceChild", run: (*Instance).fenceChild, wants: isEvent("Target.attachedToTarget")},
		{name: "tiers.ChildPage", run: (*Instance).childPage, wants: isEvent("Target.attachedToTarget")},
		{name: "tiers.BlindChild", run: (*Instance).blindChild, wants: isEvent("Target.attachedToTarget")},
		{name: "person.ResumeWaiting", run: (*Instance).resumeWaiting, wants: isEvent("Target.attachedToTarget")},
		{name: "tiers.Withhold", run: (*Instance).withhold},
		{name: "person.OwnDebugger", run: (*Instance).ownDebugger, wants: func(n string) bool { return strings.HasPrefix(n, "Debugger.") }},
		{name: "browser.Downloads", run: (*Instance).downloads, wants: isEvent("Page.downloadWillBegin", "Page.downloadProgress")},
		{name: "core.Count", run: (*Instance).countEvent},
		{name: "creds.Redact", run: (*Instance).redact, wants: func(n string) bool { return creds.IsEvent([]byte(n)) }},
		{name: "core.Deliver", run: (*Instance).deliverEvent},
	}
	if len(eventStages) > 64 {
		panic("relay: more than 64 event stages: the plans are 64-bit")
	}
	for _, e := range eventTable {
		setEventPlan(e)
	}
	eventNames.mu.Lock()
	for _, e := range eventNames.m {
		setEventPlan(e)
	}
	eventNames.mu.Unlock()
}

// isEvent wants the events named.
func isEvent(names ...string) func(string) bool {
	return func(n string) bool { return slices.Contains(names, n) }
}

// setEventPlan computes e's plan of the events table.
func setEventPlan(e *eventInfo) {
	var p uint64
	for i, s := range eventStages {
		if s.wants == nil || s.wants(e.name) {
			p |= 1 << i
		}
	}
	e.plan = p
}

// runEvent runs e through the rows of its plan, in order, until one stops
// it.
func (in *Instance) runEvent(e *event) {
	for p := e.info.plan; p != 0; p &= p - 1 {
		if !eventStages[bits.TrailingZeros64(p)].run(in, e) {
			return
		}
	}
}

// eventOrder lists the events table's stage names, top to bottom.
func eventOrder() []string {
	names := make([]string, len(eventStages))
	for i, s := range eventStages {
		names[i] = s.name
	}
	return names
}

// setPlan computes m's plan: which rows of each table want it.
func setPlan(m *methodInfo) {
	var p uint64
	for i, s := range commandStages {
		if s.wants == nil || s.wants(m) {
			p |= 1 << i
		}
	}
	m.plan = p
	p = 0
	for i, s := range replyStages {
		if s.wants == nil || s.wants(m) {
			p |= 1 << i
		}
	}
	m.replyPlan = p
}

// replyStage is one row of the replies table. run runs on the extension's
// read loop without the lock and reports whether the reply goes on to the
// next row: false when the row wrote what the client gets.
type replyStage struct {
	name  string
	run   func(x *extConn, r *reply) bool
	wants func(m *methodInfo) bool // nil: every method
}

// replyStages is the replies table (replies.go says what each row does).
// Set in the commands table's init, which computes the plans of both.
var replyStages []replyStage

func replyTable() []replyStage {
	return []replyStage{
		{name: "tiers.KeepScript", run: (*extConn).keepScriptReply, wants: isMethod("Page.addScriptToEvaluateOnNewDocument")},
		{name: "core.TapScript", run: (*extConn).tapScript, wants: func(m *methodInfo) bool { return m.replay == replayScript }},
		{name: "creds.StreamForget", run: (*extConn).streamForget, wants: isMethod("IO.read")},
		{name: "tiers.WentBlind", run: (*extConn).wentBlind},
		{name: "core.Error", run: (*extConn).replyError},
		{name: "tiers.Scopes", run: (*extConn).scopes, wants: isMethod("Runtime.getProperties")},
		{name: "tiers.History", run: (*extConn).history, wants: isMethod("Page.getNavigationHistory")},
		{name: "tiers.SideEffect", run: (*extConn).sideEffect, wants: isMethod("Runtime.evaluate", "Runtime.callFunctionOn")},
		{name: "creds.Results", run: (*extConn).credentialResult, wants: func(m *methodInfo) bool { return creds.IsResult(m.name) }},
		{name: "creds.StreamPiece", run: (*extConn).streamPiece, wants: isMethod("IO.read")},
		{name: "core.Result", run: (*extConn).replyResult},
	}
}

// isMethod wants the methods named.
func isMethod(names ...string) func(*methodInfo) bool {
	return func(m *methodInfo) bool { return slices.Contains(names, m.name) }
}

// runReply runs r through the rows of its method's plan, in order, until
// one writes what the client gets.
func (x *extConn) runReply(r *reply) {
	for p := r.pc.m.replyPlan; p != 0; p &= p - 1 {
		if !replyStages[bits.TrailingZeros64(p)].run(x, r) {
			return
		}
	}
}

// replyOrder lists the replies table's stage names, top to bottom.
func replyOrder() []string {
	names := make([]string, len(replyStages))
	for i, s := range replyStages {
		names[i] = s.name
	}
	return names
}

// runCommand runs k through the rows of plan, in order, until one answers,
// refuses or holds it. It reports whether k passed every row.
func (c *clientConn) runCommand(k *cmd, plan uint64) bool {
	for p := plan; p != 0; p &= p - 1 {
		if !commandStages[bits.TrailingZeros64(p)].run(c, k) {
			return false
		}
	}
	return true
}

// commandOrder lists the commands table's stage names, top to bottom.
func commandOrder() []string {
	names := make([]string, len(commandStages))
	for i, s := range commandStages {
		names[i] = s.name
	}
	return names
}
