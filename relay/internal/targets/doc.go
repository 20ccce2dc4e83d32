// Package targets is the relay's stage "the browser's targets": the
// Target.* methods Chrome's browser target answers — the targets there
// are, attaching to them and letting go, opening, closing and activating
// tabs, auto-attach and discovery — answered by the relay from the tabs
// the extension shares, since a tab's chrome.debugger session has no
// browser target. So is Page.navigateToHistoryEntry, whose entry is
// judged by its URL before the tab goes there.
//
// How it is plugged in: one table of emulations, level by level
// (Emulations, given to core.AddLevels by the facade): what is answered
// at the root, on a browser session and on a tab's session. At a level it
// leaves out, a Target.* method goes to the tab (the tab's own
// auto-attach of frames and workers, its own target info) or, at the
// browser level, is refused as Chrome refuses it. What it judges
// (Page.navigateToHistoryEntry) it answers at every level, on the tab the
// command's route found (core.Call.Via).
//
// What it keeps is the core's: the tabs and their target info, the
// client's sessions and what each asked for (auto-attach, discovery),
// read and changed under the instance's lock through the core's methods
// (State.MintSession, State.DetachSession, State.Announce, ...). A
// handler that calls the extension (Blocking) runs beside the client's
// read loop, bounded by core.ClientConn.CallCtx.
//
// It imports the core and the shared leaves (api, cdp), and no other
// stage.
package targets
