package core

// What the navigation backstop (fetchfence.go, fetchmux.go) keeps per tab:
// its slot, embedded in tab.

// fenceTab is what the backstop keeps of a tab. Guarded by the instance's
// mutex.
type fenceTab struct {
	// Fetch is the Fetch configuration of the tab's sessions ("" for the
	// tab's own, else a child's id), for the navigation backstop. Chrome
	// forgets it on detach, and so does setState.
	Fetch map[string]*FetchState
}
