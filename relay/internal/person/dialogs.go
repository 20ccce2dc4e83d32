package person

import (
	"time"

	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/relay/internal/api"
)

// JavaScript dialogs: what the relay keeps of a dialog a tab shows, who
// may answer it, and the answer it gets when nobody does in time.

// DialogStatus is a dialog a tab shows (api.DialogStatus).
type DialogStatus = api.DialogStatus

// Dialog is the dialog a tab shows. Its keeper guards it (the relay: with
// the instance's mutex).
type Dialog struct {
	DialogStatus
	By    string      // who answered: one of the DialogBy constants, "" while open
	Timer *time.Timer // answers it by default when nobody does in time
}

// Answerer names who answered d, as a later answer's refusal says it: the
// person by name, or the automation, the timeout or the page.
func (d *Dialog) Answerer() string {
	if d.By == api.DialogByPerson {
		return d.AnsweredBy
	}
	return d.By
}

// Claim is the automation's answer to d: the first answer wins, so it is
// refused when someone answered first. It reports false, with the
// refusal, when so.
func (d *Dialog) Claim() (api.Decision, bool) {
	if d.By != "" {
		return api.Decision{Verdict: api.Deny, Rule: api.RuleDialogAnswered, Message: "cdprelay: the dialog was already answered by " + d.Answerer()}, false
	}
	d.By, d.AnsweredBy = api.DialogByAutomation, "the automation"
	return api.Decision{}, true
}

// OpenedDialog is the dialog id that Page.javascriptDialogOpening's
// params describe, opened at at.
func OpenedDialog(id int64, params []byte, at time.Time) DialogStatus {
	return DialogStatus{
		ID:            id,
		Type:          string(wire.StringField(params, "type")),
		Message:       string(wire.StringField(params, "message")),
		DefaultPrompt: string(wire.StringField(params, "defaultPrompt")),
		OpenedAt:      at,
	}
}

// AcceptedByDefault reports how a dialog of type typ is answered when
// nobody answers it in time: alert and beforeunload accepted, confirm and
// prompt dismissed, so that no tab hangs for good.
func AcceptedByDefault(typ string) bool {
	return typ == "alert" || typ == "beforeunload"
}
