// Package api is the vocabulary the relay exports: the policy a relay
// consults (Policy and the interfaces a policy may add), its Decision,
// the Observer and the Event it records, what a TabHandle receives, the
// targets it reports and the errors its methods return.
//
// It is defined below everything else so that the relay's core, its stage
// packages and the facade share one set of types: a stage returns a
// Decision or records an Event without importing package relay, and
// returns the very error value package relay exports, so errors.Is holds
// across them. Package relay re-exports every name here with an alias
// (type Decision = api.Decision), a re-declared constant or a variable
// holding the same value; programs outside the relay use those.
//
// api owns only declarations: types, constants, error values and the
// trivial AllowAll and DiscardObserver. It imports the standard library
// alone: nothing of this module, and never package relay or another
// package under relay/internal.
package api
