package core

// What the person's approvals (approvals.go) keep in the state: a slot
// embedded in State. What the person's stage keeps of an instance (the
// brakes, what a Stop undoes), a tab (its dialog), a client and the state
// is in its own slots (relay/internal/person).

// personState is what the person's side keeps in the instance's state
// besides the Stop and the held commands, which are the core's (State):
// the numbers of approvals. Guarded by the instance's mutex.
type personState struct {
	nextApproval int64
}
