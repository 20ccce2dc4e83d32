package person

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/core"
)

// JavaScript dialogs.
//
// A page's alert, confirm, prompt or beforeunload blocks its tab until
// something answers it, and does not show in a screencast. The relay keeps
// Page enabled on every tab it attaches, so it hears of each dialog
// (Page.javascriptDialogOpening) whoever else listens, and keeps it with
// the tab until it closes: the live view shows it and lets the person
// answer (core.Instance.AnswerDialog); the automation answers it as it always has
// (Page.handleJavaScriptDialog). The first answer wins: the other gets an
// error naming who answered. When nothing answers within DialogTimeout the
// relay answers by type (alert and beforeunload accepted, confirm and
// prompt dismissed), so that no tab hangs for good. Every dialog, its
// answer and who gave it go to the audit log.

// dialogOpened records the dialog t now shows.
func dialogOpened(st *core.State, t *core.Tab, params []byte) {
	in := st.Inst
	if tabSlot.Of(t).dialog != nil {
		tabSlot.Of(t).dialog.Timer.Stop()
	}
	stateSlot.Of(st).nextDialog++
	d := &Dialog{DialogStatus: OpenedDialog(stateSlot.Of(st).nextDialog, params, time.Now())}
	tabSlot.Of(t).dialog = d
	id := d.ID
	d.Timer = time.AfterFunc(in.Srv.Cfg.DialogTimeout, func() { answerDialogByDefault(in, t, id) })
	st.Notify()
	detail := d.Type + " on " + api.Origin(t.DocURL)
	if t.Acc.Level != api.Blind {
		detail += ": " + ClipText(in.ScrubString(d.Message), 100)
	}
	in.Observe(core.Event{Actor: api.ActorRelay, Kind: api.KindDialog, Target: t.TargetID, Outcome: api.OutcomeOK, Detail: "opened " + detail})
}

// dialogClosed records that t's dialog closed, and who answered it.
func dialogClosed(st *core.State, t *core.Tab, params []byte) {
	d := tabSlot.Of(t).dialog
	if d == nil {
		return
	}
	tabSlot.Of(t).dialog = nil
	d.Timer.Stop()
	by := d.By
	if by == "" {
		by = api.DialogByPage
	}
	answer := "dismissed"
	if string(wire.Field(params, "result")) == "true" {
		answer = "accepted"
	}
	who := by
	if d.AnsweredBy != "" {
		who = d.AnsweredBy
	}
	st.Notify()
	st.Inst.Srv.Cfg.Metrics.DialogAnswers[by].Inc()
	st.Inst.Observe(core.Event{Actor: api.ActorRelay, Kind: api.KindDialog, Target: t.TargetID, Outcome: api.OutcomeOK, Detail: d.Type + " " + answer + " by " + who, By: who})
}

// dialogStatus is what Status says of t's dialog: nothing of a blind tab.
func dialogStatus(in *core.Instance, t *core.Tab) *api.DialogStatus {
	if tabSlot.Of(t).dialog == nil || t.Acc.Level == api.Blind {
		return nil
	}
	s := tabSlot.Of(t).dialog.DialogStatus
	s.Message = in.ScrubString(s.Message)
	s.DefaultPrompt = in.ScrubString(s.DefaultPrompt)
	return &s
}

// answerByPerson answers the dialog id (0: whichever) that tab tabID
// shows, on behalf of the person by (Instance.AnswerDialog).
func answerByPerson(in *core.Instance, tabID, id int64, accept bool, promptText, by string) error {
	if by == "" {
		by = "a person"
	}
	return answerDialog(in, tabID, id, accept, promptText, api.DialogByPerson, by)
}

func answerDialog(in *core.Instance, tabID, id int64, accept bool, promptText, kind, by string) error {
	if in.Wedged.Load() {
		return api.ErrWedged
	}
	st := in.Lock()
	t := st.Tabs[tabID]
	if t == nil {
		in.Unlock()
		return api.ErrNoTab
	}
	d := tabSlot.Of(t).dialog
	switch {
	case d == nil || (id != 0 && d.ID != id):
		in.Unlock()
		return api.ErrNoDialog
	case d.By != "" && kind != api.DialogByTimeout:
		in.Unlock()
		return fmt.Errorf("%w by %s", api.ErrDialogAnswered, d.Answerer())
	case kind == api.DialogByPerson && t.Acc.Level == api.Blind:
		in.Unlock()
		return fmt.Errorf("%w: %s", api.ErrHidden, t.Acc.Why)
	}
	d.By, d.AnsweredBy = kind, by
	x := st.Ext
	st.Notify()
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
		if tabSlot.Of(t).dialog == d && d.By == kind {
			d.By, d.AnsweredBy = "", "" // let another answer
		}
		in.Unlock()
		return fmt.Errorf("answering the dialog: %w", err)
	}
	return nil
}

