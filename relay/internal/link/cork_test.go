package link

import (
	"net"
	"strings"
	"testing"
)

// writesConn records each write that reaches the socket.
type writesConn struct {
	net.Conn
	writes []string
}

func (w *writesConn) Write(p []byte) (int, error) {
	w.writes = append(w.writes, string(p))
	return len(p), nil
}

// Corked, frames gather into one write; a control frame goes out at once,
// after what gathered before it; uncorking writes the rest; uncorked, each
// write goes out as it comes; a burst past corkMax goes out in parts.
func TestCorkConn(t *testing.T) {
	w := &writesConn{}
	c := &CorkConn{Conn: w}
	c.Write([]byte("\x81\x01a"))
	c.cork()
	c.Write([]byte("\x81\x01b"))
	c.Write([]byte("\x81\x01c"))
	c.Write([]byte("\x8a\x00")) // a pong, from the read loop
	c.Write([]byte("\x81\x01d"))
	if err := c.uncork(); err != nil {
		t.Fatal(err)
	}
	c.Write([]byte("\x81\x01e"))
	want := []string{"\x81\x01a", "\x81\x01b\x81\x01c", "\x8a\x00", "\x81\x01d", "\x81\x01e"}
	if strings.Join(w.writes, "|") != strings.Join(want, "|") {
		t.Fatalf("writes %q, want %q", w.writes, want)
	}

	// A payload piece that starts like a control frame but is longer is
	// gathered, not sent ahead.
	w.writes = nil
	c.cork()
	c.Write([]byte("\x81\x7e\x01\x00"))
	c.Write([]byte("\x88" + strings.Repeat("x", 255)))
	c.uncork()
	if len(w.writes) != 1 {
		t.Fatalf("a message in %d writes", len(w.writes))
	}

	// Past corkMax: what gathered goes, then the large write by itself.
	w.writes = nil
	c.cork()
	c.Write([]byte("\x81\x01f"))
	c.Write([]byte(strings.Repeat("y", corkMax)))
	c.Write([]byte("\x81\x01g"))
	c.uncork()
	if len(w.writes) != 3 || w.writes[0] != "\x81\x01f" || len(w.writes[1]) != corkMax || w.writes[2] != "\x81\x01g" {
		t.Fatalf("past corkMax: %d writes", len(w.writes))
	}
}
