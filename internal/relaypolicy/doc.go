// Package relaypolicy lets the relay consult a compiled denylist policy
// without either package knowing the other: denylist stays pure policy with
// no I/O, the relay stays free of policy syntax, and this adapter is the
// only place that converts between their decisions.
package relaypolicy