// answerDialogByDefault answers dialog id of t, nobody having answered it
// in time: alert and beforeunload accepted, confirm and prompt dismissed.
// An answer Chrome did not take is tried again, up to defaultAnswerTries
// times in all, so that no tab hangs for good on a dialog.
func answerDialogByDefault(in *core.Instance, t *core.Tab, id int64) {
	answerByDefault(in, t, id, 1)
}

// defaultAnswerTries bounds the relay's tries at answering a dialog nobody
// answered; defaultAnswerWait is the most it waits between two.
const (
	defaultAnswerTries = 5
	defaultAnswerWait  = 5 * time.Second
)

func answerByDefault(in *core.Instance, t *core.Tab, id int64, try int) {
	in.Lock()
	d := tabSlot.Of(t).dialog
	in.Unlock()
	if d == nil || d.ID != id {
		return
	}
	accept := AcceptedByDefault(d.Type)
	err := answerDialog(in, t.Id, id, accept, "", api.DialogByTimeout, "the relay, after "+in.Srv.Cfg.DialogTimeout.String())
	if err == nil {
		return
	}
	in.Log.Debug("answering a dialog nobody answered", "try", try, "err", err)
	if try >= defaultAnswerTries || errors.Is(err, api.ErrNoDialog) || errors.Is(err, api.ErrNoTab) ||
		errors.Is(err, api.ErrDialogAnswered) || errors.Is(err, api.ErrWedged) {
		return
	}
	in.Lock()
	if tabSlot.Of(t).dialog == d {
		d.Timer = time.AfterFunc(min(in.Srv.Cfg.DialogTimeout, defaultAnswerWait), func() { answerByDefault(in, t, id, try+1) })
	}
	in.Unlock()
}

// claimDialog is the automation's answer to t's dialog: it reports the
// refusal when someone answered first.
func claimDialog(st *core.State, t *core.Tab) (core.Decision, bool) {
	d := tabSlot.Of(t).dialog
	if d == nil {
		return core.Decision{}, true // Chrome says there is none
	}
	dec, ok := d.Claim()
	if ok {
		st.Notify()
	}
	return dec, ok
}

// DialogHooks is what the core asks of the dialogs (core.Services.Dialogs).
func DialogHooks() core.Dialogs {
	return core.Dialogs{StatusLocked: dialogStatus, Answer: answerByPerson}
}

// Dialogs (person.Dialogs): a dialog the tab's own session says opens or
// closes.
func Dialogs(in *core.Instance, e *core.EventMsg) bool {
	if e.Sid != nil {
		return true
	}
	switch string(e.Method) {
	case "Page.javascriptDialogOpening":
		dialogOpened(e.State, e.Tab, e.Params)
	case "Page.javascriptDialogClosed":
		dialogClosed(e.State, e.Tab, e.Params)
	}
	return true
}

// WantsDialog wants the answer to a JavaScript dialog.
func WantsDialog(m *core.MethodInfo) bool { return m.Name == "Page.handleJavaScriptDialog" }

// DialogClaim (person.DialogClaim): the first answer wins: the person's
// in the live view, the automation's, or the relay's when nobody answers.
func DialogClaim(c *core.ClientConn, k *core.Cmd) bool {
	if k.Route.Via.Tab == nil || k.Route.Via.Child {
		return true
	}
	st := c.Inst.Lock()
	d, ok := claimDialog(st, k.Route.Via.Tab)
	c.Inst.Unlock()
	if !ok {
		return c.Refuse(k, d)
	}
	return true
}

// Lifecycle is what the dialogs hear of a tab's life (core.AddLifecycle).
// Chrome knows a dialog only in the debugger session it opened under: a
// later session gets "No dialog is showing" for it, and the page stays
// blocked. So a dialog still open when the relay lets go of its tab (the
// client left, or a Stop undoes what the automation set) is answered by
// default first; and once the tab has lost its debugger, the relay keeps
// no dialog of it that nobody could answer.
func Lifecycle() core.Lifecycle {
	return core.Lifecycle{LettingGo: answerBeforeLettingGo, DetachedLocked: forgetDialog}
}

// answerBeforeLettingGo answers t's open dialog by its type, as nobody
// answering it would, before the relay detaches from t.
func answerBeforeLettingGo(in *core.Instance, _ core.Upstream, t *core.Tab) {
	in.Lock()
	d := tabSlot.Of(t).dialog
	in.Unlock()
	if d == nil {
		return
	}
	if err := answerDialog(in, t.Id, d.ID, AcceptedByDefault(d.Type), "", api.DialogByTimeout, "the relay, as it let go of the tab"); err != nil {
		in.Log.Debug("answering a dialog before letting go of its tab", "err", err)
	}
}

// forgetDialog drops what the relay keeps of t's dialog once t has lost
// its debugger. Called with the instance's lock held.
func forgetDialog(t *core.Tab) {
	pt := tabSlot.Of(t)
	if pt.dialog != nil {
		pt.dialog.Timer.Stop()
		pt.dialog = nil
	}
}
