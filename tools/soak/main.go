package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"time"

	"github.com/cdprelay/cdprelay/denylist"
	"github.com/cdprelay/cdprelay/internal/app"
	"github.com/cdprelay/cdprelay/internal/chromium"
	"github.com/cdprelay/cdprelay/internal/testenv"
	"github.com/cdprelay/cdprelay/relay"
	"github.com/cdprelay/cdprelay/screencast"
)

type options struct {
	duration   time.Duration
	faultEvery time.Duration
	deadline   time.Duration
	warmup     time.Duration
	extWait    time.Duration
	verbose    bool
	smoke      bool
}

func main() {
	var o options
	flag.DurationVar(&o.duration, "duration", 3*time.Minute, "how long the client runs and faults are injected")
	flag.DurationVar(&o.faultEvery, "fault-every", 5*time.Second, "pause between two faults")
	flag.DurationVar(&o.deadline, "deadline", 20*time.Second, "each client operation's deadline")
	flag.DurationVar(&o.warmup, "warmup", 0, "time whose peak goroutines and heap are the baseline (default: a sixth of -duration, at most 30 s)")
	flag.DurationVar(&o.extWait, "extension-wait", 10*time.Second, "the relay's ExtensionWait: how long a client is held while the extension is away")
	flag.BoolVar(&o.verbose, "v", false, "print every client operation")
	smoke := flag.Bool("smoke", false, "a short run (15 s, a fault every 1.5 s) that exits non-zero on a broken invariant")
	flag.Parse()
	o.smoke = *smoke
	if *smoke {
		o.duration, o.faultEvery, o.warmup = 15*time.Second, 1500*time.Millisecond, 3*time.Second
	}
	if o.warmup == 0 {
		o.warmup = min(30*time.Second, o.duration/6)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	violations, err := run(ctx, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(2)
	}
	if violations > 0 {
		os.Exit(1)
	}
}

// policies are the two configs the soak reloads in turn: [0] denies
// Soak.denied; [1] blocks a host, which turns the navigation backstop
// (Fetch interception) on for every attached tab, and the next reload
// turns it off again.
func policies() [2]app.File {
	return [2]app.File{
		{Policy: denylist.Config{DenyMethods: []string{"Soak.denied"}}},
		{Policy: denylist.Config{BlockedHosts: []string{"blocked.invalid"}}},
	}
}

func run(ctx context.Context, o options) (int, error) {
	if why := testenv.Require(true); why != "" {
		return 0, errors.New(why)
	}
	t := newTally()
	chromePath, err := chromium.Find("")
	if err != nil {
		return 0, err
	}
	version, _ := chromium.Version(ctx, chromePath)

	pageURL, stopPages, err := servePages()
	if err != nil {
		return 0, err
	}
	defer stopPages()

	dir, err := os.MkdirTemp("", "cdprelay-soak-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	auditPath := filepath.Join(dir, "audit.jsonl")
	pols := policies()
	file := pols[0]
	file.Audit = app.AuditConfig{RingSize: 1 << 16, File: auditPath}
	pols[0].Audit, pols[1].Audit = file.Audit, file.Audit

	fmt.Printf("soak: %v, a fault every %v; %s, %s, %d CPUs\n", o.duration, o.faultEvery, version, runtime.Version(), runtime.NumCPU())
	// The whole product, as cdprelay serve assembles it: the ingress
	// guard, the audit log and its file, the live view, the relay.
	var a *app.App
	env, err := testenv.Start(ctx, testenv.Options{
		DebugPort: true,
		Build: func(addr string, log *slog.Logger) (testenv.Served, error) {
			var err error
			a, err = app.New(app.Config{
				Addr:       addr,
				Logger:     log,
				File:       file,
				Relay:      relay.Config{ExtensionWait: o.extWait},
				Screencast: screencast.Config{MaxFPS: 5, MaxWidth: 640, MaxHeight: 480, Quality: 50},
			})
			if err != nil {
				return testenv.Served{}, err
			}
			return testenv.Served{Relay: a.Relay(), Handler: a, Close: a.Close}, nil
		},
	})
	if err != nil {
		return 0, err
	}
	envClosed := false
	defer func() {
		if !envClosed {
			env.Close()
		}
	}()
	fmt.Printf("relay on %s; its log and the browser's: %s\n", env.Addr, env.LogPath)
	srv := env.Relay
	ring, sink := a.Audit().Ring(), a.Audit().Sink()
	def := srv.Default()
	defID := def.ID()

	per, err := newPerson(ctx, env.BrowserWS)
	if err != nil {
		return 0, err
	}
	defer per.c.Close()
	if _, err := per.openTab(pageURL + "?anim=1"); err != nil {
		return 0, err
	}
	for start := time.Now(); viewerTab(def) == 0; time.Sleep(100 * time.Millisecond) {
		if time.Since(start) > 15*time.Second {
			return 0, errors.New("the extension did not offer the person's animated tab")
		}
	}
	probeFI, err := startFakeInstance(ctx, srv, env.Addr, 2)
	if err != nil {
		return 0, fmt.Errorf("fake instance: %w", err)
	}
	hostileFI, err := startFakeInstance(ctx, srv, env.Addr, 1)
	if err != nil {
		return 0, fmt.Errorf("fake instance: %w", err)
	}
	pr, err := newProbe(ctx, t, probeFI)
	if err != nil {
		return 0, fmt.Errorf("probe client: %w", err)
	}

	// Everything but the client runs until the client is done.
	bg, stopBG := context.WithCancel(ctx)
	defer stopBG()
	var wg sync.WaitGroup
	res := newResources(t, o.warmup)
	aw := &auditWatch{t: t, ring: ring, instance: defID}
	sv := &survival{t: t}
	frozen := &frozenViewers{}
	viewerURL := "ws://" + env.Addr + "/viewer"
	wg.Go(func() { res.run(bg) })
	wg.Go(func() { aw.run(bg) })
	wg.Go(func() { pr.run(bg, 4) })
	viewStart := time.Now()
	wg.Go(func() { healthyViewer(bg, t, viewerURL, def, !o.smoke) })
	inj := &injector{t: t, env: env, app: a, person: per, pageURL: pageURL, viewerURL: viewerURL,
		probe: pr, hostileFI: hostileFI, frozen: frozen, policies: pols, extWait: o.extWait,
		survive: sv, audit: aw}
	faultCtx, stopFaults := context.WithTimeout(bg, o.duration)
	defer stopFaults()
	var fwg sync.WaitGroup
	fwg.Go(func() {
		// The first fault waits for the warm-up, so that the baseline is
		// the relay at work, not the relay under faults.
		select {
		case <-faultCtx.Done():
			return
		case <-time.After(o.warmup):
		}
		inj.run(faultCtx, o.faultEvery)
	})

	var lat latencies
	if err := runClient(ctx, t, &lat, sv, env.HTTPEndpoint(), pageURL, o.duration, o.deadline, o.verbose); err != nil {
		return 0, err
	}
	clientEnd := time.Now()
	stopFaults()
	fwg.Wait()
	stopBG()
	wg.Wait()
	frozen.closeAll()
	pr.client().Close()
	settled := res.settled(20 * time.Second)
	probed := pr.checkOnce()

	// The relay is the one that started, and still serves.
	if env.Relay != srv || srv.Default().ID() != defID {
		t.violate("the relay was replaced during the run")
	}
	if resp, err := http.Get(env.HTTPEndpoint() + "/json/version"); err != nil || resp.StatusCode != http.StatusOK {
		t.violate("the relay does not answer /json/version at the end: %v", err)
	} else {
		resp.Body.Close()
	}
	if resp, err := http.Get(env.HTTPEndpoint() + "/v1/audit?limit=1"); err != nil || resp.StatusCode != http.StatusOK {
		t.violate("the relay does not serve /v1/audit at the end: %v", err)
	} else {
		resp.Body.Close()
	}
	// Closing the App closes the audit log last, which flushes its file.
	env.Close()
	envClosed = true
	aw.read()
	auditLine := checkAuditFile(t, auditPath, ring.Last(), sink.Dropped())

	fmt.Println()
	fmt.Printf("soak: %v with %s\n", o.duration, version)
	fmt.Printf("client operations: %d (ok %d, failed %d)\n", t.sum("ops"), okCount(t), t.sum("failed"))
	fmt.Printf("  by operation: %s\n", t.line("ops"))
	fmt.Printf("  failed by cause: %s\n", t.line("failed"))
	for _, l := range lat.summary() {
		fmt.Printf("  %s\n", l)
	}
	fmt.Printf("faults injected: %d: %s\n", t.sum("faults"), t.line("faults"))
	fmt.Printf("  not injected: %s\n", t.line("faults not injected"))
	restart, reload := inj.longestDowntime()
	fmt.Printf("  tabs: %s; longest wait for the extension after a restart: %v, after a reload: %v\n", t.line("tab faults"), restart.Round(time.Millisecond), reload.Round(time.Millisecond))
	fmt.Printf("  detours: %s; tab attached again %s after its return (mean)\n", t.line("detours"), mean(t, "detour back (ms)", "detour to a browser page"))
	fmt.Printf("  the client lost: %s\n", t.line("client lost"))
	fmt.Printf("  hostile frames: %d sent; second client on the default instance: %s\n", t.sum("hostile frames"), t.line("second client"))
	fmt.Printf("  viewers: %s\n", t.line("viewer"))
	fmt.Printf("  healthy viewer: %s\n", frozen.rates(t, viewStart, clientEnd))
	fmt.Printf("probe (fake instance): %s; %d distinct commands at the extension, slowest answer %v\n",
		t.line("probe"), probed, time.Duration(pr.maxL.Load()).Round(time.Millisecond))
	fmt.Printf("checks: %s\n", t.line("checks"))
	fmt.Println(settled)
	fmt.Println(auditLine)
	fmt.Printf("  audit records by kind: %s\n", t.line("audit"))
	t.printViolations(os.Stdout)
	return t.violationCount(), nil
}

func okCount(t *tally) int {
	return t.sum("ops") - t.sum("failed")
}
