package relay

import (
	"strings"

	"github.com/cdprelay/cdprelay/relay/internal/attach"
	"github.com/cdprelay/cdprelay/relay/internal/away"
	"github.com/cdprelay/cdprelay/relay/internal/browser"
	"github.com/cdprelay/cdprelay/relay/internal/core"
	"github.com/cdprelay/cdprelay/relay/internal/creds"
	"github.com/cdprelay/cdprelay/relay/internal/handles"
	"github.com/cdprelay/cdprelay/relay/internal/lines"
	"github.com/cdprelay/cdprelay/relay/internal/person"
	"github.com/cdprelay/cdprelay/relay/internal/replay"
	"github.com/cdprelay/cdprelay/relay/internal/rules"
	"github.com/cdprelay/cdprelay/relay/internal/switches"
	"github.com/cdprelay/cdprelay/relay/internal/targets"
	tier "github.com/cdprelay/cdprelay/relay/internal/tiers"
)

// The order: what the relay does with each message, top to bottom, in
// three tables, one per path: a client's command (commands), a tab's event
// (events), Chrome's reply to a client's command (replies). Each row is a
// stage: one function, named "concern.Name" (the concern that owns it, the
// step it takes). The order of the rows is a security contract, pinned by
// TestCommandOrder, TestEventOrder and TestReplyOrder (the names) and by
// the behavioural pins of order_*_test.go (each adjacency that matters).
// The core runs the rows (relay/internal/core, order.go) and knows none of
// them by name: the tables are handed to it once, here, before any
// instance exists.
//
// A row with Wants is called only for the methods or events it wants,
// decided once per method, so the per-message path calls nothing for a
// stage that does not care.
func init() {
	core.AddLevels(targets.Emulations())
	core.AddEmulations(browser.VersionEmulations())
	core.AddEmulations(browser.WindowEmulations())
	core.AddEmulations(browser.DownloadEmulations())
	core.AddOutcomeHooks(browser.DownloadOutcomes())
	// The backstop first: its Attaching puts the fence in place before
	// anything else reaches a tab, and its PolicyChanged brings the fences
	// in line before the other stages hear of the change.
	core.AddLifecycle(rules.Backstop())
	core.AddLifecycle(rules.NetFence())
	core.AddLifecycle(creds.Lifecycle())
	core.AddLifecycle(person.Lifecycle())
	core.AddLifecycle(person.BrakeLifecycle())
	core.AddLifecycle(tier.Lifecycle())
	core.SetServices(core.Services{
		Scrubber:  creds.Scrubber(),
		Dialogs:   person.DialogHooks(),
		Authority: person.AuthorityHooks(),
		Backstop:  rules.Answers(),
		Tiers:     tier.Hooks(),
		Refusals:  browser.Refusals(),
		Away:      away.Hooks(),
		Lines:     lines.Hooks(),
		Switches:  switches.Hooks(),
		Attacher:  attach.Hooks(),
	})
	core.SetOrder(commands(), events(), replies())
}

