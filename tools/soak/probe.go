package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cdprelay/cdprelay/extension"
	"github.com/cdprelay/cdprelay/internal/cdptest"
	"github.com/cdprelay/cdprelay/internal/fakeext"
	"github.com/cdprelay/cdprelay/relay"
)

// probeTimeout bounds each probe command: the fake extension answers
// within a few milliseconds, so anything near this is a hang.
const probeTimeout = 10 * time.Second

// fakeInstance is an instance of the relay whose extension is
// internal/fakeext, beside the real browser's: what headless Chromium
// cannot do (a person cancelling the debugging bar) is injected there.
type fakeInstance struct {
	inst *relay.Instance
	ext  *fakeext.Ext
	ws   string // the instance's browser WebSocket URL
}

func startFakeInstance(ctx context.Context, srv *relay.Server, base string, tabs int) (*fakeInstance, error) {
	inst, err := srv.NewInstance()
	if err != nil {
		return nil, err
	}
	var ts []fakeext.Tab
	for i := range tabs {
		ts = append(ts, fakeext.Tab{ID: i + 1, URL: fmt.Sprintf("https://example.com/%d", i+1), Title: "fake"})
	}
	ext, err := fakeext.Dial(ctx, "ws://"+base+"/extension/"+inst.GUID(), fakeext.Options{
		// The ingress guard lets our extension's origin pair.
		Origin: "chrome-extension://" + extension.ID,
		Tabs:   ts,
		// A little delay keeps commands in flight when a fault strikes.
		Gate: func(method string, _ []json.RawMessage) {
			if method == "chrome.debugger.sendCommand" {
				time.Sleep(time.Duration(rand.IntN(20)) * time.Millisecond)
			}
		},
	})
	if err != nil {
		return nil, err
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := inst.WaitReady(wctx); err != nil {
		return nil, err
	}
	return &fakeInstance{inst: inst, ext: ext, ws: "ws://" + base + "/devtools/browser/" + inst.GUID()}, nil
}

// probe is a CDP client of a fake instance that sends numbered commands
// all the time and checks each one's answer.
type probe struct {
	t  *tally
	fi *fakeInstance

	mu       sync.Mutex
	c        *cdptest.Client // guarded by mu; replaced on reconnect
	sessions map[string]bool // guarded by mu: attached tab sessions

	next atomic.Int64 // the number of the next probe command
	maxL atomic.Int64 // the slowest answer, ns
}

func newProbe(ctx context.Context, t *tally, fi *fakeInstance) (*probe, error) {
	p := &probe{t: t, fi: fi, sessions: map[string]bool{}}
	if err := p.connect(ctx); err != nil {
		return nil, err
	}
	return p, nil
}

// connect dials the instance and auto-attaches to its tabs, as Playwright
// does first.
func (p *probe) connect(ctx context.Context) error {
	c, err := cdptest.Dial(ctx, p.fi.ws, nil)
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.c = c
	clear(p.sessions)
	p.mu.Unlock()
	go p.follow(ctx, c)
	cctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	_, err = c.Call(cctx, "", "Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true})
	return err
}

func (p *probe) client() *cdptest.Client {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.c
}

// follow keeps the set of attached sessions from c's events.
func (p *probe) follow(ctx context.Context, c *cdptest.Client) {
	from := 0
	for {
		m, i, err := c.WaitMessage(ctx, from, func(m cdptest.Message) bool {
			return m.Method == "Target.attachedToTarget" || m.Method == "Target.detachedFromTarget"
		})
		if err != nil {
			return
		}
		from = i + 1
		var ev struct {
			SessionID string `json:"sessionId"`
		}
		json.Unmarshal(m.Params, &ev)
		p.mu.Lock()
		if p.c == c {
			p.sessions[ev.SessionID] = m.Method == "Target.attachedToTarget"
			if !p.sessions[ev.SessionID] {
				delete(p.sessions, ev.SessionID)
			}
		}
		p.mu.Unlock()
	}
}

func (p *probe) session() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for s := range p.sessions {
		out = append(out, s)
	}
	if len(out) == 0 {
		return ""
	}
	return out[rand.IntN(len(out))]
}

// run sends probe commands from par goroutines until ctx ends.
func (p *probe) run(ctx context.Context, par int) {
	var wg sync.WaitGroup
	for range par {
		wg.Go(func() {
			for ctx.Err() == nil {
				p.once(ctx)
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
	wg.Wait()
}

func (p *probe) once(ctx context.Context) {
	sess := p.session()
	if sess == "" {
		time.Sleep(50 * time.Millisecond)
		return
	}
	c := p.client()
	n := p.next.Add(1)
	cctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	start := time.Now()
	res, err := c.Call(cctx, sess, "Soak.probe", map[string]any{"n": n})
	if d := int64(time.Since(start)); d > p.maxL.Load() {
		p.maxL.Store(d)
	}
	var ce *cdptest.Error
	switch {
	case err == nil:
		var r struct {
			Echo struct {
				Method string `json:"method"`
				Params struct {
					N int64 `json:"n"`
				} `json:"params"`
			} `json:"echo"`
		}
		if json.Unmarshal(res, &r) != nil || r.Echo.Method != "Soak.probe" || r.Echo.Params.N != n {
			p.t.violate("probe %d got the answer of another command: %s", n, res)
		}
		p.t.inc("probe", "ok")
	case errors.As(err, &ce):
		c := "other"
		switch {
		case strings.Contains(ce.Message, "Target detached"):
			c = "tab detached"
		case strings.Contains(ce.Message, "Session with given id not found"):
			c = "session gone"
		}
		p.t.inc("probe", "error: "+c)
		if c == "other" {
			p.t.note("probe error", "%s", ce.Message)
		}
	case ctx.Err() != nil:
	case cctx.Err() != nil:
		p.t.violate("probe %d: neither an answer nor an error within %v", n, probeTimeout)
	default:
		// The connection ended; the relay closes a client only with a
		// reason, which the error carries.
		p.t.inc("probe", "connection closed")
		p.t.note("probe closed", "%v", err)
		p.mu.Lock()
		same := p.c == c
		p.mu.Unlock()
		if same {
			if err := p.connect(ctx); err != nil && ctx.Err() == nil {
				p.t.note("probe reconnect", "%v", err)
				time.Sleep(time.Second)
			}
		}
	}
}

// checkOnce verifies that the fake extension received every probe command
// at most once: the relay never sends a client's command twice.
func (p *probe) checkOnce() (commands int) {
	seen := map[int64]int{}
	for _, cmd := range p.fi.ext.Commands() {
		if cmd.Method != "chrome.debugger.sendCommand" {
			continue
		}
		var args []json.RawMessage
		if json.Unmarshal(cmd.Params, &args) != nil || len(args) < 3 {
			continue
		}
		var method string
		json.Unmarshal(args[1], &method)
		if method != "Soak.probe" {
			continue
		}
		var params struct {
			N int64 `json:"n"`
		}
		json.Unmarshal(args[2], &params)
		seen[params.N]++
	}
	for n, k := range seen {
		if k > 1 {
			p.t.violate("probe command %d reached the extension %d times", n, k)
		}
	}
	return len(seen)
}

// cancelByUser plays a person cancelling the debugging bar of one of the
// fake instance's attached tabs (chrome.debugger.onDetach with
// canceled_by_user), then sharing the tab again. The client must be told
// of both.
func (p *probe) cancelByUser(ctx context.Context) error {
	var tabID int
	for _, tb := range p.fi.ext.Tabs() {
		if p.fi.ext.Attached(tb.ID) {
			tabID = tb.ID
			break
		}
	}
	if tabID == 0 {
		return errors.New("no attached tab")
	}
	c := p.client()
	from := len(c.Messages())
	p.fi.ext.DetachByBrowser(tabID, "canceled_by_user")
	wctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if _, _, err := c.WaitMessage(wctx, from, func(m cdptest.Message) bool { return m.Method == "Target.detachedFromTarget" }); err != nil {
		if ctx.Err() == nil {
			p.t.violate("canceled_by_user on tab %d: the client was not told (%v)", tabID, err)
		}
		return nil
	}
	// The person shares the tab again.
	time.Sleep(300 * time.Millisecond)
	from = len(c.Messages())
	p.fi.ext.OpenTab(fakeext.Tab{ID: tabID, URL: fmt.Sprintf("https://example.com/%d", tabID), Title: "fake"})
	wctx2, cancel2 := context.WithTimeout(ctx, 5*time.Second)
	defer cancel2()
	if _, _, err := c.WaitMessage(wctx2, from, func(m cdptest.Message) bool { return m.Method == "Target.attachedToTarget" }); err != nil && ctx.Err() == nil {
		p.t.violate("tab %d shared again after canceled_by_user: the client did not get it back (%v)", tabID, err)
	}
	return nil
}

// checkPolicy sends a command that only the deny policy refuses and
// checks that the policy just set is the one in force.
func (p *probe) checkPolicy(ctx context.Context, denied bool) {
	cctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	_, err := p.client().Call(cctx, "", "Soak.denied", map[string]any{})
	var ce *cdptest.Error
	isDenial := errors.As(err, &ce) && strings.Contains(ce.Message, "Soak.denied")
	switch {
	case ctx.Err() != nil:
	case cctx.Err() != nil:
		p.t.violate("policy check: no answer within %v", probeTimeout)
	case denied && !isDenial:
		p.t.violate("policy reload: Soak.denied should be refused now, got %v", err)
	case !denied && isDenial:
		p.t.violate("policy reload: Soak.denied should pass now, got %v", err)
	case !denied && err != nil:
		p.t.note("policy check", "%v", err)
	default:
		p.t.inc("checks", "policy in force")
	}
}
