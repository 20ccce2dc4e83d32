package relay

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/person"
)

// JavaScript dialogs.
//
// A page's alert, confirm, prompt or beforeunload blocks its tab until
// something answers it, and does not show in a screencast. The relay keeps
// Page enabled on every tab it attaches, so it hears of each dialog
// (Page.javascriptDialogOpening) whoever else listens, and keeps it with
// the tab until it closes: the live view shows it and lets the person
// answer (AnswerDialog); the automation answers it as it always has
// (Page.handleJavaScriptDialog). The first answer wins: the other gets an
// error naming who answered. When nothing answers within DialogTimeout the
// relay answers by type (alert and beforeunload accepted, confirm and
// prompt dismissed), so that no tab hangs for good. Every dialog, its
// answer and who gave it go to the audit log.

// Errors of AnswerDialog.
var (
	ErrNoDialog       = api.ErrNoDialog
	ErrDialogAnswered = api.ErrDialogAnswered
)

// DialogStatus is a dialog a tab shows.
type DialogStatus = person.DialogStatus

// dialogOpened records the dialog t now shows.
func (st *state) dialogOpened(t *tab, params []byte) {
	in := st.in
	if t.Dialog != nil {
		t.Dialog.Timer.Stop()
	}
	st.nextDialog++
	d := &person.Dialog{DialogStatus: person.OpenedDialog(st.nextDialog, params, time.Now())}
	t.Dialog = d
	id := d.ID
	d.Timer = time.AfterFunc(in.srv.cfg.DialogTimeout, func() { in.answerDialogByDefault(t, id) })
	st.notify()
	detail := d.Type + " on " + api.Origin(t.docURL)
	if t.acc.Level != accessBlind {
		detail += ": " + person.ClipText(in.scrubString(d.Message), 100)
	}
	in.observe(Event{Actor: ActorRelay, Kind: KindDialog, Target: t.targetID, Outcome: OutcomeOK, Detail: "opened " + detail})
}

// dialogClosed records that t's dialog closed, and who answered it.
func (st *state) dialogClosed(t *tab, params []byte) {
	d := t.Dialog
	if d == nil {
		return
	}
	t.Dialog = nil
	d.Timer.Stop()
	by := d.By
	if by == "" {
		by = person.DialogByPage
	}
	answer := "dismissed"
	if string(wire.Field(params, "result")) == "true" {
		answer = "accepted"
	}
	who := by
	if d.AnsweredBy != "" {
		who = d.AnsweredBy
	}
	st.notify()
	st.in.srv.cfg.Metrics.dialogs[by].Inc()
	st.in.observe(Event{Actor: ActorRelay, Kind: KindDialog, Target: t.targetID, Outcome: OutcomeOK, Detail: d.Type + " " + answer + " by " + who, By: who})
}

// dialogStatus is what Status says of t's dialog: nothing of a blind tab.
func (t *tab) dialogStatus(in *Instance) *DialogStatus {
	if t.Dialog == nil || t.acc.Level == accessBlind {
		return nil
	}
	s := t.Dialog.DialogStatus
	s.Message = in.scrubString(s.Message)
	s.DefaultPrompt = in.scrubString(s.DefaultPrompt)
	return &s
}

// AnswerDialog answers the dialog id (0: whichever) that tab tabID shows,
// on behalf of the person by.
func (in *Instance) AnswerDialog(tabID, id int64, accept bool, promptText, by string) error {
	if by == "" {
		by = "a person"
	}
	return in.answerDialog(tabID, id, accept, promptText, person.DialogByPerson, by)
}

func (in *Instance) answerDialog(tabID, id int64, accept bool, promptText, kind, by string) error {
	if in.wedged.Load() {
		return ErrWedged
	}
	st := in.lock()
	t := st.tabs[tabID]
	if t == nil {
		in.unlock()
		return ErrNoTab
	}
	d := t.Dialog
	switch {
	case d == nil || (id != 0 && d.ID != id):
		in.unlock()
		return ErrNoDialog
	case d.By != "" && kind != person.DialogByTimeout:
		in.unlock()
		return fmt.Errorf("%w by %s", ErrDialogAnswered, d.Answerer())
	case kind == person.DialogByPerson && t.acc.Level == accessBlind:
		in.unlock()
		return fmt.Errorf("%w: %s", ErrHidden, t.acc.Why)
	}
	d.By, d.AnsweredBy = kind, by
	x := st.ext
	st.notify()
	in.unlock()
	err := errors.New("extension not connected")
	if x != nil {
		ctx, cancel := context.WithTimeout(context.Background(), in.srv.cfg.CallTimeout)
		params := map[string]any{"accept": accept}
		if accept && d.Type == "prompt" {
			params["promptText"] = promptText
		}
		_, err = x.sendCommand(ctx, t.id, "", "Page.handleJavaScriptDialog", params)
		cancel()
	}
	if err != nil {
		in.lock()
		if t.Dialog == d && d.By == kind {
			d.By, d.AnsweredBy = "", "" // let another answer
		}
		in.unlock()
		return fmt.Errorf("answering the dialog: %w", err)
	}
	return nil
}

// answerDialogByDefault answers dialog id of t, nobody having answered it
// in time: alert and beforeunload accepted, confirm and prompt dismissed.
func (in *Instance) answerDialogByDefault(t *tab, id int64) {
	in.lock()
	d := t.Dialog
	in.unlock()
	if d == nil || d.ID != id {
		return
	}
	accept := person.AcceptedByDefault(d.Type)
	if err := in.answerDialog(t.id, id, accept, "", person.DialogByTimeout, "the relay, after "+in.srv.cfg.DialogTimeout.String()); err != nil {
		in.log.Debug("answering a dialog nobody answered", "err", err)
	}
}

// claimDialog is the automation's answer to t's dialog: it reports the
// refusal when someone answered first.
func (st *state) claimDialog(t *tab) (Decision, bool) {
	d := t.Dialog
	if d == nil {
		return Decision{}, true // Chrome says there is none
	}
	dec, ok := d.Claim()
	if ok {
		st.notify()
	}
	return dec, ok
}
