package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/cdprelay/cdprelay/relay"
)

// The faults a client's page must live through: Chrome takes
// chrome.debugger away from a tab that stays, and gives it back.
const (
	faultDetour = "detour to a browser page"
	faultReload = "extension reload"
)

// tabReturn bounds the wait for a detoured tab to be attached again once
// the person has brought it back to the web.
const tabReturn = 30 * time.Second

// survival watches the client while a fault that must not cost it its
// page runs: a page closed under it, or its connection ended, in that
// window is a violation.
type survival struct {
	t *tally

	mu     sync.Mutex
	fault  string                // guarded by mu: the fault under way; "" when none
	counts func(url string) bool // guarded by mu: which pages' closes count against it
	grace  time.Time             // guarded by mu: events until then still count against lastFault
	last   string                // guarded by mu: the fault that ended last
	lastFn func(url string) bool // guarded by mu: its counts
}

// begin opens the window of a fault; counts says which closed pages (by
// their URL) it must not have closed.
func (s *survival) begin(fault string, counts func(url string) bool) {
	s.mu.Lock()
	s.fault, s.counts = fault, counts
	s.mu.Unlock()
}

// end closes the window, but for the events already on their way from
// the client (its lines come through a pipe).
func (s *survival) end() {
	s.mu.Lock()
	s.last, s.lastFn = s.fault, s.counts
	s.grace = time.Now().Add(time.Second)
	s.fault, s.counts = "", nil
	s.mu.Unlock()
}

// clientEvent judges one event line of the client.
func (s *survival) clientEvent(l opLine) {
	s.mu.Lock()
	fault, counts := s.fault, s.counts
	if fault == "" && time.Now().Before(s.grace) {
		fault, counts = s.last, s.lastFn
	}
	s.mu.Unlock()
	switch l.Op {
	case "page closed":
		if fault != "" && counts(l.URL) {
			s.t.inc("client lost", "a page closed during "+fault)
			s.t.violate("%s closed the client's page at %s", fault, l.URL)
			return
		}
		s.t.inc("client lost", "a page closed by another fault")
	case "disconnected":
		if fault != "" {
			s.t.inc("client lost", "the connection, during "+fault)
			s.t.violate("%s ended the client's connection", fault)
			return
		}
		s.t.inc("client lost", "the connection, by another fault")
	default:
		s.t.note("client-output", "unknown event %q", l.Op)
	}
}

// longLived counts the close of the pages that outlive a fault: the
// client's own and the person's shared tabs, not the tabs a fault opens
// and closes itself (a worker's wake-up tab), whose page the client may
// know by no URL at all when it closes.
func longLived(url string) bool {
	return strings.Contains(url, "soak-client") || strings.Contains(url, "person=detour") || strings.Contains(url, "anim")
}

// tabStatus returns the default instance's status of the tab target, and
// whether the extension offers it.
func (in *injector) tabStatus(target string) (relay.TabStatus, bool) {
	for _, ts := range in.env.Relay.Default().Status().Tabs {
		if ts.TargetID == target {
			return ts, true
		}
	}
	return relay.TabStatus{}, false
}

