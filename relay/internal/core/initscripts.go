package core

import (
	"github.com/cdprelay/cdprelay/relay/internal/access"
)

// The client's scripts for new documents, kept while the policy has tiers
// or a person holds a tab: the core keeps them (Tab.Scripts) and says when
// where they may run changed (SyncScripts); the tiers take them out and
// put them back, and say why (their worldscripts.go).

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
