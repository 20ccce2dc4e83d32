// Package attach attaches the debugger to a shared tab and lets go of it:
// the I/O side of the tab table's attach state machine, whose states are
// the core's (core.Tab.State, SetState). It is a part of the core in a
// package of its own: the core reaches it through the hooks the facade
// hands over (core.Attacher, Hooks); the stages, the upstream, the time
// away and the live view's handles call it directly (Tab, Detach,
// ReleaseIfUnused, TabGone, BrakeOn).
//
// An attach is the relay's own commands before any client command
// (calls): chrome.debugger.attach, Target.getTargetInfo, what the stages
// put in place first (core.Lifecycle.Attaching: the backstop's
// Fetch.enable on a fenced tab), Page.enable, the brake's Debugger,
// Runtime.enable, the wait for a new tab's first document, and the
// history check of a tab that once held a page that is never shared. A
// tab on such a page is never attached, or let go at once (the relay's
// own origins and the pages never shared: origins.Origins.NeverShared).
// Chrome refusing the attach because of a policy is noted for the live
// view (noteRefusal).
//
// A detach lets the stages do first what only the debugger session going
// away can (core.Lifecycle.LettingGo), and attaches again at once when
// the live view still watches the tab.
package attach

import "github.com/cdprelay/cdprelay/relay/internal/core"

// Hooks are what the core calls of the attach part (core.Services.Attacher).
func Hooks() core.Attacher {
	return core.Attacher{Tab: Tab, FinishDetach: finishDetach, BrakeOn: BrakeOn}
}