// waitTab waits, at most d, until the tab's status satisfies ok.
func (in *injector) waitTab(ctx context.Context, target string, d time.Duration, ok func(relay.TabStatus) bool) bool {
	for end := time.Now().Add(d); ; {
		if ts, found := in.tabStatus(target); found && ok(ts) {
			return true
		}
		if time.Now().After(end) || ctx.Err() != nil {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// detour takes a tab to chrome://version, a page Chrome does not let an
// extension debug, and back to the web, as the person does in passing:
// alternately the client's own page and a tab of the person's that the
// client sees. Chrome detaches chrome.debugger from the tab; the client's
// page must wait, not close, and go on in the page the tab comes back to.
func (in *injector) detour(ctx context.Context) error {
	in.mu.Lock()
	own := !in.detourShared
	in.detourShared = !in.detourShared
	in.detours++
	n := in.detours
	in.mu.Unlock()

	var target, back string
	if own {
		pages, err := in.person.pages("soak-client")
		if err != nil {
			return err
		}
		for _, p := range pages {
			// Not the page the client opens and closes at once.
			if !strings.Contains(p.URL, "soak-client=extra") {
				target = p.TargetID
			}
		}
		if target == "" {
			return errors.New("the client has no page")
		}
		back = fmt.Sprintf("%s?soak-client=detour-%d", in.pageURL, n)
	} else {
		var err error
		if target, err = in.sharedTab(ctx); err != nil {
			return err
		}
		back = in.pageURL + "?person=detour"
	}
	what := map[bool]string{true: "the client's page", false: "a shared tab"}[own]

	s, err := in.person.attach(target)
	if err != nil {
		return err
	}
	defer in.person.detach(s)
	in.survive.begin(faultDetour, func(url string) bool {
		// The detoured tab, at whichever of its addresses; another page's
		// close is another fault's.
		if own {
			return strings.Contains(url, "soak-client") || strings.HasPrefix(url, "chrome:")
		}
		return strings.Contains(url, "person=detour") || strings.HasPrefix(url, "chrome:")
	})
	defer in.survive.end()
	if err := in.person.navigate(s, "chrome://version"); err != nil {
		return err
	}
	if in.waitTab(ctx, target, 10*time.Second, func(ts relay.TabStatus) bool { return ts.Waiting != "" }) {
		in.t.inc("detours", what+" waited")
	} else {
		// The client had no session on it (reconnecting), or the tab was
		// back before a poll saw it away.
		in.t.inc("detours", what+" not seen waiting")
	}
	time.Sleep(time.Duration(300+rand.IntN(1200)) * time.Millisecond)
	if err := in.person.navigate(s, back); err != nil {
		return err
	}
	start := time.Now()
	if !in.waitTab(ctx, target, tabReturn, func(ts relay.TabStatus) bool { return ts.Waiting == "" && ts.Attached }) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		in.t.violate("detour: %s was not attached again within %v of its return to the web", what, tabReturn)
		return nil
	}
	in.t.add("detour back (ms)", "total", int(time.Since(start).Milliseconds()))
	return nil
}

// sharedTab returns the person's tab that detours when the client's page
// does not, opening it the first time.
func (in *injector) sharedTab(ctx context.Context) (string, error) {
	in.mu.Lock()
	id := in.shared
	in.mu.Unlock()
	if id != "" {
		return id, nil
	}
	id, err := in.person.openTab(in.pageURL + "?person=detour")
	if err != nil {
		return "", err
	}
	if !in.waitTab(ctx, id, 10*time.Second, func(ts relay.TabStatus) bool { return ts.Attached }) {
		return "", errors.New("the extension did not share the person's new tab")
	}
	in.mu.Lock()
	in.shared = id
	in.mu.Unlock()
	return id, nil
}

// reloadExtension reloads the extension (chrome.runtime.reload from its
// worker, as an update or its own page does) and waits for it to connect
// again. The client's pages must wait for it, not close.
func (in *injector) reloadExtension(ctx context.Context) error {
	before := in.audit.extConnects.Load()
	in.survive.begin(faultReload, longLived)
	defer in.survive.end()
	ok, err := in.person.reloadExtension()
	if err != nil {
		return err
	}
	if !ok {
		return errors.New("the extension's service worker is not running")
	}
	start := time.Now()
	for in.audit.extConnects.Load() <= before || !in.env.Relay.Default().Status().Ready {
		if time.Since(start) > extensionReturn {
			in.t.violate("the extension did not come back within %v of its reload", extensionReturn)
			return fmt.Errorf("the extension did not come back within %v", extensionReturn)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
			in.audit.read()
		}
	}
	d := time.Since(start)
	in.t.add("extension away (ms)", "reload", int(d.Milliseconds()))
	in.mu.Lock()
	in.reloadDown = max(in.reloadDown, d)
	in.mu.Unlock()
	return nil
}

// mean is the total of a section's "total" over the number of faults of a
// kind, in milliseconds; "-" when there was none.
func mean(t *tally, section, fault string) string {
	n := t.get("faults", fault)
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf("%d ms", t.get(section, "total")/n)
}
