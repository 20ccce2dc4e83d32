package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/cdprelay/cdprelay/internal/app"
	"github.com/cdprelay/cdprelay/internal/testenv"
)

// Fault kinds, injected in a shuffled round-robin.
const (
	faultSWRestart = "service-worker restart"
	faultTabs      = "tab closed and reopened"
	faultCancel    = "canceled_by_user (fake instance)"
	faultFrozen    = "frozen viewer"
	faultHostile   = "hostile frames"
	faultPolicy    = "policy reload"
)

// extensionReturn bounds the wait for a restarted worker's new connection.
// The wake-up tab brings it back within a second or two; failing that, the
// extension's alarm does within 30 s.
const extensionReturn = 45 * time.Second

var faultKinds = []string{faultSWRestart, faultTabs, faultCancel, faultFrozen, faultHostile, faultPolicy, faultDetour, faultReload}

// injector injects one fault at a time, at a steady pace.
type injector struct {
	t         *tally
	env       *testenv.Env
	app       *app.App // the product env serves
	person    *person
	pageURL   string
	viewerURL string
	probe     *probe        // on the fake instance that gets canceled_by_user
	hostileFI *fakeInstance // the fake instance that gets hostile frames
	frozen    *frozenViewers
	policies  [2]app.File   // [0] denies Soak.denied; [1] fences a host
	extWait   time.Duration // the relay's ExtensionWait
	survive   *survival     // the client's page through the faults it must live through
	audit     *auditWatch

	mu           sync.Mutex
	policy       int           // guarded by mu: index of the policy in force
	downtime     time.Duration // guarded by mu: longest wait for the extension after a worker restart
	reloadDown   time.Duration // guarded by mu: longest wait for the extension after a reload
	closeOwn     bool          // guarded by mu: the next tab fault closes a client's page
	detourShared bool          // guarded by mu: the next detour takes the person's shared tab
	detours      int           // guarded by mu: detours so far
	shared       string        // guarded by mu: the person's tab that detours; "" until opened
}

func (in *injector) run(ctx context.Context, every time.Duration) {
	var order []string
	for ctx.Err() == nil {
		select {
		case <-ctx.Done():
			return
		case <-time.After(every):
		}
		if len(order) == 0 {
			order = append(order, faultKinds...)
			rand.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		}
		kind := order[0]
		order = order[1:]
		fmt.Printf("%6.1fs fault: %s\n", time.Since(in.t.start).Seconds(), kind)
		if err := in.inject(ctx, kind); err != nil {
			if ctx.Err() != nil {
				return
			}
			in.t.inc("faults not injected", kind)
			in.t.note("fault "+kind, "%v", err)
			continue
		}
		in.t.inc("faults", kind)
	}
}

func (in *injector) inject(ctx context.Context, kind string) error {
	switch kind {
	case faultSWRestart:
		in.survive.begin(faultSWRestart, longLived)
		defer in.survive.end()
		return in.restartServiceWorker(ctx)
	case faultDetour:
		return in.detour(ctx)
	case faultReload:
		return in.reloadExtension(ctx)
	case faultTabs:
		return in.cycleTab(ctx)
	case faultCancel:
		return in.probe.cancelByUser(ctx)
	case faultFrozen:
		return in.frozen.open(ctx, in.t, in.viewerURL, in.env.Relay.Default(), 2)
	case faultHostile:
		hostile(ctx, in.t, in.hostileFI)
		hostileExtension(ctx, in.t, in.hostileFI)
		secondClient(ctx, in.t, in.env.WSEndpoint(), in.extWait)
		return nil
	case faultPolicy:
		in.mu.Lock()
		in.policy ^= 1
		p := in.policy
		in.mu.Unlock()
		// A reload as SIGHUP makes one: the App applies and audits it.
		if err := in.app.Reload(app.Config{File: in.policies[p]}); err != nil {
			in.t.violate("policy reload refused: %v", err)
			return nil
		}
		in.probe.checkPolicy(ctx, p == 0)
		return nil
	}
	return fmt.Errorf("unknown fault %q", kind)
}

// restartServiceWorker stops the extension's service worker, which ends
// its socket to the relay, then wakes it with a new tab (an event it
// listens to), as happens when Chrome stops an idle or crashed worker and
// the person goes on browsing. It returns once the relay has the
// extension back.
func (in *injector) restartServiceWorker(ctx context.Context) error {
	def := in.env.Relay.Default()
	ok, err := in.person.stopServiceWorker()
	if err != nil {
		return err
	}
	if !ok {
		return errors.New("the extension's service worker is not running")
	}
	start := time.Now()
	for def.Status().Ready && time.Since(start) < 5*time.Second {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(time.Duration(200+rand.IntN(1800)) * time.Millisecond)
	tab, err := in.person.openTab(in.pageURL + "?person=wake")
	if err != nil {
		return err
	}
	for !def.Status().Ready {
		if time.Since(start) > extensionReturn {
			in.t.violate("the extension did not come back within %v of its worker's restart", extensionReturn)
			return fmt.Errorf("the extension did not come back within %v", extensionReturn)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	d := time.Since(start)
	in.mu.Lock()
	in.downtime = max(in.downtime, d)
	in.mu.Unlock()
	in.t.add("extension away (ms)", "total", int(d.Milliseconds()))
	return in.person.closeTab(tab)
}

// cycleTab alternates between the person opening a tab and closing it a
// moment later, and the person closing one of the client's own pages under
// it.
func (in *injector) cycleTab(ctx context.Context) error {
	in.mu.Lock()
	own := in.closeOwn
	in.closeOwn = !in.closeOwn
	in.mu.Unlock()
	if own {
		pages, err := in.person.pages("soak-client")
		if err != nil {
			return err
		}
		if len(pages) > 0 {
			in.t.inc("tab faults", "a client's page closed")
			return in.person.closeTab(pages[rand.IntN(len(pages))].TargetID)
		}
	}
	id, err := in.person.openTab(in.pageURL + "?person=tab")
	if err != nil {
		return err
	}
	select {
	case <-ctx.Done():
	case <-time.After(time.Duration(500+rand.IntN(1500)) * time.Millisecond):
	}
	in.t.inc("tab faults", "a tab opened and closed")
	return in.person.closeTab(id)
}

func (in *injector) longestDowntime() (restart, reload time.Duration) {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.downtime, in.reloadDown
}
