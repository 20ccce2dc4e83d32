package core

import (
	"errors"
	"fmt"
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/api"
)

// Human take-over. While a person holds control of a tab from the live
// view, the CDP client's input and navigation on that tab are refused, so
// that automation and person never fight over the mouse; reads still work.
// The client is told on the tab's session in two ways: a Log.entryAdded
// warning (Playwright and Puppeteer surface it as a console message of
// type "warning") and a CDPRelay.controlChanged event
// {controlled, by} for clients that listen on a raw CDP session.

// ErrControlled is returned when another person already holds a tab.
var ErrControlled = api.ErrControlled

// ErrHidden is returned when a tab is blind: on a page hidden from
// automation and the live view, which the person uses in the browser
// itself.
var ErrHidden = api.ErrHidden

// TakeControl gives holder (a viewer's description) control of tab id.
func (in *Instance) TakeControl(tabID int64, holder string) error {
	return in.setControl(tabID, holder)
}

// ReleaseControl hands tab id back to automation. Releasing a tab that is
// not held, or held by someone else, is an error.
func (in *Instance) ReleaseControl(tabID int64, holder string) error {
	return in.setControl(tabID, "\x00"+holder)
}

func (in *Instance) setControl(tabID int64, holder string) error {
	if in.Wedged.Load() {
		return ErrWedged
	}
	release := len(holder) > 0 && holder[0] == 0
	if release {
		holder = holder[1:]
	}
	st := in.Lock()
	defer in.Unlock()
	t := st.Tabs[tabID]
	if t == nil {
		return ErrNoTab
	}
	switch {
	case release && t.Control != holder:
		return errors.New("this viewer does not control the tab")
	case !release && t.Control != "" && t.Control != holder:
		return ErrControlled
	case !release && t.Control == holder:
		return nil
	case !release && t.Acc.Level == AccessBlind:
		return fmt.Errorf("%w: %s", ErrHidden, t.Acc.Why)
	}
	defer func() {
		if was, changed := st.UpdateAccess(t); changed {
			st.accessChanged(t, was)
		}
	}()
	if release {
		t.Control = ""
		in.Observe(Event{Actor: ActorViewer, Kind: KindHandBack, Target: t.TargetID, Outcome: OutcomeOK, By: holder})
	} else {
		t.Control = holder
		in.Observe(Event{Actor: ActorViewer, Kind: KindTakeOver, Target: t.TargetID, Outcome: OutcomeOK, By: holder})
	}
	if c := st.Client; c != nil && t.Session != nil {
		text := msgHandedBack
		if !release {
			text = msgControlled
		}
		ts := float64(time.Now().UnixMilli())
		c.Event("Log.entryAdded", t.Session, map[string]any{"entry": map[string]any{
			"source": "other", "level": "warning", "text": text, "timestamp": ts,
		}})
		c.Event("CDPRelay.controlChanged", t.Session, map[string]any{"controlled": !release, "by": holder})
	}
	return nil
}

// Controller reports who controls tab id ("" when automation does).
func (in *Instance) Controller(tabID int64) string {
	if in.Wedged.Load() {
		return ""
	}
	st := in.Lock()
	defer in.Unlock()
	if t := st.Tabs[tabID]; t != nil {
		return t.Control
	}
	return ""
}

// Take-over and hand-back: what the client is told on the tab's session
// when a person takes control of a tab from the live view, and when they
// hand it back.

// msgControlled is the warning the client gets when a person takes a tab.
const msgControlled = "cdprelay: a person has taken control of this tab from the live view; input and navigation are refused until they hand it back"

// msgHandedBack is the warning the client gets when the person hands the
// tab back.
const msgHandedBack = "cdprelay: control of this tab was handed back to automation"
