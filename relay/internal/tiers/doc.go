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
//     tiers.Frames, tiers.Requests, tiers.BlindSources, tiers.Blind,
//     tiers.Guard, tiers.ChildPage, tiers.BlindChild, tiers.Withhold;
//   - replies (replies.go): tiers.KeepScript, tiers.WentBlind,
//     tiers.Scopes, tiers.History, tiers.SideEffect.
//
// A tab's access (full, read-only, blind, and why) is kept by the core,
// because every part of the relay reads it, and the core follows the
// tab's frames, requests and navigations it is decided from. Deciding it
// is this stage's (core.Tiers, set by the facade: Hooks), with the lock
// held:
//   - what the policy gives a page, a frame and where a frame is on its
//     way to, and whether the policy has tiers at all (access.go);
//   - what a change of access does: the read-only guard in the client's
//     isolated worlds, and what the client hears of it (a blind tab's
//     stand-in page and contexts; access.go);
//   - the client's settings lifted on a stricter page and put back, its
//     scripts for new documents taken out of a page where they may not run
//     and put back, and the settings a blind tab deferred applied once it
//     is full (lifts.go). The core keeps what is lifted and counts it,
//     because it holds a navigation into a stricter page until Chrome has
//     answered.
//
// The tables it does that with are package access; the stand-ins' own data
// (a blind tab's frame tree and history, V8's side-effect refusal in
// words) is blind.go here.
//
// What only this stage reads of that state is here too, as functions
// over the core's tab and its tier slots: whether an event or a command
// is about a frame, a request or a source of a blind site, and the notes
// that say so (blindframes.go); the tab's sub-frames (tabframes.go); a
// child's frames, the strictest frame and the storage a command names
// (frames.go); the client's scripts and worlds a tab keeps, and the
// settings a blind tab deferred (worldscripts.go).
//
// It imports the core and the core's parts it acts through (navhold),
// the leaves (access, api, cdp, contexts, metrics, replay), internal/wire
// and the standard library. It must not import package relay (the
// facade) nor another stage's package: imports run from the facade to
// the stages to the core, never back.
package tiers
