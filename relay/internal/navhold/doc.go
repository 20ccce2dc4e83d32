// Package navhold is the navigation backstop's hold, a part of the core
// in a package of its own: the rules stage's backstop hands it the
// document requests it pauses (Document), the person's stage lets go of
// or fails those it asked about (Release, Fail), and the tiers count the
// lifts a held request waits for (LiftOver). The core keeps the requests
// (core.HeldRequest, core.LiftState.Held) and calls nothing here.
//
// A document request is where a navigation ends up, whichever way it got
// there (a command, a link, a script, a form, a redirect of any kind, a
// Refresh header or a meta refresh, the person), and the backstop pauses
// every one (the rules stage's backstop.go). While the policy has tiers
// or asks about hosts, a paused document request of a tab's frame is
//
//   - held while a person is asked whether the tab may go there (the
//     person's stage: core.Authority.AskNavigationLocked);
//   - sent again, when the commands that lift the client's settings for
//     where it goes are not answered yet (the core's lifts.go, the tiers'
//     lifts.go): Chrome keeps every command for the page back while a
//     navigation is under way, so the new document would commit with the
//     settings and take them in. The relay cancels the navigation (no
//     error page), and once Chrome has lifted them, starts it again to
//     the same address, with the same referrer. A navigation that carries
//     a body (a form's post) cannot be sent again: it is refused while
//     what acts on the site or tells it anything (and scripts for new
//     documents) is still to be lifted, and goes on, to have how the page
//     is shown lifted a moment after it commits, otherwise;
//   - let go with the headers it should have: Chrome puts the client's
//     headers and user agent into a navigation's request when it starts
//     it and keeps them through its redirects, so a request to a page
//     where they are lifted goes on without them (and one to a page where
//     they are back, with them).
package navhold
