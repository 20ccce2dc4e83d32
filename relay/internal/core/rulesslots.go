package core

import "github.com/cdprelay/cdprelay/relay/internal/rules"

// What the operator's rules (rules.go, fetchfence.go) keep per tab: their
// slot, embedded in tab.

// rulesTab is what the rules keep of a tab (rules.Tab: the Fetch setup
// of its sessions). The alias gives the embedded field a name of the
// core's.
type rulesTab = rules.Tab
