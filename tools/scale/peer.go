package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/cdprelay/cdprelay/internal/cdptest"
	"github.com/cdprelay/cdprelay/internal/fakeext"
)

// request is one instruction from the relay process to the peer process.
type request struct {
	Op      string   `json:"op"` // "extensions", "clients" or "phase"
	Base    string   `json:"base,omitempty"`
	GUIDs   []string `json:"guids,omitempty"`
	Dialers int      `json:"dialers,omitempty"`
	Rate    float64  `json:"rate,omitempty"`    // phase: commands per second per client
	Seconds float64  `json:"seconds,omitempty"` // phase: how long
}

// dialed answers "extensions" and "clients".
type dialed struct {
	Connected int     `json:"connected"`
	Seconds   float64 `json:"seconds"`
}

// phaseResult answers "phase". Latencies are round trips from a command's
// write to its reply, in microseconds; LagP99 is how late the commands
// were written against their schedule, which grows when the relay holds
// the writes back.
type phaseResult struct {
	Sent     int64   `json:"sent"`
	Received int64   `json:"received"`
	Errors   int64   `json:"errors"`
	Seconds  float64 `json:"seconds"` // from the first command due to the last reply
	P50      float64 `json:"p50"`
	P95      float64 `json:"p95"`
	P99      float64 `json:"p99"`
	Max      float64 `json:"max"`
	LagP99   float64 `json:"lagP99"`
	CPU      float64 `json:"cpu"` // the peer process's CPU seconds
	// FirstError is the text of one error reply, for the report.
	FirstError string `json:"firstError,omitempty"`
}

// peerState is everything the peer process holds between requests; only
// the request loop touches it.
type peerState struct {
	exts    []*fakeext.Quick
	clients []*client
}

// runPeer serves requests from r until it ends, answering on w.
func runPeer(r io.Reader, w io.Writer) error {
	var st peerState
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	enc := json.NewEncoder(w)
	for sc.Scan() {
		var req request
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			return fmt.Errorf("peer: bad request: %w", err)
		}
		var resp any
		var err error
		switch req.Op {
		case "extensions":
			resp, err = st.dialExtensions(req)
		case "clients":
			resp, err = st.dialClients(req)
		case "phase":
			resp, err = st.phase(req)
		default:
			err = fmt.Errorf("unknown op %q", req.Op)
		}
		if err != nil {
			resp = map[string]string{"error": err.Error()}
		}
		if err := enc.Encode(resp); err != nil {
			return err
		}
	}
	for _, c := range st.exts {
		c.Close()
	}
	for _, c := range st.clients {
		c.conn.Close()
	}
	return sc.Err()
}

