package core

// What the person in charge (stop.go, approvals.go, dialogs.go,
// control.go) keeps per client, per instance and in the state: their
// slots, embedded in clientConn, Instance and state. What it keeps per
// tab is person.Tab, embedded in tab.

// personState is what the person's side keeps in the instance's state
// besides the Stop and the held commands, which are the core's (State):
// the numbers of approvals and dialogs. Guarded by the instance's mutex.
type personState struct {
	nextApproval int64
	nextDialog   int64
}

// personClient is what the person's side keeps of a client.
type personClient struct {
	// pressed are the approved mouse presses whose release is still to
	// come, by tab (recheck.go). Guarded by the instance's mutex.
	pressed map[*Tab]pressRecord
}

// personInstance is what the person's side keeps of an instance, read
// without the lock, besides the Stop itself (Instance.stopped).
type personInstance struct {
	// brakes end script that does not end (brake.go); lifting is what a
	// Stop undoes (stopundo.go).
	brakes  brakes
	lifting lifting
}
