package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/cdprelay/cdprelay/relay"
)

// viewerTab finds the tab the live view watches: the person's animated tab
// of the default instance, or 0 while the extension has not offered it.
func viewerTab(in *relay.Instance) int64 {
	for _, tb := range in.Status().Tabs {
		if strings.Contains(tb.URL, "anim") {
			return tb.TabID
		}
	}
	return 0
}

func subscribeMsg(instance string, tab int64) []byte {
	b, _ := json.Marshal(map[string]any{"type": "subscribe", "instance": instance, "tab": tab})
	return b
}

// healthyViewer watches the animated tab and counts its frames until ctx
// ends, subscribing again whenever the tab goes (its status detached or
// stopped) and reconnecting whenever its socket ends.
//
// With stalls, a viewer without frames from a live tab for frameStall is
// a violation (watchFrames); the smoke, too short to tell, goes without.
func healthyViewer(ctx context.Context, t *tally, url string, in *relay.Instance, stalls bool) {
	for ctx.Err() == nil {
		watchOnce(ctx, t, url, in, stalls)
		select {
		case <-ctx.Done():
		case <-time.After(time.Second):
		}
	}
}

func watchOnce(ctx context.Context, t *tally, url string, in *relay.Instance, stalls bool) {
	conn, _, err := websocket.DefaultDialer.DialContext(ctx, url, nil)
	if err != nil {
		t.note("viewer", "dial: %v", err)
		return
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	var wmu sync.Mutex
	write := func(b []byte) {
		wmu.Lock()
		conn.WriteMessage(websocket.TextMessage, b)
		wmu.Unlock()
	}
	var answers atomic.Int64        // status and error messages received
	var frameAt, subAt atomic.Int64 // unix ns of the last frame, of the last subscribe
	var frames atomic.Int64         // frames received on this connection
	subAt.Store(time.Now().UnixNano())
	connCtx, endConn := context.WithCancel(ctx)
	defer endConn()
	if stalls {
		go watchFrames(connCtx, t, in, &frames, &frameAt, &subAt, func() {
			write([]byte(`{"type":"unsubscribe"}`))
			if tab := viewerTab(in); tab != 0 {
				write(subscribeMsg(in.ID(), tab))
			}
		})
	}
	subscribe := func() {
		// The tab may not be offered yet after a restart: try until it is.
		var tab int64
		for ; tab == 0 && ctx.Err() == nil; time.Sleep(200 * time.Millisecond) {
			tab = viewerTab(in)
		}
		if ctx.Err() != nil {
			return
		}
		before := answers.Load()
		subAt.Store(time.Now().UnixNano())
		write(subscribeMsg(in.ID(), tab))
		t.inc("viewer", "subscriptions")
		select {
		case <-ctx.Done():
			return
		case <-time.After(5 * time.Second):
		}
		if answers.Load() == before {
			// viewer/PROTOCOL.md: a subscribe is answered by the tab's
			// status, or by an error.
			t.violate("viewer: subscribe to tab %d got neither a status nor an error within 5 s", tab)
			write([]byte(`{"type":"unsubscribe"}`))
			write(subscribeMsg(in.ID(), tab))
		}
	}
	for {
		mt, b, err := conn.ReadMessage()
		if err != nil {
			return
		}
		if mt == websocket.BinaryMessage {
			frameAt.Store(time.Now().UnixNano())
			frames.Add(1)
			t.inc("viewer", healthyFrames)
			continue
		}
		var m struct {
			Type   string `json:"type"`
			Status string `json:"status"`
		}
		json.Unmarshal(b, &m)
		if m.Type == "status" || m.Type == "error" {
			answers.Add(1)
		}
		if m.Type == "status" {
			t.inc("viewer", "status "+m.Status)
		}
		switch {
		case m.Type == "hello":
			go subscribe()
		case m.Type == "status" && (m.Status == "detached" || m.Status == "stopped"):
			go func() {
				time.Sleep(500 * time.Millisecond)
				subscribe()
			}()
		case m.Type == "error":
			t.note("viewer error", "%s", b)
			go func() {
				time.Sleep(time.Second)
				subscribe()
			}()
		}
	}
}

// frameStall is how long the healthy viewer may go without a frame from
// the animated tab while the relay has it attached and not waiting: the
// page animates all the time, so the live view owes it frames.
const frameStall = 15 * time.Second

// watchFrames checks, until ctx ends, that the healthy viewer gets frames
// while the animated tab is attached. A stall is a violation, once until
// frames come again; resubscribe then asks the live view anew (a stalled
// live view that a new subscription mends is still a violation).
func watchFrames(ctx context.Context, t *tally, in *relay.Instance, frames, frameAt, subAt *atomic.Int64, resubscribe func()) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	stalled := int64(-1) // frames received when the current stall was found; -1 if none
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		frame := time.Unix(0, frameAt.Load())
		if stalled >= 0 {
			// A subscribe is answered with the tab's last frame, if it
			// has one: frames come again only when more follow.
			if frames.Load() >= stalled+3 {
				t.inc("viewer", "stalls ended")
				stalled = -1
			}
			continue
		}
		if time.Since(frame) < frameStall || time.Since(time.Unix(0, subAt.Load())) < frameStall {
			continue
		}
		live := false
		for _, tb := range in.Status().Tabs {
			if strings.Contains(tb.URL, "anim") && tb.Attached && tb.Waiting == "" {
				live = true
			}
		}
		if !live {
			continue
		}
		t.inc("viewer", "stalls")
		t.violate("viewer: no frame for %v from the animated tab, attached and not waiting", frameStall)
		stalled = frames.Load()
		resubscribe()
	}
}