// forEach runs fn for 0..n-1 on at most par goroutines and returns the
// first error.
func forEach(n, par int, fn func(i int) error) error {
	var next atomic.Int64
	var first error
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range max(1, par) {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := fn(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	return first
}

var dialer = &websocket.Dialer{HandshakeTimeout: 30 * time.Second, ReadBufferSize: 1024, WriteBufferSize: 1024}

func (st *peerState) dialExtensions(req request) (dialed, error) {
	start := time.Now()
	exts := make([]*fakeext.Quick, len(req.GUIDs))
	err := forEach(len(req.GUIDs), req.Dialers, func(i int) error {
		q, err := fakeext.DialQuick(context.Background(), req.Base+"/extension/"+req.GUIDs[i], fakeext.QuickOptions{Dialer: dialer})
		if err != nil {
			return fmt.Errorf("extension %d: %w", i, err)
		}
		exts[i] = q
		return nil
	})
	for _, q := range exts {
		if q != nil {
			st.exts = append(st.exts, q)
		}
	}
	return dialed{Connected: len(st.exts), Seconds: time.Since(start).Seconds()}, err
}

// client is a CDP client of one instance, timing every command of a
// phase from its write to its reply.
type client struct {
	conn    *cdptest.Conn
	session string

	mu      sync.Mutex
	first   int64          // guarded by mu: id of the phase's first command; 0 between phases
	sentAt  []atomic.Int64 // guarded by mu (its elements are atomic): when each command was written, Unix ns
	samples []int64        // guarded by mu: the phase's round trips, ns
	last    time.Time      // guarded by mu: when the last reply came

	lags []int64 // owned by the sender during a phase: how late each command was written, ns

	received atomic.Int64
	errors   atomic.Int64
	firstErr atomic.Pointer[string]
}

func (st *peerState) dialClients(req request) (dialed, error) {
	start := time.Now()
	cs := make([]*client, len(req.GUIDs))
	err := forEach(len(req.GUIDs), req.Dialers, func(i int) error {
		c, err := dialClient(req.Base + "/devtools/browser/" + req.GUIDs[i])
		if err != nil {
			return fmt.Errorf("client %d: %w", i, err)
		}
		cs[i] = c
		return nil
	})
	for _, c := range cs {
		if c != nil {
			st.clients = append(st.clients, c)
		}
	}
	return dialed{Connected: len(st.clients), Seconds: time.Since(start).Seconds()}, err
}

// dialClient connects and auto-attaches to the instance's tab, as
// Playwright does first, and learns the tab's session id.
func dialClient(url string) (*client, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := cdptest.DialConn(ctx, dialer, url, nil)
	if err != nil {
		return nil, err
	}
	session, err := conn.AutoAttach(ctx, fakeext.QuickTargetID)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("auto-attach: %w", err)
	}
	c := &client{conn: conn, session: session}
	conn.OnOtherReply(c.reply)
	return c, nil
}

// reply times the reply to the phase's command id, from the connection's
// read loop.
func (c *client) reply(id int64, failed bool, frame []byte) {
	now := time.Now()
	if failed {
		if c.errors.Add(1) == 1 {
			e := string(frame)
			c.firstErr.Store(&e)
		}
	}
	c.mu.Lock()
	if k := id - c.first; c.first != 0 && k >= 0 && k < int64(len(c.sentAt)) {
		if at := c.sentAt[k].Load(); at != 0 {
			c.samples = append(c.samples, now.UnixNano()-at)
		}
	}
	c.last = now
	c.mu.Unlock()
	c.received.Add(1)
}

// send writes commands at rate until d has passed, each as soon as it is
// due (command k at t0 + k/rate), and returns how many it wrote. The
// sender wakes every few milliseconds, so a command may wait that long: its
// round trip is timed from its write, and the wait is reported as its lag.
// A relay that cannot keep up holds the writes back, which shows as lag
// and as fewer commands done than offered.
func (c *client) send(t0 time.Time, sentAt []atomic.Int64, first int64, rate float64, total int64) (int64, error) {
	var msg []byte
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	var sent int64
	for sent < total {
		due := min(total, int64(time.Since(t0).Seconds()*rate)+1)
		for ; sent < due; sent++ {
			msg = append(msg[:0], `{"id":`...)
			msg = strconv.AppendInt(msg, first+sent, 10)
			msg = append(msg, `,"sessionId":"`...)
			msg = append(msg, c.session...)
			msg = append(msg, `","method":"Runtime.evaluate","params":{"expression":"1"}}`...)
			now := time.Now()
			c.lags = append(c.lags, int64(now.Sub(t0))-int64(float64(sent)/rate*float64(time.Second)))
			sentAt[sent].Store(now.UnixNano())
			if err := c.conn.WriteRaw(msg); err != nil {
				return sent, err
			}
		}
		<-tick.C
	}
	return sent, nil
}

// phaseID separates the ids of successive phases, so that a late reply
// from one phase is never taken for a reply of the next.
var phaseID atomic.Int64

func (st *peerState) phase(req request) (phaseResult, error) {
	if len(st.clients) == 0 {
		return phaseResult{}, errors.New("no clients")
	}
	first := phaseID.Add(1) * 1_000_000_000
	t0 := time.Now().Add(20 * time.Millisecond)
	total := int64(req.Rate * req.Seconds)
	for _, c := range st.clients {
		c.mu.Lock()
		c.samples = make([]int64, 0, total)
		c.sentAt = make([]atomic.Int64, total)
		c.first = first
		c.mu.Unlock()
		c.lags = make([]int64, 0, total)
		c.received.Store(0)
		c.errors.Store(0)
	}
	cpu0 := cpuTime()
	var sent atomic.Int64
	var sendErr error
	var mu sync.Mutex
	var wg sync.WaitGroup
	time.Sleep(time.Until(t0))
	for _, c := range st.clients {
		wg.Go(func() {
			n, err := c.send(t0, c.sentAt, first, req.Rate, total)
			sent.Add(n)
			if err != nil {
				mu.Lock()
				sendErr = err
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	// Replies still on their way get a moment; what has not come by then
	// is reported as missing (sent − received).
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		var got int64
		for _, c := range st.clients {
			got += c.received.Load()
		}
		if got >= sent.Load() {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	res := phaseResult{Sent: sent.Load(), CPU: (cpuTime() - cpu0).Seconds()}
	var all, lags []int64
	var last time.Time
	for _, c := range st.clients {
		c.mu.Lock()
		all = append(all, c.samples...)
		if c.last.After(last) {
			last = c.last
		}
		c.first = 0 // late replies are not this phase's any more
		c.mu.Unlock()
		lags = append(lags, c.lags...)
		res.Received += c.received.Load()
		res.Errors += c.errors.Load()
		if e := c.firstErr.Swap(nil); e != nil && res.FirstError == "" {
			res.FirstError = *e
		}
	}
	res.Seconds = last.Sub(t0).Seconds()
	q := quantiles(all, 0.50, 0.95, 0.99, 1)
	us := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
	res.P50, res.P95, res.P99, res.Max = us(q[0]), us(q[1]), us(q[2]), us(q[3])
	ql := quantiles(lags, 0.99)
	res.LagP99 = us(ql[0])
	return res, sendErr
}
