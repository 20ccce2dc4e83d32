// Package person is the relay's stage "the person in charge": the Stop
// and Resume and what a Stop undoes (stop.go, stopundo.go), the brake on
// script that keeps a page busy (brake.go), a person taking over a tab
// (control.go), what of a command a person is asked about, what the card
// shows them, the look again before an approved command acts, and the
// JavaScript dialogs a tab shows.
//
// Its rows in the facade's order (relay/order.go):
//   - person.StopRules (StopRulesStage, stopundo.go): what a Stop could
//     not undo or end (virtual time, blackboxing, a call under a
//     side-effect check) is refused, and the relay's own Debugger is not
//     the client's;
//   - person.Recheck (CheckApproved, recheck.go): a command a person
//     approved, whose card named what it acts on, is looked at again
//     before it goes on, and refused if the page changed there; a mouse
//     release must land where the approved press did;
//   - person.Ask (Asks, asks.go): a command the policy asks about, or one
//     that may submit a form when that is asked, is held for a person,
//     after a look at the page for input (probe.go), so that the card
//     names what it acts on (Description, describe.go);
//   - person.DialogClaim (DialogClaim, tabdialogs.go): the automation's
//     answer to a dialog is refused when someone answered first;
//   - person.Brake (BrakeStage, brakerows.go): a script command gets the
//     brake's bound on its run;
//   - person.Dialogs (Dialogs, an event row): a tab's dialog opens and
//     closes;
//   - person.BrakePause, person.LetGoOn, person.BrakeChild,
//     person.ResumeWaiting, person.OwnDebugger (event rows,
//     brakerows.go): the relay's own debugger's pauses, what nobody may
//     answer while stopped, a new frame's brake, and the client's own
//     Debugger kept apart from the brake's.
//
// What it hands the core besides its rows: the Stop, the Resume and a
// take-over (AuthorityHooks, core.Services.Authority), the dialogs' status and
// a person's answer from the live view (DialogHooks, core.Services.Dialogs),
// and what it hears of a tab's life (Lifecycle, BrakeLifecycle). What it
// keeps per instance (the brakes, what a Stop undid), per tab (the
// dialog), per client (approved presses) and in the state (the dialogs'
// numbers, and what is shown to a person for their answer: asking.go) is
// in its slots (slots.go).
//
// What every part of the relay honours is the core's data: whether the
// automation is stopped (core.Instance.IsStopped, core.State.StoppedBy),
// who holds a tab (core.Tab.Control), the held commands and their lines,
// and the document requests held. This package asks the core to hold a
// command (lines.Hold), shows it to a person and carries out
// their answer (asking.go, navask.go), and never decides for another
// concern.
//
// The plain data (the card's words, what is asked, a dialog and its
// claim) needs no instance: describe.go, approvals.go, dialogs.go, with
// table tests.
//
// It imports the core, the service over it that looks at a page (look),
// the shared vocabulary (api), what the relay knows of the protocol (cdp),
// the sockets' buffers (link) and internal/wire. It must not import package relay (the facade) nor another stage's package:
// imports run from the facade to the stages to the core, never back.
package person
