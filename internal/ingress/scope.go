package ingress

import (
	"fmt"
	"strings"
)

// Scope is one thing a token lets its holder do.
type Scope uint8

// The scopes. They are independent, except that ScopeViewerInteractive
// includes ScopeViewer: whoever may take over a tab may watch it.
const (
	// ScopeCDP drives tabs: discovery and the CDP WebSockets.
	ScopeCDP Scope = 1 << iota
	// ScopeViewer watches tabs: the live view's WebSocket.
	ScopeViewer
	// ScopeViewerInteractive watches tabs and takes over with mouse and
	// keyboard.
	ScopeViewerInteractive
	// ScopeAdmin reads status, audit and metrics.
	ScopeAdmin
	// ScopeExtension pairs an extension: the extension WebSocket.
	ScopeExtension
	// ScopePair mints instances (POST /v1/instances) and removes them,
	// without reading audit or status: what a person needs to pair their
	// own browser.
	ScopePair
)

var scopeNames = []struct {
	s    Scope
	name string
}{
	{ScopeCDP, "cdp"},
	{ScopeViewer, "viewer"},
	{ScopeViewerInteractive, "viewer-interactive"},
	{ScopeAdmin, "admin"},
	{ScopeExtension, "extension"},
	{ScopePair, "pair"},
}

// ScopeNames are the names scopes have in the config file, in order.
func ScopeNames() []string {
	out := make([]string, len(scopeNames))
	for i, n := range scopeNames {
		out[i] = n.name
	}
	return out
}

func (s Scope) String() string {
	for _, n := range scopeNames {
		if n.s == s {
			return n.name
		}
	}
	return fmt.Sprintf("Scope(%d)", uint8(s))
}

// ParseScope reads a scope's config name.
func ParseScope(name string) (Scope, error) {
	for _, n := range scopeNames {
		if n.name == name {
			return n.s, nil
		}
	}
	return 0, fmt.Errorf("unknown scope %q (known: %s)", name, strings.Join(ScopeNames(), ", "))
}

// ScopeSet is what a request was granted.
type ScopeSet uint8

// AllScopes is what a loopback request gets when no token is configured:
// the relay is then as open to this machine as Chrome's own port is.
const AllScopes = ScopeSet(ScopeCDP | ScopeViewer | ScopeViewerInteractive | ScopeAdmin | ScopeExtension | ScopePair)

// PersonScopes are what the person key grants besides the person's
// actions, with tokens configured: watching and taking over in the live
// view. Not cdp: the person key is never a way to drive tabs.
const PersonScopes = ScopeSet(ScopeViewer | ScopeViewerInteractive)

// Has reports whether s grants sc.
func (s ScopeSet) Has(sc Scope) bool { return sc != 0 && s&ScopeSet(sc) == ScopeSet(sc) }

// HasAny reports whether s grants at least one scope of of.
func (s ScopeSet) HasAny(of ScopeSet) bool { return s&of != 0 }

// or names the scopes of s for a person: "admin or pair".
func (s ScopeSet) or() string {
	var names []string
	for _, n := range scopeNames {
		if s.Has(n.s) {
			names = append(names, n.name)
		}
	}
	return strings.Join(names, " or ")
}

func (s ScopeSet) String() string {
	var names []string
	for _, n := range scopeNames {
		if s.Has(n.s) {
			names = append(names, n.name)
		}
	}
	return strings.Join(names, ",")
}

// ParseScopes reads a list of scope names; viewer-interactive adds viewer.
// An empty list is an error: a token that grants nothing is a mistake.
func ParseScopes(names []string) (ScopeSet, error) {
	if len(names) == 0 {
		return 0, fmt.Errorf("no scopes (known: %s)", strings.Join(ScopeNames(), ", "))
	}
	var set ScopeSet
	for _, name := range names {
		sc, err := ParseScope(name)
		if err != nil {
			return 0, err
		}
		set |= ScopeSet(sc)
		if sc == ScopeViewerInteractive {
			set |= ScopeSet(ScopeViewer)
		}
	}
	return set, nil
}