// frozenViewers opens viewers that subscribe to the animated tab and then
// never read: the live view must drop them (or their frames) without
// slowing the tab, the client or the healthy viewer.
type frozenViewers struct {
	mu      sync.Mutex
	conns   []*websocket.Conn // guarded by mu; oldest first
	firstAt time.Time         // guarded by mu: when the first one froze
	before  int               // guarded by mu: the healthy viewer's frames by then
}

// open adds a frozen viewer, closing the oldest beyond keep.
func (f *frozenViewers) open(ctx context.Context, t *tally, url string, in *relay.Instance, keep int) error {
	d := websocket.Dialer{
		HandshakeTimeout: 5 * time.Second,
		NetDialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
			if tc, ok := c.(*net.TCPConn); ok {
				// A small window fills at once, so that the server's writes
				// stall as soon as it sends a frame or two.
				tc.SetReadBuffer(4096)
			}
			return c, err
		},
	}
	conn, _, err := d.DialContext(ctx, url, nil)
	if err != nil {
		return err
	}
	tab := viewerTab(in)
	if err := conn.WriteMessage(websocket.TextMessage, subscribeMsg(in.ID(), tab)); err != nil {
		conn.Close()
		return err
	}
	f.mu.Lock()
	if f.firstAt.IsZero() {
		f.firstAt, f.before = time.Now(), t.get("viewer", healthyFrames)
	}
	f.conns = append(f.conns, conn)
	var old []*websocket.Conn
	if len(f.conns) > keep {
		old = f.conns[:len(f.conns)-keep]
		f.conns = append([]*websocket.Conn(nil), f.conns[len(f.conns)-keep:]...)
	}
	f.mu.Unlock()
	for _, c := range old {
		c.Close()
	}
	return nil
}

const healthyFrames = "frames (healthy viewer)"

// rates is the healthy viewer's frames per second before the first frozen
// viewer and from then on, while one or two stay frozen.
func (f *frozenViewers) rates(t *tally, start, end time.Time) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	all := t.get("viewer", healthyFrames)
	if f.firstAt.IsZero() {
		return fmt.Sprintf("%.1f frames/s, no frozen viewer", float64(all)/end.Sub(start).Seconds())
	}
	return fmt.Sprintf("%.1f frames/s before the first frozen viewer, %.1f frames/s after",
		float64(f.before)/f.firstAt.Sub(start).Seconds(), float64(all-f.before)/end.Sub(f.firstAt).Seconds())
}

func (f *frozenViewers) closeAll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.conns {
		c.Close()
	}
	f.conns = nil
}
