// Package rules is the relay's stage of the operator's rules and the
// relay's own rules: the judging rows of the commands table that read
// them.
//
// Its rows in the facade's order (relay/order.go), all judges:
//   - rules.Operator (Operator, rows.go): the operator's method rules and
//     URL fence, as the policy says them (api.Policy); an Ask is noted
//     for the person's stage;
//   - rules.Relay (RelayRules): the relay's own rules: never to the
//     relay's own origins, no heap snapshot while secrets are configured,
//     no nested or non-flat sessions;
//   - rules.Uploads (Uploads): files only from the upload folders, as
//     their resolved paths (relayrules.go);
//   - rules.TargetOnTab (TargetOnTab): past the ones the relay emulates,
//     a tab's session sends Chrome only a few Target methods.
//
// Besides its rows, it keeps the extension's first-request rules in step
// with a client's life (NetFence, core.AddLifecycle, netfence.go): they
// go in before the client's first command is read, come off when it
// leaves, and follow the policy.
//
// It also applies the policy's URL fence to what the browser does on its
// own in a tab: the navigation backstop on the Fetch domain (backstop.go,
// its share of a tab's life in Backstop, core.AddLifecycle), with its
// rows:
//   - rules.Fence (Fence, a preparing row that acts on a resume's replay
//     too): on a fenced session, the client's Fetch.enable and
//     Fetch.disable become one Fetch.enable with the backstop's patterns
//     and the client's (fetch.go);
//   - rules.Backstop (Pause, an event row): a paused request is judged
//     first; the client gets it only when its own patterns asked for it;
//   - rules.FenceChild (an event row): an out-of-process frame is fenced
//     before it is resumed.
//
// Its words (rule ids and texts) and checks need no instance and have
// table tests (relayrules.go, fetch.go); which origins are the relay's
// own is package origins.
//
// It imports the core, the relay's protocol packages (api, cdp),
// relay/internal/origins and the standard library. It must not import
// package relay (the facade) nor another
// stage's package: imports run from the facade to the stages to the core,
// never back.
package rules
