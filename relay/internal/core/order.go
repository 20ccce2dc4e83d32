package core

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
	Name string
	run  func(c *ClientConn, k *Cmd) bool
	// wants reports whether the stage is called for a method; nil: for
	// every one. Called once per method, when the method is interned.
	wants func(m *MethodInfo) bool
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
var CommandStages []cmdStage

// Plan masks over commandStages, set in init.
var (
	arrivalStages uint64 // the rows a command taken off its line skips
	judgingStages uint64 // the rows the relay's own commands run
)

func init() {
	ReplyStages = replyTable()
	CommandStages = []cmdStage{
		{Name: "core.Limits", run: (*ClientConn).limits, arrival: true},
		{Name: "person.Running", run: (*ClientConn).running},
		{Name: "core.Route", run: (*ClientConn).route},
		{Name: "core.Line", run: (*ClientConn).inLine, arrival: true},
		// decide: the judging stages.
		{Name: "rules.Operator", run: (*ClientConn).operator, judges: true},
		{Name: "rules.Relay", run: (*ClientConn).relayRules, judges: true},
		{Name: "creds.Restore", run: (*ClientConn).restore, wants: wantsRestore, judges: true},
		{Name: "rules.Uploads", run: (*ClientConn).uploadsStage, wants: wantsUploads, judges: true},
		{Name: "person.StopRules", run: (*ClientConn).stopRulesStage, wants: WantsStopRules, judges: true},
		{Name: "rules.TargetOnTab", run: (*ClientConn).targetOnTab, wants: wantsTargetOnTab, judges: true},
		{Name: "tiers.Navigate", run: (*ClientConn).navigateTo, wants: wantsNavigateTo, judges: true},
		{Name: "tiers.Checks", run: (*ClientConn).tierStage, judges: true},
		{Name: "tiers.StandIn", run: (*ClientConn).standIn, judges: true},
		{Name: "tiers.FrameTree", run: (*ClientConn).frameTree, wants: wantsFrameTree, judges: true},
		{Name: "tiers.Contexts", run: (*ClientConn).contextsStage, wants: WantsContexts, judges: true},
		{Name: "tiers.Retried", run: (*ClientConn).retried, wants: wantsRetried, judges: true},
		{Name: "tiers.Gate", run: (*ClientConn).gateStage, judges: true},
		{Name: "tiers.Pixels", run: (*ClientConn).pixels, wants: WantsPixels, judges: true},
		{Name: "person.Recheck", run: (*ClientConn).checkApproved, judges: true},
		{Name: "person.Ask", run: (*ClientConn).asks, judges: true},
		// act: the stages that act, on a command the judges let through.
		{Name: "tiers.NavTo", run: (*ClientConn).prepare, wants: wantsNavTo},
		{Name: "creds.Secret", run: (*ClientConn).secret, wants: WantsSecret},
		{Name: "creds.LockGates", run: (*ClientConn).secretGates, wants: wantsLockGates},
		{Name: "rules.Fence", run: (*ClientConn).fence, wants: wantsFence},
		{Name: "core.Emulate", run: (*ClientConn).emulate, wants: WantsEmulate},
		{Name: "core.NeedsPage", run: (*ClientConn).needsPage},
		{Name: "core.ScreencastNote", run: (*ClientConn).screencastNote, wants: wantsScreencastNote},
		{Name: "person.DialogClaim", run: (*ClientConn).dialogClaim, wants: wantsDialog},
		{Name: "tiers.Worlds", run: (*ClientConn).worlds, wants: wantsWorlds},
		{Name: "tiers.RemoveScript", run: (*ClientConn).removeScriptStage, wants: wantsRemoveScript},
		{Name: "creds.Streams", run: (*ClientConn).streamsStage, wants: wantsStreams},
		{Name: "person.Brake", run: (*ClientConn).brakeStage, wants: WantsBrake},
		{Name: "core.Send", run: (*ClientConn).sendStage},
	}
	if len(CommandStages) > 64 {
		panic("relay: more than 64 command stages: the plans are 64-bit")
	}
	for i, s := range CommandStages {
		if s.arrival {
			arrivalStages |= 1 << i
		}
		if s.judges {
			judgingStages |= 1 << i
		}
	}
	// Every method interned so far gets its plan; lookupMethod gives the
	// later ones theirs.
	for _, m := range MethodTable {
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
	Name  string
	run   func(in *Instance, e *event) bool
	wants func(name string) bool // nil: every event
}

// eventStages is the events table (events.go says what each row does).
var EventStages []eventStage

func init() {
	EventStages = []eventStage{
		{Name: "tiers.FrameGuard", run: (*Instance).frameGuard, wants: isEvent("Page.screencastFrame")},
		{Name: "core.Screencast", run: (*Instance).screencast, wants: isEvent("Page.screencastFrame")},
		{Name: "core.PageTrack", run: (*Instance).pageTrack, wants: func(n string) bool {
			return strings.HasPrefix(n, "Page.") && n != "Page.screencastFrame"
		}},
		{Name: "core.Child", run: (*Instance).childOf},
		{Name: "tiers.ChildFrames", run: (*Instance).childFrames, wants: isEvent("Page.frameNavigated", "Page.frameDetached", "Page.frameStartedNavigating", "Page.frameRequestedNavigation")},
		{Name: "tiers.Requests", run: (*Instance).requests, wants: isEvent("Fetch.requestPaused", "Network.requestWillBeSent")},
		{Name: "tiers.BlindSources", run: (*Instance).blindSources, wants: isEvent("Debugger.scriptParsed", "Debugger.scriptFailedToParse", "CSS.styleSheetAdded")},
		{Name: "tiers.Blind", run: (*Instance).blindEvent},
		{Name: "core.RelayWorld", run: (*Instance).relayWorld, wants: func(n string) bool {
			return strings.HasPrefix(n, "Runtime.") || strings.HasPrefix(n, "Debugger.")
		}},
		{Name: "tiers.Guard", run: (*Instance).guardWorld, wants: func(n string) bool { return strings.HasPrefix(n, "Runtime.executionContext") }},
		{Name: "person.BrakePause", run: (*Instance).brakePause, wants: isEvent("Debugger.paused")},
		{Name: "rules.Backstop", run: (*Instance).backstopPause, wants: isEvent("Fetch.requestPaused")},
		{Name: "person.LetGoOn", run: (*Instance).letGoOn, wants: isEvent("Fetch.requestPaused", "Fetch.authRequired", "Debugger.paused")},
		{Name: "core.Session", run: (*Instance).sessionOf},
		{Name: "core.Children", run: (*Instance).children, wants: isEvent("Target.attachedToTarget", "Target.detachedFromTarget")},
		{Name: "person.BrakeChild", run: (*Instance).brakeChild, wants: isEvent("Target.attachedToTarget")},
		{Name: "rules.FenceChild", run: (*Instance).fenceChild, wants: isEvent("Target.attachedToTarget")},
		{Name: "tiers.ChildPage", run: (*Instance).childPage, wants: isEvent("Target.attachedToTarget")},
		{Name: "tiers.BlindChild", run: (*Instance).blindChild, wants: isEvent("Target.attachedToTarget")},
		{Name: "person.ResumeWaiting", run: (*Instance).resumeWaiting, wants: isEvent("Target.attachedToTarget")},
		{Name: "tiers.Withhold", run: (*Instance).withhold},
		{Name: "person.OwnDebugger", run: (*Instance).ownDebugger, wants: func(n string) bool { return strings.HasPrefix(n, "Debugger.") }},
		{Name: "browser.Downloads", run: (*Instance).downloads, wants: isEvent("Page.downloadWillBegin", "Page.downloadProgress")},
		{Name: "core.Count", run: (*Instance).countEvent},
		{Name: "creds.Redact", run: (*Instance).redact, wants: func(n string) bool { return creds.IsEvent([]byte(n)) }},
		{Name: "core.Deliver", run: (*Instance).deliverEvent},
	}
	if len(EventStages) > 64 {
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
	for i, s := range EventStages {
		if s.wants == nil || s.wants(e.name) {
			p |= 1 << i
		}
	}
	e.Plan = p
}

// runEvent runs e through the rows of its plan, in order, until one stops
// it.
func (in *Instance) runEvent(e *event) {
	for p := e.info.Plan; p != 0; p &= p - 1 {
		if !EventStages[bits.TrailingZeros64(p)].run(in, e) {
			return
		}
	}
}

// eventOrder lists the events table's stage names, top to bottom.
func EventOrder() []string {
	names := make([]string, len(EventStages))
	for i, s := range EventStages {
		names[i] = s.Name
	}
	return names
}

// setPlan computes m's plan: which rows of each table want it.
func setPlan(m *MethodInfo) {
	var p uint64
	for i, s := range CommandStages {
		if s.wants == nil || s.wants(m) {
			p |= 1 << i
		}
	}
	m.Plan = p
	p = 0
	for i, s := range ReplyStages {
		if s.wants == nil || s.wants(m) {
			p |= 1 << i
		}
	}
	m.ReplyPlan = p
}

// replyStage is one row of the replies table. run runs on the extension's
// read loop without the lock and reports whether the reply goes on to the
// next row: false when the row wrote what the client gets.
type ReplyStage struct {
	Name  string
	run   func(x *ExtConn, r *reply) bool
	wants func(m *MethodInfo) bool // nil: every method
}

// replyStages is the replies table (replies.go says what each row does).
// Set in the commands table's init, which computes the plans of both.
var ReplyStages []ReplyStage

func replyTable() []ReplyStage {
	return []ReplyStage{
		{Name: "tiers.KeepScript", run: (*ExtConn).keepScriptReply, wants: isMethod("Page.addScriptToEvaluateOnNewDocument")},
		{Name: "core.TapScript", run: (*ExtConn).tapScript, wants: func(m *MethodInfo) bool { return m.replay == replayScript }},
		{Name: "creds.StreamForget", run: (*ExtConn).streamForget, wants: isMethod("IO.read")},
		{Name: "tiers.WentBlind", run: (*ExtConn).wentBlind},
		{Name: "core.Error", run: (*ExtConn).replyError},
		{Name: "tiers.Scopes", run: (*ExtConn).scopes, wants: isMethod("Runtime.getProperties")},
		{Name: "tiers.History", run: (*ExtConn).history, wants: isMethod("Page.getNavigationHistory")},
		{Name: "tiers.SideEffect", run: (*ExtConn).sideEffect, wants: isMethod("Runtime.evaluate", "Runtime.callFunctionOn")},
		{Name: "creds.Results", run: (*ExtConn).credentialResult, wants: func(m *MethodInfo) bool { return creds.IsResult(m.Name) }},
		{Name: "creds.StreamPiece", run: (*ExtConn).streamPiece, wants: isMethod("IO.read")},
		{Name: "core.Result", run: (*ExtConn).replyResult},
	}
}

// isMethod wants the methods named.
func isMethod(names ...string) func(*MethodInfo) bool {
	return func(m *MethodInfo) bool { return slices.Contains(names, m.Name) }
}

// runReply runs r through the rows of its method's plan, in order, until
// one writes what the client gets.
func (x *ExtConn) runReply(r *reply) {
	for p := r.pc.M.ReplyPlan; p != 0; p &= p - 1 {
		if !ReplyStages[bits.TrailingZeros64(p)].run(x, r) {
			return
		}
	}
}

// replyOrder lists the replies table's stage names, top to bottom.
func ReplyOrder() []string {
	names := make([]string, len(ReplyStages))
	for i, s := range ReplyStages {
		names[i] = s.Name
	}
	return names
}

// runCommand runs k through the rows of plan, in order, until one answers,
// refuses or holds it. It reports whether k passed every row.
func (c *ClientConn) runCommand(k *Cmd, plan uint64) bool {
	for p := plan; p != 0; p &= p - 1 {
		if !CommandStages[bits.TrailingZeros64(p)].run(c, k) {
			return false
		}
	}
	return true
}

// commandOrder lists the commands table's stage names, top to bottom.
func CommandOrder() []string {
	names := make([]string, len(CommandStages))
	for i, s := range CommandStages {
		names[i] = s.Name
	}
	return names
}
