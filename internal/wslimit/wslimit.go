// Package wslimit reads WebSocket messages up to a size, and ends a
// connection whose peer sends a larger one as RFC 6455 asks: a close frame
// 1009 with a reason the peer can read, and what the peer goes on sending
// read and thrown away until it closes.
//
// gorilla/websocket's own read limit sends a close frame without a reason,
// and a socket closed while the peer is still writing a large message
// makes the peer's system answer with a reset that throws away what it
// had received, the close frame too: the peer sees the connection lost
// (1006), not why. So the limit is the reader's here, and the socket is
// closed once the peer has been heard out.
package wslimit

import (
	"errors"
	"io"
	"strconv"
	"time"

	"github.com/gorilla/websocket"
)

// TooBigError is what Read returns for a message larger than its limit.
type TooBigError struct{ Limit int64 }

func (e *TooBigError) Error() string {
	return "a message larger than " + strconv.FormatInt(e.Limit, 10) + " bytes"
}

// IsTooBig reports whether err is a TooBigError.
func IsTooBig(err error) bool {
	var tb *TooBigError
	return errors.As(err, &tb)
}

// Reason is the close reason sent for a message larger than limit: at most
// 123 bytes, as a close frame carries.
func Reason(limit int64) string {
	return "cdprelay: message larger than " + strconv.FormatInt(limit, 10) + " bytes"
}

// maxKeptBuf: a buffer grown past this by one large message is let go
// rather than kept for the connection's life.
const maxKeptBuf = 4 << 20

// Read reads the next message into *buf (reused; the message is valid
// until the next Read) and returns its type. A message larger than limit
// (> 0) is read no further than limit+1 bytes and returns a TooBigError:
// the caller sends the close frame (code websocket.CloseMessageTooBig,
// Reason) and calls Drain before it closes the socket. The connection's
// own read limit should be off (SetReadLimit(0)), or gorilla closes first.
func Read(conn *websocket.Conn, buf *[]byte, limit int64) (int, []byte, error) {
	mt, r, err := conn.NextReader()
	if err != nil {
		return 0, nil, err
	}
	b := (*buf)[:0]
	if cap(b) > maxKeptBuf {
		b = make([]byte, 0, 4096)
	}
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		room := b[len(b):cap(b)]
		if limit > 0 && int64(len(b)+len(room)) > limit+1 {
			room = room[:limit+1-int64(len(b))]
		}
		n, err := r.Read(room)
		b = b[:len(b)+n]
		*buf = b
		if limit > 0 && int64(len(b)) > limit {
			return 0, nil, &TooBigError{Limit: limit}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return mt, b, nil
			}
			return 0, nil, err
		}
	}
}

// Drain reads and throws away what the peer sends, the rest of a message
// too large included, until the peer closes the connection or for at most
// d, so that closing the socket afterwards resets nothing the peer has yet
// to read (the close frame sent before).
func Drain(conn *websocket.Conn, d time.Duration) {
	_ = conn.SetReadDeadline(time.Now().Add(d))
	for {
		_, r, err := conn.NextReader()
		if err != nil {
			return
		}
		if _, err := io.Copy(io.Discard, r); err != nil {
			return
		}
	}
}

// DrainTime bounds Drain after a message too large: long enough for a
// peer on a slow link to finish writing one of a few hundred megabytes.
const DrainTime = 20 * time.Second
