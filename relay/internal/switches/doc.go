// Package switches answers a client's switches of a domain's events on a
// tab's sessions (X.enable, X.disable), which are the relay's to answer
// rather than Chrome's. It is a part of the core in a package of its own:
// the core reaches it through the emulations it is handed (core.Switches,
// Hooks), and the person's Resume calls ResyncContexts.
//
// The relay's own Runtime. The relay places every context a command names
// in its view of the tab's contexts (relay/internal/contexts), which only
// Chrome's Runtime events keep true. So it keeps Runtime enabled on every
// session of the tabs it attaches — the tab's own from the attach, a
// child's (a frame, a worker) from the moment Chrome announces it (the
// core's runtimehold.go) — and a client's Runtime switch on a tab session
// is the relay's to answer (runtime.go):
//
//   - Runtime.disable is answered and not sent: Chrome goes on telling the
//     relay of contexts, and the client hears no Runtime event on that
//     session until it enables Runtime again;
//   - Runtime.enable is answered as Chrome would: a
//     Runtime.executionContextCreated for each context the session has
//     (none of the relay's own worlds, nothing of a blind tab or frame),
//     then the reply.
//
// Runtime.bindingCalled comes whatever the switch, as from Chrome. What
// Chrome stored for a late Runtime.enable (console messages from before it)
// is not replayed.
//
// The other domains (domain.go): a switch on a tab's top-level session is
// recorded per session (core.State.SwitchDomain): a disable goes to Chrome
// only when no other of the tab's sessions has the domain on, and never
// for the domains the relay keeps on for itself (Page, Debugger); the
// resume's record keeps the switch, and the stages hear of it
// (core.Lifecycle.Switched).
package switches

import "github.com/cdprelay/cdprelay/relay/internal/core"

// Hooks are the emulations the core hands a tab session's switches to
// (core.Services.Switches).
func Hooks() core.Switches {
	return core.Switches{
		Runtime: core.Emulation{Fn: runtimeSwitch, Blocking: true},
		Domain:  core.Emulation{Fn: domainSwitch},
	}
}
