package tiers

import (
	"sync"
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/cdp"
	"github.com/cdprelay/cdprelay/relay/internal/core"
)

// Refusals a client retries.
//
// Playwright takes a protocol error in the middle of an action for a page
// in flux: when the relay refuses the input of a click, a hover or a drag
// on a tab automation may not act on (read-only, or held by a person), it
// looks for the element again and sends the input again, until its own
// timeout, which it then reports without a word of the refusal. What it
// does not retry is an exception thrown by the script it runs. So when a
// session's input is refused and the same input (method and params) comes
// again within retriedWithin (Playwright sends a click's move, press and
// release at once, and all of them again), the next failCalls functions
// the client calls on that session within failFor (Playwright's stop of
// its own hit-target check, then its next look for the element) are
// refused as the script's own exception, with the tab's reason; what the
// client calls after that is answered as ever. A client that takes the
// first refusal as final (Puppeteer, a raw client) is told once, by that
// refusal, and never meets this.

// retriedWithin is how soon a refused input sent again counts as a retry;
// failFor is how long function calls fail after it.
const (
	retriedWithin = 2 * time.Second
	failFor       = time.Second
	failCalls     = 2
)

var domainInput = cdp.DomainIndex("Input")

// actRefusals are the refused inputs of one client, by the session that
// carried them. The read loop and the goroutines that judge held commands
// use it.
type actRefusals struct {
	mu sync.Mutex
	m  map[*core.Session]actRefusal // guarded by mu
}

// actRefusal is a session's refused input of the last retriedWithin.
type actRefusal struct {
	at     time.Time            // the last refusal
	inputs map[string]time.Time // each input refused (method and params), and when
	again  time.Time            // when an input was last refused again
	calls  int                  // function calls still to refuse after again
	d      core.Decision        // the last refusal
}

// maxInputs bounds the inputs remembered for a session.
const maxInputs = 16

// Refused notes k's refusal d, when k is input refused on a read-only tab.
func (r *actRefusals) Refused(k *core.Cmd, d core.Decision) {
	if k.M.Domain != domainInput || k.Route.Acc.Level != api.ReadOnly || k.Route.Via == nil {
		return
	}
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = make(map[*core.Session]actRefusal)
	}
	for s, a := range r.m {
		if now.Sub(a.at) > retriedWithin && now.Sub(a.again) > failFor {
			delete(r.m, s) // stale: the map stays as small as the retries under way
		}
	}
	input := k.M.Name + string(k.Env.Params)
	a := r.m[k.Route.Via]
	if a.inputs == nil {
		a.inputs = make(map[string]time.Time)
	}
	for in, at := range a.inputs {
		if now.Sub(at) > retriedWithin {
			delete(a.inputs, in)
		}
	}
	_, again := a.inputs[input]
	if again {
		a.again, a.calls = now, failCalls
	}
	if len(a.inputs) < maxInputs || again {
		a.inputs[input] = now
	}
	a.at, a.d = now, d
	r.m[k.Route.Via] = a
}

// Retried reports the refusal to give k, a function call on a session
// whose input was refused again just now, as the function's exception.
func (r *actRefusals) Retried(k *core.Cmd) (core.Decision, bool) {
	if k.M.Name != "Runtime.callFunctionOn" || k.Route.Acc.Level != api.ReadOnly || k.Route.Via == nil {
		return core.Decision{}, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	a, ok := r.m[k.Route.Via]
	if !ok || a.calls == 0 || time.Since(a.again) > failFor {
		return core.Decision{}, false
	}
	a.calls--
	r.m[k.Route.Via] = a
	return a.d, true
}
