package core

import (
	"context"
	"sync/atomic"
	"time"
)

// What the person in charge (stop.go, approvals.go, dialogs.go,
// control.go) keeps per client, per instance and in the state: their
// slots, embedded in clientConn, Instance and state. What it keeps per
// tab is person.Tab, embedded in tab.

// personState is what the person's side keeps in the instance's state:
// the Stop and the commands held for a person. Guarded by the instance's
// mutex.
type personState struct {
	stoppedBy      string    // who stopped the automation; "" while it runs
	stoppedAt      time.Time // when
	refusedStopped int64     // commands refused since
	// runCtx is cancelled by Stop: the emulated commands under way give
	// up. Resume makes a new one.
	runCtx       context.Context
	runCancel    context.CancelFunc
	Lines        map[lineKey]*line  // commands held in order, by client and tab
	approvals    map[int64]*heldCmd // commands waiting for a person, by approval id
	nextApproval int64
	nextDialog   int64
}

// personClient is what the person's side keeps of a client.
type personClient struct {
	// pressed are the approved mouse presses whose release is still to
	// come, by tab (recheck.go). Guarded by the instance's mutex.
	pressed map[*Tab]pressRecord
	lines   atomic.Int32 // lines of held commands it has (approvals.go)
}

// personInstance is what the person's side keeps of an instance, read
// without the lock.
type personInstance struct {
	// stopped is set while a person has stopped the automation (stop.go),
	// read without the lock by the pipeline's first stage; stopEpoch
	// counts the stops, for emulated commands that began before one.
	stopped   atomic.Bool
	stopEpoch atomic.Uint32
	// brakes end script that does not end (brake.go); lifting is what a
	// Stop undoes (stopundo.go).
	brakes  brakes
	lifting lifting
}
