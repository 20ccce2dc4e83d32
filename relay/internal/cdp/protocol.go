package cdp

//go:generate go run ../../../internal/protocolgen -o protocol_names.txt

import (
	_ "embed"
	"slices"
	"strings"
	"sync"
)

// The protocol's names.
//
// A chrome.debugger session cannot fetch Chrome's protocol description, so
// the relay knows the commands and events that cdproto knows, by name
// (protocol_names.txt, generated). A newer Chrome's methods that the list
// lacks still work when sent by name.

//go:embed protocol_names.txt
var protocolNames string

// Name is one command or event of the protocol.
type Name struct {
	Method string // "Domain.name"
	Event  bool   // an event, not a command
}

var names = sync.OnceValue(func() []Name {
	var out []Name
	for _, line := range strings.Split(protocolNames, "\n") {
		kind, full, ok := strings.Cut(line, " ")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		if !strings.Contains(full, ".") {
			continue
		}
		out = append(out, Name{Method: full, Event: kind != "command"})
	}
	return out
})

// Names returns every command and event the relay knows of the protocol,
// in the list's order (commands first, each kind by domain and name). The
// slice is the caller's.
func Names() []Name { return slices.Clone(names()) }

// Commands returns the names of the protocol's commands, in Names' order.
func Commands() []string { return filter(false) }

// Events returns the names of the protocol's events, in Names' order.
func Events() []string { return filter(true) }

func filter(events bool) []string {
	var out []string
	for _, n := range names() {
		if n.Event == events {
			out = append(out, n.Method)
		}
	}
	return out
}
