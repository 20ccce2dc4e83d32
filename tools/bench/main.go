package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/pprof"
	"slices"
	"syscall"
	"time"

	"github.com/cdprelay/cdprelay/internal/cdptest"
	"github.com/cdprelay/cdprelay/internal/chromium"
)

type options struct {
	rounds, warmRounds int
	warmup             int // evaluations before each visit's measurements
	evals, evals16     int // per visit
	shots, shots16     int // per visit
	inExt, inExt16     int // per round, inside the extension
	width, height      int
	chrome             string
	out                string
	goBench            string
	goBenchCmd         string
	cpuProfile         string
	bare               bool
	smoke              bool
}

func main() {
	var o options
	flag.IntVar(&o.rounds, "rounds", 10, "measured rounds; each visits direct, extension and cdprelay once")
	flag.IntVar(&o.warmRounds, "warm-rounds", 1, "rounds run first and not counted")
	flag.IntVar(&o.warmup, "warmup", 200, "Runtime.evaluate calls at the start of each visit, not counted")
	flag.IntVar(&o.evals, "evals", 800, "Runtime.evaluate calls per visit, one at a time")
	flag.IntVar(&o.evals16, "evals16", 3000, "Runtime.evaluate calls per visit, 16 in flight")
	flag.IntVar(&o.shots, "shots", 6, "screenshots per visit, one at a time")
	flag.IntVar(&o.shots16, "shots16", 16, "screenshots per visit, 16 in flight")
	flag.IntVar(&o.inExt, "inext", 800, "chrome.debugger calls per round inside the extension, one at a time")
	flag.IntVar(&o.inExt16, "inext16", 3000, "chrome.debugger calls per round inside the extension, 16 in flight")
	flag.IntVar(&o.width, "width", 640, "viewport width for screenshots, CSS pixels")
	flag.IntVar(&o.height, "height", 540, "viewport height for screenshots, CSS pixels")
	flag.StringVar(&o.chrome, "chrome", "", "Chromium binary (default: $CHROME_PATH, then Debian's chromium)")
	flag.StringVar(&o.out, "out", "", "write the report to this Markdown file")
	flag.StringVar(&o.goBench, "gobench", "", "output of `go test -bench` to include in the report")
	flag.StringVar(&o.goBenchCmd, "gobench-cmd", "", "the command that produced -gobench, for the report")
	flag.StringVar(&o.cpuProfile, "cpuprofile", "", "write this process's CPU profile (client, peer and relay) to this file")
	flag.BoolVar(&o.bare, "bare", false, "measure the relay alone (relay.New) instead of the product as cdprelay serve assembles it")
	flag.BoolVar(&o.smoke, "smoke", false, "a few seconds: every path and workload a few times, no report; exits non-zero on failure")
	flag.Parse()
	if o.smoke {
		o.rounds, o.warmRounds, o.warmup = 1, 0, 5
		o.evals, o.evals16, o.shots, o.shots16, o.inExt, o.inExt16 = 20, 64, 1, 4, 20, 64
		o.out, o.goBench = "", ""
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if o.cpuProfile != "" {
		f, err := os.Create(o.cpuProfile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	if err := run(ctx, o); err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// Path names, in visiting order.
const (
	pathDirect = "direct"
	pathExt    = "extension"
	pathRelay  = "cdprelay"
)

// Workload keys.
const (
	evalSeq = "evaluate c=1"
	evalPar = "evaluate c=16"
	shotSeq = "screenshot c=1"
	shotPar = "screenshot c=16"
	// The extension's echo, measured on the extension path.
	echoSeq = "echo c=1"
	echoPar = "echo c=16"
)

// results holds every sample, by path and workload key.
type results struct {
	opts      options
	started   time.Time
	chromeVer string
	pngBytes  int
	work      []workload
	samples   map[string]map[string][]sample
	inExt     []inExtSample
	// The relay's own time per command, timed at its sockets, one
	// evaluation at a time: inside it, and on the client's extra socket.
	inside, hops []time.Duration
	dropped      int
	roundInside  []float64 // per round, p50 of inside + hops in µs
}

func (res *results) add(path, key string, s sample) {
	if res.samples[path] == nil {
		res.samples[path] = map[string][]sample{}
	}
	res.samples[path][key] = append(res.samples[path][key], s)
}

// addTapped takes what the tap timed in one visit, and keeps it when the
// visit counts.
func (res *results) addTapped(t *tap, keep bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	defer func() { t.inside, t.hops, t.dropped = nil, nil, 0 }()
	if !keep {
		return
	}
	if len(t.inside) > 0 {
		sum := make([]time.Duration, len(t.inside))
		for i := range sum {
			sum[i] = t.inside[i] + t.hops[i]
		}
		res.roundInside = append(res.roundInside, micros(percentile(sorted(sum), 50)))
	}
	res.inside = append(res.inside, t.inside...)
	res.hops = append(res.hops, t.hops...)
	res.dropped += t.dropped
}

var (
	evalParams = []byte(`{"expression":"1"}`)
	shotParams = []byte(`{"format":"png"}`)
)

// bench is one run: a browser, the three paths to its tab, and what they
// measured.
type bench struct {
	o       options
	res     *results
	pgid    int           // Chromium's process group
	root    *cdptest.Conn // browser-level connection to Chromium's own port
	peer    *extPeer      // the extension path, which also runs echo and the loop inside the extension
	relay   *relayPath
	tap     *tap   // on the sockets the relay is served on
	metrics []byte // Emulation.setDeviceMetricsOverride params
	warm    []workload
	echo    []workload
}

func run(ctx context.Context, o options) (err error) {
	chromePath, err := chromium.Find(o.chrome)
	if err != nil {
		return err
	}
	version, err := chromium.Version(ctx, chromePath)
	if err != nil {
		return err
	}
	var goBench []byte
	if o.goBench != "" {
		if goBench, err = os.ReadFile(o.goBench); err != nil {
			return err
		}
	}
	b := &bench{
		o: o,
		res: &results{opts: o, started: time.Now(), chromeVer: version, samples: map[string]map[string][]sample{}, work: []workload{
			{key: evalSeq, method: "Runtime.evaluate", params: evalParams, conc: 1, n: o.evals},
			{key: evalPar, method: "Runtime.evaluate", params: evalParams, conc: 16, n: o.evals16},
			{key: shotSeq, method: "Page.captureScreenshot", params: shotParams, conc: 1, n: o.shots},
			{key: shotPar, method: "Page.captureScreenshot", params: shotParams, conc: 16, n: o.shots16},
		}},
		tap:     &tap{},
		metrics: jsonParams("width", o.width, "height", o.height, "deviceScaleFactor", 1, "mobile", false),
		warm: []workload{
			{method: "Runtime.evaluate", params: evalParams, conc: 1, n: o.warmup},
			{method: "Page.captureScreenshot", params: shotParams, conc: 1, n: 2},
		},
		// The extension answers a method it does not know at once, with an
		// error: its WebSocket and JSON round trip without chrome.debugger.
		echo: []workload{
			{key: echoSeq, method: "cdprelay.bench.echo", params: []byte(`[]`), conc: 1, n: o.evals, raw: true},
			{key: echoPar, method: "cdprelay.bench.echo", params: []byte(`[]`), conc: 16, n: o.evals16, raw: true},
		},
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	h := &host{}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(tapListener{Listener: ln, tap: b.tap})
	defer hs.Close()
	addr := ln.Addr().String()
	guid := newGUID()
	b.peer = newExtPeer(h, guid)
	// The extension's first connection goes to the peer.
	h.use(b.peer)

	extDir, err := os.MkdirTemp("", "cdprelay-bench-ext-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(extDir)
	logFile, err := os.CreateTemp("", "cdprelay-bench-chromium-*.log")
	if err != nil {
		return err
	}
	defer func() {
		logFile.Close()
		if err == nil {
			os.Remove(logFile.Name()) // kept only to explain a failure
		}
	}()
	lctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	browser, wsURL, err := launchBrowser(lctx, chromePath, extDir, "ws://"+addr+"/extension/"+guid, logFile)
	cancel()
	if err != nil {
		return fmt.Errorf("%w (browser log: %s)", err, logFile.Name())
	}
	defer browser.Stop(3 * time.Second)
	b.pgid = browser.PID()
	fmt.Fprintf(os.Stderr, "%s, debugging port %s\n", version, wsURL)

	if b.root, err = cdptest.DialConn(ctx, nil, wsURL, nil); err != nil {
		return err
	}
	defer b.root.Close()
	targetID, err := pageTarget(ctx, b.root)
	if err != nil {
		return err
	}
	b.peer.targetID = targetID
	direct := &directPath{root: b.root, targetID: targetID}
	rel := &relayPath{guid: guid, addr: addr, targetID: targetID, host: h, bare: o.bare}
	b.relay = rel
	defer func() {
		rel.release(context.Background())
		h.use(nil)
	}()

	if err := drawPage(ctx, direct, o.width, o.height); err != nil {
		return err
	}
	for round := range o.warmRounds + o.rounds {
		for _, p := range []path{direct, b.peer, rel} {
			vctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
			err := visit(vctx, p, func(r route) error { return b.measure(vctx, p, r, round) })
			cancel()
			if err != nil {
				return fmt.Errorf("%s: %w (browser log: %s)", p.name(), err, logFile.Name())
			}
		}
	}

	if o.smoke {
		fmt.Fprintln(os.Stderr, "smoke: every path answered every workload")
		return nil
	}
	rep := newReport(b.res, goBench)
	rep.print(os.Stdout)
	if o.out != "" {
		if err := rep.writeMarkdown(o.out); err != nil {
			return err
		}
		fmt.Fprintln(os.Stderr, "wrote", o.out)
	}
	return nil
}

// measure runs every workload on p, attached as r, in one visit of round
// (counted from 0, warm-up rounds first).
func (b *bench) measure(ctx context.Context, p path, r route, round int) error {
	// Emulation belongs to the session: set it on every visit.
	if _, err := r.call(ctx, "Emulation.setDeviceMetricsOverride", b.metrics); err != nil {
		return err
	}
	for _, w := range b.warm {
		if _, err := w.run(ctx, r, b.pgid); err != nil {
			return err
		}
	}
	counted := round >= b.o.warmRounds
	line := fmt.Sprintf("round %d/%d %-9s", round+1-b.o.warmRounds, b.o.rounds, p.name())
	if !counted {
		line = fmt.Sprintf("warm-up   %-9s", p.name())
	}
	work := b.res.work
	if p == path(b.peer) {
		work = append(slices.Clip(work), b.echo...)
	}
	for _, w := range work {
		timed := p == path(b.relay) && w.key == evalSeq
		if timed {
			r.tap = b.tap
			b.tap.arm(b.relay.client.LocalAddr().String())
		}
		s, err := w.run(ctx, r, b.pgid)
		r.tap = nil
		if timed {
			b.tap.disarm()
			b.res.addTapped(b.tap, counted)
		}
		if err != nil {
			return err
		}
		if w.method == "Page.captureScreenshot" {
			b.res.pngBytes = max(b.res.pngBytes, base64Len(s.size))
		}
		if counted {
			b.res.add(p.name(), w.key, s)
		}
		if w.conc == 1 {
			line += fmt.Sprintf("  %s p50 %s", w.key, fmtDur(percentile(sorted(s.lat), 50)))
		} else {
			line += fmt.Sprintf("  %s %.0f/s", w.key, float64(len(s.lat))/s.elapsed.Seconds())
		}
	}
	fmt.Fprintln(os.Stderr, line)
	if p != path(b.peer) {
		return nil
	}
	// The extension holds the tab now: time chrome.debugger on its own.
	s, err := measureInExtension(ctx, b.root, b.peer.tab, b.o.warmup, b.o.inExt, b.o.inExt16, 16, b.pgid)
	if err != nil {
		return fmt.Errorf("inside the extension: %w", err)
	}
	if counted {
		b.res.inExt = append(b.res.inExt, s)
	}
	return nil
}

// visit opens p, runs fn on it and releases it.
func visit(ctx context.Context, p path, fn func(route) error) error {
	r, err := p.open(ctx)
	if err != nil {
		return err
	}
	err = fn(r)
	if rerr := p.release(ctx); err == nil {
		err = rerr
	}
	return err
}

// pageTarget returns the target id of the browser's one tab.
func pageTarget(ctx context.Context, root *cdptest.Conn) (string, error) {
	res, err := root.Call(ctx, "", "Target.getTargets", nil)
	if err != nil {
		return "", err
	}
	var targets struct {
		TargetInfos []struct {
			TargetID string `json:"targetId"`
			Type     string `json:"type"`
		} `json:"targetInfos"`
	}
	if err := json.Unmarshal(res, &targets); err != nil {
		return "", err
	}
	for _, t := range targets.TargetInfos {
		if t.Type == "page" {
			return t.TargetID, nil
		}
	}
	return "", errors.New("the browser has no tab")
}

// drawPage fills the tab with a canvas of noise the size of the viewport,
// so that its PNG does not compress: about 3 bytes per pixel. The noise is
// seeded, so every run shoots the same picture.
func drawPage(ctx context.Context, direct *directPath, w, h int) error {
	const draw = `((w, h) => {
  document.body.style.margin = "0";
  const c = document.createElement("canvas");
  c.width = w; c.height = h; c.style.display = "block";
  document.body.replaceChildren(c);
  const g = c.getContext("2d"), img = g.createImageData(w, h), d = img.data;
  let s = 0x9e3779b9;
  for (let i = 0; i < d.length; i++) {
    s ^= s << 13; s ^= s >>> 17; s ^= s << 5;
    d[i] = (i & 3) === 3 ? 255 : s & 255;
  }
  g.putImageData(img, 0, 0);
  return d.length;
})`
	return visit(ctx, direct, func(r route) error {
		_, err := r.call(ctx, "Runtime.evaluate", jsonParams("expression", fmt.Sprintf("%s(%d, %d)", draw, w, h)))
		return err
	})
}

// base64Len estimates the decoded size of a {"data":"<base64>"} result of
// n bytes.
func base64Len(n int) int { return max(n-len(`{"data":""}`), 0) * 3 / 4 }

func newGUID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
