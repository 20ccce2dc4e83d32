package core

import (
	"github.com/cdprelay/cdprelay/relay/internal/access"
)

// The client's scripts for new documents, under tiers and a person's
// take-over.
//
// Page.addScriptToEvaluateOnNewDocument runs the client's script in the
// page's own world of every document the frame shows from then on:
// added on a full site, it would run, with the person's session, on a
// read-only or blind site the tab goes to later, and in every page a
// person opens in a tab they took over. So the relay keeps each script
// the client added, takes it out of Chrome as soon as the tab is held by
// a person or its frame is on its way to a site that is not full
// (before the Page.navigate that goes there, for the client's own
// navigations; at the first event that says so, for the page's), and puts
// it back once the frame is on its way to a full site again. The client
// keeps the identifier it was given; a script it removes while it is out
// is simply forgotten.
//
// The core keeps the scripts (Tab.Scripts) and says when where they may
// run changed (SyncScripts); the tiers take them out and put them back
// (Tiers.ScriptsLocked, the tiers' lifts.go).
//
// A script that runs nothing (an isolated world's bootstrap: Playwright's
// utility world has an empty source, Puppeteer's a comment) stays.
//
// A navigation the page starts by itself is a race: the script is taken
// out within the few milliseconds a command takes to reach Chrome, and a
// document that commits sooner gets it. A script that is put back misses
// the documents that committed meanwhile.

// MaxInitScripts bounds the scripts kept for a tab.
const MaxInitScripts = 1024

type InitScript struct {
	Sid    string // Chrome's session: "" for the tab's own, a child's id
	Child  *Session
	Client string // the identifier the client was given
	Real   string // Chrome's identifier now; "" while taken out
	Adding bool   // being put back
	Params []byte
}

// SyncScripts takes out of Chrome the scripts of t whose frame is on its
// way to a site that is not full, and puts back the others (the tiers'
// Tiers.ScriptsLocked).
func (st *State) SyncScripts(t *Tab) {
	if len(t.Scripts) > 0 && tiers.ScriptsLocked != nil {
		tiers.ScriptsLocked(st, t)
	}
}

// InitRunsNothing reports whether a Page.addScriptToEvaluateOnNewDocument's
// source runs nothing.
func InitRunsNothing(params []byte) bool {
	src, _, err := ExactString(params, "source")
	return err == nil && access.RunsNothing(src)
}

// ForgetClientSetup forgets what a client set up on t that the relay would
// put in or apply later: its client is gone, or its debugger is.
func (t *Tab) ForgetClientSetup() {
	t.Scripts = nil
	clientSetupGoneLocked(t)
}
