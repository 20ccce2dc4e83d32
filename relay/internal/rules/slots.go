package rules

// Tab is what the rules keep of a tab, embedded in the relay's tab.
// Guarded by the instance's mutex.
type Tab struct {
	// Fetch is the Fetch configuration of the tab's sessions ("" for the
	// tab's own, else a child's id), for the navigation backstop. Chrome
	// forgets it on detach, and so does setState.
	Fetch map[string]*FetchState
}
