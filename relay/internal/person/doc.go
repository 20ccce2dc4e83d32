// Package person is the relay's stage "the person in charge": what of a
// command a person is asked about, what the card shows them, the look
// again before an approved command acts, and the JavaScript dialogs a
// tab shows.
//
// Its rows in the facade's order (relay/order.go):
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
//   - person.Dialogs (Dialogs, an event row): a tab's dialog opens and
//     closes.
//
// What it hands the core besides its rows: the dialogs' status and a
// person's answer from the live view (DialogHooks, core.SetDialogs). What
// it keeps per tab (the dialog), per client (approved presses) and in the
// state (the dialogs' numbers) is in its slots (slots.go).
//
// The person's authority itself is the core's, because every part of the
// relay honours it: the Stop and what it undoes, the held commands and
// their lines, the approvals and the navigation ask, who holds a tab. This
// package asks the core to hold a command (core.State.HeldInLine,
// core.State.AskPerson) and never decides for another concern.
//
// The plain data (the card's words, what is asked, a dialog and its
// claim) needs no instance: describe.go, approvals.go, dialogs.go, with
// table tests.
//
// It imports the core, the shared vocabulary (api) and internal/wire. It
// must not import package relay (the facade) nor another stage's package:
// imports run from the facade to the stages to the core, never back.
package person
