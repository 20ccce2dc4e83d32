// Package person is the relay's concern "the person in charge", as far as
// it is plain data and bytes in, bytes out: how a command is described to
// the person (Description, PointTarget, ClipText), what of a command is
// asked about (Acts, SubmitLike, LooksFirst) and the answers an approval
// gets (ApprovalStatus, the Answer constants), a JavaScript dialog
// (DialogStatus, who may answer it, the answer it gets when nobody does),
// the host a navigation goes to (NavHost), what a Stop could not undo and
// is refused from the start (StopRules), and the words and rule ids of
// the person's refusals and warnings.
//
// Its state lives where the relay keeps it: held commands, their lines
// and timers, a tab's dialog and holder, the Stop and what it undoes stay
// in package relay, which calls this one; the relay's order tables decide
// when each part runs. This package knows no instance, tab, session or
// client.
//
// It imports internal/wire, relay/internal/api and the standard library.
// It must not import package relay (github.com/cdprelay/cdprelay/relay)
// nor the package of another concern under relay/internal (rules, tiers,
// creds, browser, targets): imports run from the facade to the concerns
// to the core, never back.
package person
