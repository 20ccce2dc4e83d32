package person

import (
	"errors"
	"fmt"
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/core"
)

// Human take-over. While a person holds control of a tab from the live
// view, the CDP client's input and navigation on that tab are refused, so
// that automation and person never fight over the mouse; reads still work.
// The client is told on the tab's session in two ways: a Log.entryAdded
// warning (Playwright and Puppeteer surface it as a console message of
// type "warning") and a CDPRelay.controlChanged event
// {controlled, by} for clients that listen on a raw CDP session.

// Control gives holder (a viewer's description) control of tab tabID, or
// hands it back to automation (release). Releasing a tab that is not
// held, or held by someone else, is an error.
func Control(in *core.Instance, tabID int64, holder string, release bool) error {
	if in.Wedged.Load() {
		return api.ErrWedged
	}
	st := in.Lock()
	defer in.Unlock()
	t := st.Tabs[tabID]
	if t == nil {
		return api.ErrNoTab
	}
	switch {
	case release && t.Control != holder:
		return errors.New("this viewer does not control the tab")
	case !release && t.Control != "" && t.Control != holder:
		return api.ErrControlled
	case !release && t.Control == holder:
		return nil
	case !release && t.Acc.Level == api.Blind:
		return fmt.Errorf("%w: %s", api.ErrHidden, t.Acc.Why)
	}
	defer func() {
		if was, changed := st.UpdateAccess(t); changed {
			st.AccessChanged(t, was)
		}
	}()
	if release {
		t.Control = ""
		in.Observe(core.Event{Actor: api.ActorViewer, Kind: api.KindHandBack, Target: t.TargetID, Outcome: api.OutcomeOK, By: holder})
	} else {
		t.Control = holder
		in.Observe(core.Event{Actor: api.ActorViewer, Kind: api.KindTakeOver, Target: t.TargetID, Outcome: api.OutcomeOK, By: holder})
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

// Take-over and hand-back: what the client is told on the tab's session
// when a person takes control of a tab from the live view, and when they
// hand it back.

// msgControlled is the warning the client gets when a person takes a tab.
const msgControlled = "cdprelay: a person has taken control of this tab from the live view; input and navigation are refused until they hand it back"

// msgHandedBack is the warning the client gets when the person hands the
// tab back.
const msgHandedBack = "cdprelay: control of this tab was handed back to automation"
