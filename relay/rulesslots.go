package relay

import "github.com/cdprelay/cdprelay/relay/internal/rules"

// What the operator's rules (rules.go, fetchfence.go) keep per tab: their
// slot, embedded in tab.

// rulesTab is what the rules keep of a tab. Guarded by the instance's
// mutex.
type rulesTab struct {
	// fetch is the Fetch configuration of the tab's sessions ("" for the
	// tab's own, else a child's id), for the navigation backstop. Chrome
	// forgets it on detach, and so does setState.
	fetch map[string]*rules.FetchState
}
