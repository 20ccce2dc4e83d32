package core

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

// dialogOpened records the dialog t now shows.
func (st *State) dialogOpened(t *Tab, params []byte) {
	in := st.Inst
	if t.Dialog != nil {
		t.Dialog.Timer.Stop()
	}
	st.nextDialog++
	d := &person.Dialog{DialogStatus: person.OpenedDialog(st.nextDialog, params, time.Now())}
	t.Dialog = d
	id := d.ID
	d.Timer = time.AfterFunc(in.Srv.Cfg.DialogTimeout, func() { in.answerDialogByDefault(t, id) })
	st.notify()
	detail := d.Type + " on " + api.Origin(t.DocURL)
	if t.Acc.Level != AccessBlind {
		detail += ": " + person.ClipText(in.ScrubString(d.Message), 100)
	}
	in.Observe(Event{Actor: ActorRelay, Kind: KindDialog, Target: t.TargetID, Outcome: OutcomeOK, Detail: "opened " + detail})
}

// dialogClosed records that t's dialog closed, and who answered it.
func (st *State) dialogClosed(t *Tab, params []byte) {
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
	st.Inst.Srv.Cfg.Metrics.dialogs[by].Inc()
	st.Inst.Observe(Event{Actor: ActorRelay, Kind: KindDialog, Target: t.TargetID, Outcome: OutcomeOK, Detail: d.Type + " " + answer + " by " + who, By: who})
}

// dialogStatus is what Status says of t's dialog: nothing of a blind tab.
func dialogStatus(in *Instance, t *Tab) *DialogStatus {
	if t.Dialog == nil || t.Acc.Level == AccessBlind {
		return nil
	}
	s := t.Dialog.DialogStatus
	s.Message = in.ScrubString(s.Message)
	s.DefaultPrompt = in.ScrubString(s.DefaultPrompt)
	return &s
}

// answerByPerson answers the dialog id (0: whichever) that tab tabID
// shows, on behalf of the person by (Instance.AnswerDialog).
func answerByPerson(in *Instance, tabID, id int64, accept bool, promptText, by string) error {
	if by == "" {
		by = "a person"
	}
	return in.answerDialog(tabID, id, accept, promptText, person.DialogByPerson, by)
}

func (in *Instance) answerDialog(tabID, id int64, accept bool, promptText, kind, by string) error {
	if in.Wedged.Load() {
		return ErrWedged
	}
	st := in.Lock()
	t := st.Tabs[tabID]
	if t == nil {
		in.Unlock()
		return ErrNoTab
	}
	d := t.Dialog
	switch {
	case d == nil || (id != 0 && d.ID != id):
		in.Unlock()
		return ErrNoDialog
	case d.By != "" && kind != person.DialogByTimeout:
		in.Unlock()
		return fmt.Errorf("%w by %s", ErrDialogAnswered, d.Answerer())
	case kind == person.DialogByPerson && t.Acc.Level == AccessBlind:
		in.Unlock()
		return fmt.Errorf("%w: %s", ErrHidden, t.Acc.Why)
	}
	d.By, d.AnsweredBy = kind, by
	x := st.Ext
	st.notify()
	in.Unlock()
	err := errors.New("extension not connected")
	if x != nil {
		ctx, cancel := context.WithTimeout(context.Background(), in.Srv.Cfg.CallTimeout)
		params := map[string]any{"accept": accept}
		if accept && d.Type == "prompt" {
			params["promptText"] = promptText
		}
		_, err = x.SendCommand(ctx, t.Id, "", "Page.handleJavaScriptDialog", params)
		cancel()
	}
	if err != nil {
		in.Lock()
		if t.Dialog == d && d.By == kind {
			d.By, d.AnsweredBy = "", "" // let another answer
		}
		in.Unlock()
		return fmt.Errorf("answering the dialog: %w", err)
	}
	return nil
}

// answerDialogByDefault answers dialog id of t, nobody having answered it
// in time: alert and beforeunload accepted, confirm and prompt dismissed.
func (in *Instance) answerDialogByDefault(t *Tab, id int64) {
	in.Lock()
	d := t.Dialog
	in.Unlock()
	if d == nil || d.ID != id {
		return
	}
	accept := person.AcceptedByDefault(d.Type)
	if err := in.answerDialog(t.Id, id, accept, "", person.DialogByTimeout, "the relay, after "+in.Srv.Cfg.DialogTimeout.String()); err != nil {
		in.Log.Debug("answering a dialog nobody answered", "err", err)
	}
}

// claimDialog is the automation's answer to t's dialog: it reports the
// refusal when someone answered first.
func (st *State) claimDialog(t *Tab) (Decision, bool) {
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

// DialogHooks is what the core asks of the dialogs (core.SetDialogs).
func DialogHooks() Dialogs {
	return Dialogs{StatusLocked: dialogStatus, Answer: answerByPerson}
}

// Dialogs (person.Dialogs): a dialog the tab's own session says opens or
// closes.
func (in *Instance) Dialogs(e *EventMsg) bool {
	if e.Sid != nil {
		return true
	}
	switch string(e.Method) {
	case "Page.javascriptDialogOpening":
		e.State.dialogOpened(e.Tab, e.Params)
	case "Page.javascriptDialogClosed":
		e.State.dialogClosed(e.Tab, e.Params)
	}
	return true
}

// WantsDialog: the answer to a JavaScript dialog.
func WantsDialog(m *MethodInfo) bool { return m.Name == "Page.handleJavaScriptDialog" }

// DialogClaim (person.DialogClaim): the first answer wins: the person's
// in the live view, the automation's, or the relay's when nobody answers.
func (c *ClientConn) DialogClaim(k *Cmd) bool {
	if k.Route.Via.Tab == nil || k.Route.Via.Child {
		return true
	}
	st := c.Inst.Lock()
	d, ok := st.claimDialog(k.Route.Via.Tab)
	c.Inst.Unlock()
	if !ok {
		return c.Refuse(k, d)
	}
	return true
}