// commands is the commands table: the judging rows (Judges) first, which
// decide and change nothing of the tab, then the rows that act on a
// command the judges let through. What each row does: pipeline.go and
// forward.go in the core, and the stage's own file.
//
// Every command a client sends runs through these stages, in this order,
// and stops at the first that answers it. Each stage is one or more rows
// of the table below, named there; a row is called only for the methods
// it wants. The order is a security contract: nothing that a stage
// refuses reaches a later one, and nothing reaches the tab that an
// earlier stage refused. The stages up to ask judge (decide): they change
// nothing of the tab, so a command they refuse, or a person denies, leaves
// it as it was; the stages from prepare on act (act), on a command that
// goes on.
//
//  1. limits   the client's command rate and its commands in flight;
//  2. running  a person's Stop: while it is in force every command is
//     refused (the person's stop.go);
//  3. route    the session the command names, the tab that executes it
//     and the session its reply names, resolved once under one lock; the
//     params that later stages judge or act on, decoded once (cdp/args.go);
//  4. in line  a command for a tab whose earlier command is held (for a
//     person's approval, or while a secret is typed) waits behind it, and
//     goes through the stages after this one when its turn comes
//     (package lines);
//  5. policy   the operator's method rules and URL fence, on the decoded
//     URL (Policy), then the relay's own rules (package rules);
//  6. access   what the tab lets automation do, by where it is and who
//     holds it: blind, read-only or full (package tiers, by the access
//     the core holds: its access.go); and the execution contexts the
//     command names, judged by what they are now (the tiers' contexts.go);
//  7. ask      a command the policy asks a person about is held for their
//     approval (package person; the holding is package lines');
//  8. prepare  what a verdict does to the tab: a navigation to a stricter
//     site takes out of Chrome what may not run there (package tiers);
//  9. secret   a secret typed by reference, on its own origins only
//     (package creds); while one is hidden, what the relay could not hide
//     it in, and a page whose password field holds one (package creds);
//  10. fence   the navigation backstop's share of the tab's Fetch domain
//     (package rules, backstop.go);
//  11. emulate browser-level methods the relay answers itself (the core's
//     emulate.go, and the stages' emulations);
//  12. forward everything else, to the tab, params as the client's
//     original bytes (or as a stage rewrote them). A Stop that comes
//     after the running stage still catches the command here: the
//     extension connection does not take it (core.Upstream's Forward).
//
// Then observe: one step, for every verdict, that counts the command and
// its outcome and records what the audit log keeps.
//
// The relay's own commands go through the same stages. A command taken off
// a line (package lines) runs from running on, as if it had just arrived.
// A setting sent again after a resume (package away's replay.go) is judged
// by policy and access as they are now (decide), an ask refusing it, and
// its params rewritten by the fence as a client's are (the rows marked
// Replays); what they refuse is not sent, and the client is told.
func commands() []core.CmdStage {
	return []core.CmdStage{
		{Name: "core.Limits", Run: (*core.ClientConn).Limits, Arrival: true},
		{Name: "core.Running", Run: (*core.ClientConn).Running},
		{Name: "core.Route", Run: (*core.ClientConn).Route},
		{Name: "core.Line", Run: lines.InLine, Arrival: true}, // the core's lines, a part of it (package lines)
		// decide: the judging stages.
		{Name: "rules.Operator", Run: rules.Operator, Judges: true},
		{Name: "rules.Relay", Run: rules.RelayRules, Judges: true},
		{Name: "creds.Restore", Run: creds.RestoreParams, Wants: creds.WantsRestore, Judges: true},
		{Name: "rules.Uploads", Run: rules.Uploads, Wants: rules.WantsUploads, Judges: true},
		{Name: "person.StopRules", Run: person.StopRulesStage, Wants: person.WantsStopRules, Judges: true},
		{Name: "rules.TargetOnTab", Run: rules.TargetOnTab, Wants: rules.WantsTargetOnTab, Judges: true},
		{Name: "tiers.Navigate", Run: tier.NavigateTo, Wants: tier.WantsNavigateTo, Judges: true},
		{Name: "tiers.Checks", Run: tier.TierStage, Judges: true},
		{Name: "tiers.StandIn", Run: tier.StandIn, Judges: true},
		{Name: "tiers.FrameTree", Run: tier.FrameTree, Wants: tier.WantsFrameTree, Judges: true},
		{Name: "tiers.Contexts", Run: tier.ContextsStage, Wants: tier.WantsContexts, Judges: true},
		{Name: "tiers.Retried", Run: tier.Retried, Wants: tier.WantsRetried, Judges: true},
		{Name: "tiers.Gate", Run: tier.GateStage, Judges: true},
		{Name: "tiers.Pixels", Run: tier.Pixels, Wants: tier.WantsPixels, Judges: true},
		{Name: "person.Recheck", Run: person.CheckApproved, Judges: true},
		{Name: "person.Ask", Run: person.Asks, Judges: true},
		// act: the stages that act, on a command the judges let through.
		{Name: "tiers.NavTo", Run: tier.Prepare, Wants: tier.WantsNavTo},
		{Name: "creds.Secret", Run: creds.Secret, Wants: creds.WantsSecret},
		{Name: "creds.LockGates", Run: creds.SecretGates, Wants: creds.WantsLockGates},
		{Name: "rules.Fence", Run: rules.Fence, Wants: rules.WantsFence, Replays: true},
		{Name: "core.Emulate", Run: (*core.ClientConn).Emulate, Wants: core.WantsEmulate},
		{Name: "core.NeedsPage", Run: (*core.ClientConn).NeedsPage},
		{Name: "core.ScreencastNote", Run: handles.ScreencastNote, Wants: handles.WantsScreencastNote},
		{Name: "person.DialogClaim", Run: person.DialogClaim, Wants: person.WantsDialog},
		{Name: "tiers.Worlds", Run: tier.Worlds, Wants: tier.WantsWorlds},
		{Name: "tiers.RemoveScript", Run: tier.RemoveScriptStage, Wants: tier.WantsRemoveScript},
		{Name: "creds.Streams", Run: creds.StreamsStage, Wants: creds.WantsStreams},
		{Name: "person.Brake", Run: person.BrakeStage, Wants: person.WantsBrake},
		{Name: "core.Send", Run: (*core.ClientConn).SendStage},
	}
}

