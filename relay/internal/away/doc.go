// Package away keeps a client's page alive while Chrome takes the
// debugger away from its tab, and keeps the client while its extension is
// expected back.
//
// Chrome takes chrome.debugger away from a tab that stays open in several
// passing cases: the person takes it to a browser page (chrome://…), the
// Web Store or another extension's page and comes back; another
// extension puts its frame into the tab (a password manager's inline
// menu); our extension reloads or updates, or Chrome stops its service
// worker (ext.go). Through Chrome's own port a client's page lives on
// through all of them. So does it here:
//
//   - the client's top-level sessions on the tab are suspended
//     (core.State.Suspend: what died with the debugger session ends);
//   - its commands for the tab wait in the tab's line (package lines:
//     away.go), and nothing of the page the tab is on meanwhile
//     reaches the client (it is not attached there: the core's
//     RouteEvent passes only the resumer's events of a waiting tab);
//   - when our extension offers the tab again (it does once the tab can
//     be attached: back on a web page, or the extension back) the sessions
//     are resumed (resume.go): the tab is attached again as any offered
//     tab is (the tiers and the fence judge the page it came back to),
//     the client is shown the document it is on now when it is another one
//     (document.go), what it had set is set again (replay.go),
//     and it is told the load it missed (load.go).
//
// A tab that closes meanwhile closes at once; one that is not back within
// SuspendTimeout ends its sessions, told why, and the commands that
// waited fail with the reason (wait.go). A frame going to a scheme the
// debugger cannot follow still ends the sessions (WaitOnDetach).
//
// The core keeps the waits (core.Tab.Away, core.State.ExtAway) and the
// replay's record, and asks this package where a tab or the extension
// goes (core.Away, Hooks). The extension's connection (package ext)
// calls it where the extension offers a tab again, withdraws it or
// detaches the debugger.
//
// The stock Playwright extension does not offer a detached tab again:
// there the sessions end as before (package ext's tabgone.go finds out
// whether the tab is still there).
package away

import "github.com/cdprelay/cdprelay/relay/internal/core"

// Hooks are the core's questions to the time away.
func Hooks() core.Away {
	return core.Away{
		LetGoLocked:         letGoLocked,
		ReplacedLocked:      replacedLocked,
		ExtensionGoneLocked: keepForExtension,
	}
}
