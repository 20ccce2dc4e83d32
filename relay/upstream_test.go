package relay

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/relay/internal/cdp"
	"github.com/cdprelay/cdprelay/relay/internal/config"
	"github.com/cdprelay/cdprelay/relay/internal/core"
	"github.com/cdprelay/cdprelay/relay/internal/ext"
	"github.com/cdprelay/cdprelay/relay/internal/link"
)

// The extension connection as the core's upstream: the table of the calls
// pending on it, what takes a call out of it, and what its end does to
// each kind of call. The connections here have no socket: what they send
// stays in their queue, and the tests answer as the extension would.

func upstreamRig(t *testing.T) (*core.Instance, *ext.Conn, *core.ClientConn) {
	t.Helper()
	srv, err := New(config.Config{})
	if err != nil {
		t.Fatal(err)
	}
	in := srv.Default()
	x := ext.New(in, nil, in.Log)
	c := &core.ClientConn{Inst: in, P: link.NewPeer(nil, 64, 0), Log: in.Log}
	c.Ctx, c.Cancel = context.WithCancel(context.Background())
	t.Cleanup(c.Cancel)
	return in, x, c
}

// clientCall is a client command pending on tab, as Forward registers it.
func clientCall(c *core.ClientConn, id, tab int64) core.PendingCall {
	return core.PendingCall{Kind: core.CallClient, Client: c, ClientID: id, TabID: tab, M: core.LookupMethod([]byte("Runtime.evaluate")), Start: time.Now()}
}

// reply answers call id as the extension does, with result (or, when
// errText is set, that error).
func reply(x *ext.Conn, id int64, result, errText string) {
	var m wire.ExtMessage
	m.ID, m.HasID = id, true
	if errText != "" {
		m.Error, m.HasError = []byte(errText), true
	} else {
		m.Result = []byte(result)
	}
	x.Handle(&m)
}

func TestUpstreamTakeWhereInOrder(t *testing.T) {
	_, x, c := upstreamRig(t)
	var ids []int64
	const n = 40
	for i := range n {
		id, err := x.Register(clientCall(c, int64(100+i), int64(i%3)))
		if err != nil {
			t.Fatal(err)
		}
		if len(ids) > 0 && id <= ids[len(ids)-1] {
			t.Fatalf("id %d after %d: not increasing", id, ids[len(ids)-1])
		}
		ids = append(ids, id)
	}
	if got := c.Inflight.Load(); got != n {
		t.Fatalf("inflight %d, want %d", got, n)
	}
	taken := x.TakeWhere(func(pc core.PendingCall) bool { return pc.TabID == 1 })
	var want []int64
	for i := 1; i < n; i += 3 {
		want = append(want, int64(100+i))
	}
	if len(taken) != len(want) {
		t.Fatalf("took %d, want %d", len(taken), len(want))
	}
	for i, pc := range taken {
		if pc.ClientID != want[i] {
			t.Fatalf("took client ids %v..., want %v in the order sent", pc.ClientID, want)
		}
	}
	if got := c.Inflight.Load(); got != n-int64(len(want)) {
		t.Fatalf("inflight %d after taking %d, want %d", got, len(want), n-len(want))
	}
	// What was taken is no longer pending: its late reply is dropped.
	reply(x, ids[1], "{}", "")
	left := 0
	x.Pending(func(pc core.PendingCall) bool {
		if pc.TabID == 1 {
			t.Errorf("client id %d still pending", pc.ClientID)
		}
		left++
		return true
	})
	if left != n-len(want) {
		t.Fatalf("%d pending, want %d", left, n-len(want))
	}
}

