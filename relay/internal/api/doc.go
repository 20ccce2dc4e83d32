// Package api is the vocabulary the relay exports: the policy a relay
// consults (Policy and the interfaces a policy may add), its Decision,
// the Observer and the Event it records, what a TabHandle receives, the
// targets it reports, the status an instance shows and the errors its
// methods return.
//
// It is defined below everything else so that the relay's core, its stage
// packages and the facade share one set of types: a stage returns a
// Decision or records an Event without importing package relay, and
// returns the very error value package relay exports, so errors.Is holds
// across them. Package relay re-exports every name here with an alias
// (type Decision = api.Decision), a re-declared constant or a variable
// holding the same value; programs outside the relay use those.
//
// It also holds the vocabulary the relay's core and its concerns share:
// the access of a tab (Level, Access, Stricter) and how a URL is told
// apart for it (PageScheme, Origin, SchemeOf), the rule ids and messages
// more than one concern gives, and what a paused request says
// (PausedRequest).
//
// api owns only declarations: types, constants, error values, the
// trivial AllowAll and DiscardObserver, and small pure functions of
// strings. It imports the standard library
// alone: nothing of this module, and never package relay or another
// package under relay/internal.
package api
