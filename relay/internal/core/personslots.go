package core

// What the person's authority (stop.go, approvals.go, brake.go) keeps per
// instance and in the state: its slots, embedded in Instance and State.
// What the person's stage keeps of a tab (its dialog), of a client and of
// the state is in its own slots (relay/internal/person).

// personState is what the person's side keeps in the instance's state
// besides the Stop and the held commands, which are the core's (State):
// the numbers of approvals. Guarded by the instance's mutex.
type personState struct {
	nextApproval int64
}

// personInstance is what the person's side keeps of an instance, read
// without the lock, besides the Stop itself (Instance.stopped).
type personInstance struct {
	// brakes end script that does not end (brake.go); lifting is what a
	// Stop undoes (stopundo.go).
	brakes  brakes
	lifting lifting
}