func TestUpstreamEnd(t *testing.T) {
	_, x, c := upstreamRig(t)
	x.SetReady()
	if _, err := x.Register(clientCall(c, 1, 7)); err != nil {
		t.Fatal(err)
	}
	fired := make(chan struct{})
	x.FireQueued(7, "", "Page.stopLoading", nil, func() { close(fired) })
	called := make(chan error, 1)
	go func() {
		_, err := x.Call(context.Background(), "extension.closedTabs", []int64{7})
		called <- err
	}()
	// The call is pending once its frame is queued.
	for deadline := time.Now().Add(5 * time.Second); x.LastID() < 3; {
		if time.Now().After(deadline) {
			t.Fatal("the relay's call was not sent")
		}
		time.Sleep(time.Millisecond)
	}
	clients := x.End()
	if len(clients) != 1 || clients[0].ClientID != 1 {
		t.Fatalf("End returned %d client calls, want the one", len(clients))
	}
	if !x.Ended() {
		t.Fatal("not ended after End")
	}
	if err := <-called; !errors.Is(err, core.ErrExtGone) {
		t.Fatalf("the relay's call ended with %v, want ErrExtGone", err)
	}
	select {
	case <-fired:
	case <-time.After(5 * time.Second):
		t.Fatal("the fire's then did not run at the end")
	}
	if n := c.Inflight.Load(); n != 0 {
		t.Fatalf("inflight %d after the end", n)
	}
	if _, err := x.Register(clientCall(c, 2, 7)); !errors.Is(err, core.ErrSendGone) {
		t.Fatalf("a call after the end: %v, want ErrSendGone", err)
	}
	ran := make(chan struct{})
	x.FireQueued(7, "", "Page.stopLoading", nil, func() { close(ran) })
	select {
	case <-ran: // spawned: not on the caller's stack
	case <-time.After(5 * time.Second):
		t.Fatal("a fire after the end never ran its then")
	}
}

func TestUpstreamStoppedRefusesClientCalls(t *testing.T) {
	in, x, c := upstreamRig(t)
	in.IsStopped.Store(true)
	defer in.IsStopped.Store(false)
	if _, err := x.Register(clientCall(c, 1, 7)); !errors.Is(err, core.ErrSendStopped) {
		t.Fatalf("a client's command while stopped: %v, want ErrSendStopped", err)
	}
	if n := c.Inflight.Load(); n != 0 {
		t.Fatalf("inflight %d for a command not taken", n)
	}
	// The relay's own calls go on: a Stop's own commands are among them.
	if _, err := x.Register(core.PendingCall{Kind: core.CallFire}); err != nil {
		t.Fatalf("the relay's own call while stopped: %v", err)
	}
}

func TestUpstreamCallThenRunsBeforeTheResult(t *testing.T) {
	_, x, _ := upstreamRig(t)
	var order []string
	done := make(chan []byte, 1)
	go func() {
		res, err := x.CallThen(context.Background(), func(r []byte) { order = append(order, "then:"+string(r)) }, "extension.keepalive")
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	for deadline := time.Now().Add(5 * time.Second); x.LastID() < 1; {
		if time.Now().After(deadline) {
			t.Fatal("the call was not sent")
		}
		time.Sleep(time.Millisecond)
	}
	reply(x, 999, `{"stray":true}`, "") // a reply to no call: dropped
	reply(x, 1, `{"ok":1}`, "")
	res := <-done
	if string(res) != `{"ok":1}` || len(order) != 1 || order[0] != `then:{"ok":1}` {
		t.Fatalf("result %s, then %v", res, order)
	}

	// An error reply: Chrome's code and message, and then does not run.
	errc := make(chan error, 1)
	go func() {
		_, err := x.CallThen(context.Background(), func([]byte) { t.Error("then ran for an error") }, "chrome.debugger.sendCommand")
		errc <- err
	}()
	for deadline := time.Now().Add(5 * time.Second); x.LastID() < 2; {
		if time.Now().After(deadline) {
			t.Fatal("the call was not sent")
		}
		time.Sleep(time.Millisecond)
	}
	reply(x, 2, "", `{"code":-32000,"message":"No tab with given id"}`)
	var ee *cdp.ExtError
	if err := <-errc; !errors.As(err, &ee) || ee.Code != -32000 || ee.Message != "No tab with given id" {
		t.Fatalf("error %v, want Chrome's", err)
	}
}

func TestUpstreamCallGivesUp(t *testing.T) {
	_, x, _ := upstreamRig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := x.Call(ctx, "extension.keepalive"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a call nobody answers: %v, want the deadline", err)
	}
	if x.Forget(x.LastID()) {
		t.Fatal("the call given up is still pending")
	}
	reply(x, x.LastID(), "{}", "") // late: nothing waits, nothing breaks
}
