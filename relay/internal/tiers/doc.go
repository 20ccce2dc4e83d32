// Package tiers is the relay's stage of per-origin tiers (blind,
// read-only, and a person's take-over, which makes a tab read-only): the
// rows of the order that refuse, stand in for and withhold what automation
// may not see or do on a tab, by the access the core holds for it.
//
// Its rows in the facade's order (relay/order.go):
//   - commands (rows.go), judges: tiers.Navigate (not to a page automation
//     could not see), tiers.Checks (checks.go: what names a site by
//     itself, what acts beyond the tab), tiers.StandIn (standin.go: what
//     a blind tab answers instead of its page), tiers.FrameTree,
//     tiers.Contexts (contexts.go: a context named by a command, judged by
//     what it is now, the relay's own worlds refused everywhere),
//     tiers.Retried, tiers.Gate (readonly.go: the blind and read-only
//     tables), tiers.Pixels; and, acting on a command that goes on,
//     tiers.NavTo (a stricter page's preparations), tiers.Worlds and
//     tiers.RemoveScript (the client's worlds and scripts for new
//     documents);
//   - events (events.go, under the instance's lock): tiers.FrameGuard,
//     tiers.ChildFrames, tiers.Requests, tiers.BlindSources, tiers.Blind,
//     tiers.Guard, tiers.ChildPage, tiers.BlindChild, tiers.Withhold;
//   - replies (replies.go): tiers.KeepScript, tiers.WentBlind,
//     tiers.Scopes, tiers.History, tiers.SideEffect.
//
// A tab's access (full, read-only, blind, and why) is the core's, because
// every part of the relay reads it: the core decides it from the policy
// and follows the tab's frames and requests, lifts and puts back the
// client's settings, keeps the client's scripts for new documents out of
// a page where they may not run and installs the read-only guard. The
// tables it does that with are package access; the stand-ins' own data
// (a blind tab's frame tree and history, V8's side-effect refusal in
// words) is blind.go here.
//
// What only this stage reads of that state is here too, as functions
// over the core's tab and its tier slots: whether an event or a command
// is about a frame, a request or a source of a blind site, and the notes
// that say so (blindframes.go); a child's frames, the strictest frame and
// the storage a command names (frames.go); the client's scripts and
// worlds a tab keeps, and the settings a blind tab deferred
// (worldscripts.go).
//
// It imports the core, relay/internal/access, relay/internal/api,
// relay/internal/cdp, internal/wire and the standard library. It must not import package relay
// (the facade) nor another stage's package: imports run from the facade
// to the stages to the core, never back.
package tiers
