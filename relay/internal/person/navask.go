package person

import (
	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/core"
)

// What the policy asks a person besides a command (core.Authority): where
// a navigation ends (ask_domains; the core holds the document request
// while the person is asked, navask.go there), and a submit
// (api.Asker.AsksSubmit: asks.go).

// asksNavigation reports whether in's policy asks about the hosts
// navigations go to.
func asksNavigation(in *core.Instance) bool {
	na, ok := in.Srv.PolicyBox.Load().(api.NavigationAsker)
	return ok && na.AsksNavigation(in.ProfileName)
}

// navigationAsk decides whether a document request of t's main frame to
// url is asked, and with what. Not asked: while no client is connected, a
// person holds the tab or the automation is stopped (nobody is there to
// ask for, or the person acts themselves); within the host the tab is on;
// to the host a person approved a navigation to.
func navigationAsk(st *core.State, t *core.Tab, url string) (core.Decision, bool) {
	in := st.Inst
	if st.Client == nil || t.Control != "" || in.IsStopped.Load() {
		return core.Decision{}, false
	}
	na, ok := in.Srv.PolicyBox.Load().(api.NavigationAsker)
	if !ok {
		return core.Decision{}, false
	}
	d := na.AskNavigation(in.ProfileName, url)
	if d.Verdict != core.Ask {
		return core.Decision{}, false
	}
	to := core.NavHost(url)
	if to == "" || to == core.NavHost(t.DocURL) || to == t.NavApproved {
		return core.Decision{}, false
	}
	return d, true
}

// asksSubmit reports whether policy p asks before a submit.
func asksSubmit(p core.Policy, profile string) bool {
	a, ok := p.(api.Asker)
	return ok && a.AsksSubmit(profile)
}
