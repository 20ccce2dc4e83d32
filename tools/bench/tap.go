package main

import (
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// tap times the relay from the outside: it wraps the sockets the relay is
// served on and notes when the relay reads from and writes to each. With
// one command in flight, a command's four socket events bracket the
// relay's own share of its round trip, measured per command instead of as
// the difference of two paths' figures taken seconds apart.
type tap struct {
	armed atomic.Bool // set while the relay's one-at-a-time evaluations run

	mu         sync.Mutex
	clientAddr string    // guarded by mu: the CDP client's address, as the relay sees it
	readCmd    time.Time // guarded by mu: the relay read the command from the client
	wroteCmd   time.Time // guarded by mu: ... and began writing it to the extension
	readReply  time.Time // guarded by mu: the relay read the reply from the extension
	wroteReply time.Time // guarded by mu: ... and began writing it to the client

	inside  []time.Duration // guarded by mu: from reading to writing, both ways
	hops    []time.Duration // guarded by mu: the client's socket, both ways
	dropped int             // guarded by mu: commands whose events were out of order
}

func (t *tap) arm(clientAddr string) {
	t.mu.Lock()
	t.clientAddr = clientAddr
	t.readCmd, t.wroteCmd, t.readReply, t.wroteReply = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	t.mu.Unlock()
	t.armed.Store(true)
}

func (t *tap) disarm() { t.armed.Store(false) }

func (t *tap) event(remote string, write bool, at time.Time) {
	if !t.armed.Load() {
		return
	}
	t.mu.Lock()
	fromClient := remote == t.clientAddr
	switch {
	case fromClient && !write:
		t.readCmd = at
	case !fromClient && write:
		t.wroteCmd = at
	case !fromClient && !write:
		t.readReply = at
	default:
		t.wroteReply = at
	}
	t.mu.Unlock()
}

// command records the command the client sent at sent and got the reply
// to at got.
func (t *tap) command(sent, got time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	ordered := sent.Before(t.readCmd) && t.readCmd.Before(t.wroteCmd) && t.wroteCmd.Before(t.readReply) &&
		t.readReply.Before(t.wroteReply) && t.wroteReply.Before(got)
	if !ordered {
		t.dropped++ // a keepalive or ping in between, say
		return
	}
	t.inside = append(t.inside, t.wroteCmd.Sub(t.readCmd)+t.wroteReply.Sub(t.readReply))
	t.hops = append(t.hops, t.readCmd.Sub(sent)+got.Sub(t.wroteReply))
}

// tapListener hands out connections that report to a tap.
type tapListener struct {
	net.Listener
	tap *tap
}

func (l tapListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &tapConn{Conn: c, tap: l.tap, remote: c.RemoteAddr().String()}, nil
}

type tapConn struct {
	net.Conn
	tap    *tap
	remote string
}

func (c *tapConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		c.tap.event(c.remote, false, time.Now())
	}
	return n, err
}

func (c *tapConn) Write(b []byte) (int, error) {
	c.tap.event(c.remote, true, time.Now())
	return c.Conn.Write(b)
}