// events is the events table; its rows run with the instance lock held
// and must not block or call the extension (events.go in the core says
// what each row does).
func events() []core.EventStage {
	return []core.EventStage{
		{Name: "tiers.FrameGuard", Run: tier.FrameGuard, Wants: core.IsEvent("Page.screencastFrame")},
		{Name: "core.Screencast", Run: handles.Screencast, Wants: core.IsEvent("Page.screencastFrame")}, // the live view's, a part of the core (package handles)
		{Name: "creds.Frames", Run: creds.WithholdFrame, Wants: core.IsEvent("Page.screencastFrame")},
		{Name: "core.PageTrack", Run: (*core.Instance).PageTrack, Wants: func(n string) bool {
			return strings.HasPrefix(n, "Page.") && n != "Page.screencastFrame"
		}},
		{Name: "person.Dialogs", Run: person.Dialogs, Wants: core.IsEvent("Page.javascriptDialogOpening", "Page.javascriptDialogClosed")},
		{Name: "core.Child", Run: (*core.Instance).ChildOf},
		{Name: "tiers.Frames", Run: tier.Frames, Wants: core.IsEvent("Page.frameNavigated", "Page.frameDetached", "Page.frameStartedNavigating", "Page.frameRequestedNavigation")},
		{Name: "tiers.Requests", Run: tier.Requests, Wants: core.IsEvent("Fetch.requestPaused", "Network.requestWillBeSent")},
		{Name: "tiers.BlindSources", Run: tier.BlindSources, Wants: core.IsEvent("Debugger.scriptParsed", "Debugger.scriptFailedToParse", "CSS.styleSheetAdded")},
		{Name: "tiers.Blind", Run: tier.BlindEvent},
		{Name: "core.RelayWorld", Run: (*core.Instance).RelayWorld, Wants: func(n string) bool {
			return strings.HasPrefix(n, "Runtime.") || strings.HasPrefix(n, "Debugger.")
		}},
		{Name: "tiers.Guard", Run: tier.GuardWorld, Wants: func(n string) bool { return strings.HasPrefix(n, "Runtime.executionContext") }},
		{Name: "person.BrakePause", Run: person.BrakePause, Wants: core.IsEvent("Debugger.paused")},
		{Name: "rules.Backstop", Run: rules.Pause, Wants: core.IsEvent("Fetch.requestPaused")},
		{Name: "person.LetGoOn", Run: person.LetGoOn, Wants: core.IsEvent("Fetch.requestPaused", "Fetch.authRequired", "Debugger.paused")},
		{Name: "core.Session", Run: (*core.Instance).SessionOf},
		{Name: "core.Children", Run: (*core.Instance).Children, Wants: core.IsEvent("Target.attachedToTarget", "Target.detachedFromTarget")},
		{Name: "person.BrakeChild", Run: person.BrakeChild, Wants: core.IsEvent("Target.attachedToTarget")},
		{Name: "rules.FenceChild", Run: rules.FenceChild, Wants: core.IsEvent("Target.attachedToTarget")},
		{Name: "tiers.ChildPage", Run: tier.ChildPage, Wants: core.IsEvent("Target.attachedToTarget")},
		{Name: "tiers.BlindChild", Run: tier.BlindChild, Wants: core.IsEvent("Target.attachedToTarget")},
		{Name: "person.ResumeWaiting", Run: person.ResumeWaiting, Wants: core.IsEvent("Target.attachedToTarget")},
		{Name: "tiers.Withhold", Run: tier.Withhold},
		{Name: "person.OwnDebugger", Run: person.OwnDebugger, Wants: func(n string) bool { return strings.HasPrefix(n, "Debugger.") }},
		{Name: "browser.Downloads", Run: browser.Downloads, Wants: core.IsEvent("Page.downloadWillBegin", "Page.downloadProgress")},
		{Name: "core.Count", Run: (*core.Instance).CountEvent},
		{Name: "creds.Redact", Run: creds.RedactEvent, Wants: func(n string) bool { return creds.IsEvent([]byte(n)) }},
		{Name: "core.Deliver", Run: (*core.Instance).DeliverEvent},
	}
}

// replies is the replies table; its rows run on the extension's read loop
// without the lock (replies.go in the core says what each row does).
func replies() []core.ReplyStage {
	return []core.ReplyStage{
		{Name: "tiers.KeepScript", Run: tier.KeepScriptReply, Wants: core.IsMethod("Page.addScriptToEvaluateOnNewDocument")},
		{Name: "core.TapScript", Run: (*core.Instance).TapScript, Wants: func(m *core.MethodInfo) bool { return m.Replay == replay.Script }},
		{Name: "creds.StreamForget", Run: creds.StreamForget, Wants: core.IsMethod("IO.read")},
		{Name: "tiers.WentBlind", Run: tier.WentBlind},
		{Name: "core.Error", Run: (*core.Instance).ReplyError},
		{Name: "tiers.Scopes", Run: tier.Scopes, Wants: core.IsMethod("Runtime.getProperties")},
		{Name: "tiers.History", Run: tier.History, Wants: core.IsMethod("Page.getNavigationHistory")},
		{Name: "tiers.SideEffect", Run: tier.SideEffect, Wants: core.IsMethod("Runtime.evaluate", "Runtime.callFunctionOn")},
		{Name: "creds.Results", Run: creds.CredentialResult, Wants: func(m *core.MethodInfo) bool { return creds.IsResult(m.Name) }},
		{Name: "creds.StreamPiece", Run: creds.StreamPiece, Wants: core.IsMethod("IO.read")},
		{Name: "core.Result", Run: (*core.Instance).ReplyResult},
	}
}
