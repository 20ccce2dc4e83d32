package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/cdprelay/cdprelay/internal/app"
	"github.com/cdprelay/cdprelay/relay"
)

func main() {
	var o options
	flag.StringVar(&o.scenario, "scenario", "idle", "idle: N instances with a connected extension and no client; active: N instances each with a busy client")
	flag.IntVar(&o.n, "n", 1000, "instances")
	flag.StringVar(&o.rates, "rates", "100,250,500,1000", "active: commands per second per client, one phase each, in this order")
	flag.DurationVar(&o.phase, "phase", 10*time.Second, "active: length of each phase")
	flag.IntVar(&o.dialers, "dialers", 64, "connections dialed at once")
	flag.StringVar(&o.memProfile, "memprofile", "", "idle: write a heap profile of the relay with every extension connected")
	flag.BoolVar(&o.bare, "bare", false, "measure the relay alone (relay.New) instead of the product as cdprelay serve assembles it")
	smoke := flag.Bool("smoke", false, "a few seconds: both scenarios on a few instances; exits non-zero when a command is lost or fails")
	peer := flag.Bool("peer", false, "run as the child that plays extensions and clients (internal)")
	flag.Parse()

	if err := raiseFileLimit(); err != nil {
		fmt.Fprintln(os.Stderr, "scale:", err)
		os.Exit(1)
	}
	var err error
	switch {
	case *peer:
		err = runPeer(os.Stdin, os.Stdout)
	case *smoke:
		err = runSmoke(o)
	default:
		err = run(o)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "scale:", err)
		os.Exit(1)
	}
}

type options struct {
	scenario   string
	n          int
	rates      string
	phase      time.Duration
	dialers    int
	memProfile string
	bare       bool
	// strict fails the active scenario on a lost or failed command.
	strict bool
}

func run(o options) error {
	if o.n < 1 {
		return errors.New("-n must be at least 1")
	}
	if need := uint64(o.n) + 256; fileLimit() < need {
		return fmt.Errorf("%d instances need about %d open files; the limit is %d (ulimit -Hn)", o.n, need, fileLimit())
	}
	if o.memProfile != "" {
		// Finer than the default sampling, so that small per-connection
		// allocations show up with their true share.
		runtime.MemProfileRate = 4096
	}
	rl, err := startRelay(o.n, o.bare)
	if err != nil {
		return err
	}
	defer rl.stop()
	child, err := startPeer()
	if err != nil {
		return err
	}
	defer child.stop()
	what := "the product (internal/app)"
	if o.bare {
		what = "the bare relay"
	}
	fmt.Printf("scale: %s, %d instances of %s; relay pid %d, peers in child pid %d; %s %s/%s, %d CPUs, GOMAXPROCS %d; load average %s\n",
		o.scenario, o.n, what, os.Getpid(), child.cmd.Process.Pid, runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.GOMAXPROCS(0), loadAvg())
	switch o.scenario {
	case "idle":
		return runIdle(o, rl, child)
	case "active":
		rates, err := parseRates(o.rates)
		if err != nil {
			return err
		}
		return runActive(o, rates, rl, child)
	}
	return fmt.Errorf("-scenario %q: want idle or active", o.scenario)
}

func parseRates(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		r, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || r <= 0 {
			return nil, fmt.Errorf("-rates: %q is not a positive number", f)
		}
		out = append(out, r)
	}
	return out, nil
}

// testRelay is the relay on a loopback port.
type testRelay struct {
	srv   *relay.Server
	close func(context.Context) error
	hs    *http.Server
	base  string // ws://127.0.0.1:port
}

func startRelay(n int, bare bool) (*testRelay, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	rc := relay.Config{
		MaxInstances: n + 1,
		// Minting ten thousand instances and connecting them takes a while
		// on a busy machine; none may expire meanwhile.
		UnclaimedTTL: time.Hour,
	}
	r := &testRelay{base: "ws://" + ln.Addr().String()}
	var h http.Handler
	if bare {
		rc.Logger = slog.New(slog.DiscardHandler)
		if r.srv, err = relay.New(rc); err != nil {
			return nil, err
		}
		h, r.close = r.srv, r.srv.Close
	} else {
		a, err := app.New(app.Config{Addr: ln.Addr().String(), Relay: rc})
		if err != nil {
			return nil, err
		}
		h, r.srv, r.close = a, a.Relay(), a.Close
	}
	r.hs = &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go r.hs.Serve(ln)
	return r, nil
}

func (r *testRelay) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r.close(ctx)
	r.hs.Close()
}

// mint creates n instances and returns their guids.
func (r *testRelay) mint(n int) ([]*relay.Instance, error) {
	out := make([]*relay.Instance, 0, n)
	for range n {
		in, err := r.srv.NewInstance()
		if err != nil {
			return nil, err
		}
		out = append(out, in)
	}
	return out, nil
}

func guids(ins []*relay.Instance) []string {
	out := make([]string, len(ins))
	for i, in := range ins {
		out[i] = in.GUID()
	}
	return out
}

// waitReady waits until every instance has its extension's handshake.
func waitReady(ins []*relay.Instance, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for i, in := range ins {
		if err := in.WaitReady(ctx); err != nil {
			return fmt.Errorf("instance %d of %d: %w", i+1, len(ins), err)
		}
	}
	return nil
}

// peerProc is the child process and the pipes to it: one JSON request a
// line in, one JSON answer a line out.
type peerProc struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Scanner
}

func startPeer() (*peerProc, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, "-peer")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the peer process: %w", err)
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	return &peerProc{cmd: cmd, in: in, out: sc}, nil
}

// call sends req and decodes the answer into resp.
func (p *peerProc) call(req request, resp any) error {
	b, _ := json.Marshal(req)
	if _, err := p.in.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("peer %s: %w", req.Op, err)
	}
	if !p.out.Scan() {
		return fmt.Errorf("peer %s: the peer process ended: %v", req.Op, p.out.Err())
	}
	var e struct{ Error string }
	if json.Unmarshal(p.out.Bytes(), &e) == nil && e.Error != "" {
		return fmt.Errorf("peer %s: %s", req.Op, e.Error)
	}
	return json.Unmarshal(p.out.Bytes(), resp)
}

func (p *peerProc) stop() {
	p.in.Close() // the peer exits at the end of its input
	done := make(chan struct{})
	go func() { p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		p.cmd.Process.Kill()
		<-done
	}
}

func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	runtime.GC()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
