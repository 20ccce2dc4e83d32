package person

import "github.com/cdprelay/cdprelay/relay/internal/core"

// What the person's stage (tabdialogs.go, recheck.go) keeps per tab, per
// client and in the instance's state: its slots in the core's structures. Who holds a tab (a
// person's take-over), the navigation a person approved, the Stop and the
// held commands are the core's: every part of the relay honours them;
// what is shown to a person and waits for their answer is this stage's.
var (
	tabSlot    = core.NewTabSlot[personTab]()
	stateSlot  = core.NewStateSlot[personState]()
	clientSlot = core.NewClientSlot[personClient]()
	instSlot   = core.NewInstanceSlot[personInstance]()
)

// personInstance is what the person's stage keeps of an instance, read
// without the instance's lock, besides the Stop itself (the core's
// Instance.IsStopped and State.StoppedBy, which every part honours).
type personInstance struct {
	// brakes end script that does not end (brake.go); lifting is what a
	// Stop undoes (stopundo.go).
	brakes  brakes
	lifting lifting
}

// personTab is what the person's stage keeps of a tab. Guarded by the
// instance's mutex.
type personTab struct {
	// dialog is the JavaScript dialog the tab shows.
	dialog *Dialog
}

// personState is what the person's stage keeps in the instance's state.
// Guarded by the instance's mutex.
type personState struct {
	// nextDialog numbers the dialogs.
	nextDialog int64
	// approvals are what waits for a person's answer, by approval id;
	// nextApproval numbers them (asking.go).
	approvals    map[int64]*asked
	nextApproval int64
}

// personClient is what the person's stage keeps of a client. Guarded by
// the instance's mutex.
type personClient struct {
	// pressed are the approved mouse presses whose release is still to
	// come, by tab (recheck.go).
	pressed map[*core.Tab]pressRecord
}
