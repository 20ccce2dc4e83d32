// Package person is the relay's concern "the person in charge", as far as
// it is plain data and bytes in, bytes out:
//   - how a command is described to the person: the card's words
//     (Description, PointTarget, ClipText);
//   - what of a command is asked about (Acts, SubmitLike, LooksFirst), the
//     answers an approval gets and what the live view lists of it
//     (ApprovalStatus, the Answer constants), the host a navigation goes
//     to (NavHost);
//   - a JavaScript dialog: what a tab shows (Dialog, DialogStatus), who
//     answered it, the automation's claim on it (first answer wins) and
//     the answer it gets when nobody answers in time;
//   - the Stop: what it could not undo and is refused from the start
//     (StopRules), and the audit's words for what it undid (Lifted);
//   - what a person's side keeps of a tab (Tab, embedded in the relay's
//     tab), and the words and rule ids of the person's refusals and
//     warnings.
//
// What needs the relay's instances, tabs, sessions or clients stays in
// package relay, which calls this one: held commands and their lines, the
// timers' answers, looking at the page, the Stop and Resume and what the
// Stop undoes, take-over and hand-back. The relay's order tables decide
// when each part runs. This package knows no instance, session or client
// of the relay, and of a tab only its own share (Tab).
//
// It imports internal/wire, relay/internal/api and the standard library.
// It must not import package relay (github.com/cdprelay/cdprelay/relay)
// nor the package of another concern under relay/internal (rules, tiers,
// creds, browser, targets): imports run from the facade to the concerns
// to the core, never back.
package person
