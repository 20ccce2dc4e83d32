package relay

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"encoding/base64"
	"net"
	"net/http"
	"sync/atomic"
)

// go-rod's client opens its socket with "Sec-WebSocket-Key: nil", which is
// not the base64 of 16 bytes that RFC 6455 asks for, and then checks that
// the Sec-WebSocket-Accept it gets back is the one computed from "nil".
// Chrome does not check the key; gorilla/websocket refuses it. On the CDP
// endpoints only, the relay lets the upgrader see a valid stand-in key and
// swaps the stand-in's accept value for the one the client computes. The
// extension endpoint keeps the strict check: our extension and the stock one
// are browsers' WebSockets and always send a valid key.
//
// go-rod's reader also takes every frame for a text message: a close frame
// makes it panic on the close code, in a goroutine of the user's program.
// So a go-rod connection is closed without one: when the relay closes it
// (the extension went away, the last tab was closed) the socket just ends,
// which go-rod reports as an error on the calls in flight. The close reason
// is in the relay's log.

const (
	rodKey = "nil"
	// standInKey is 16 zero bytes in base64: valid, and only ever seen by
	// the upgrader.
	standInKey = "AAAAAAAAAAAAAAAAAAAAAA=="
)

// acceptKey computes Sec-WebSocket-Accept for a client key (RFC 6455 §4.2.2).
func acceptKey(key string) string {
	h := sha1.New()
	h.Write([]byte(key))
	h.Write([]byte("258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	return base64.StdEncoding.EncodeToString(h.Sum(nil))
}

var (
	standInAccept = []byte(acceptKey(standInKey))
	rodAccept     = []byte(acceptKey(rodKey))
)

// isRodKey reports whether r is an upgrade with go-rod's key.
func isRodKey(r *http.Request) bool { return r.Header.Get("Sec-Websocket-Key") == rodKey }

// lenientKey prepares a CDP endpoint's upgrade for a client that sent
// go-rod's key. For any other request it returns w unchanged.
func lenientKey(w http.ResponseWriter, r *http.Request) http.ResponseWriter {
	if r.Header.Get("Sec-Websocket-Key") != rodKey {
		return w
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		return w
	}
	r.Header.Set("Sec-Websocket-Key", standInKey)
	return &rodKeyWriter{ResponseWriter: w, hj: hj}
}

// rodKeyWriter hands the upgrader a connection whose first write, the
// handshake response, carries the accept value for "nil". Such a peer
// gets no close frame (link.Peer.NoCloseFrame): its connection just ends.
type rodKeyWriter struct {
	http.ResponseWriter
	hj http.Hijacker
}

func (w *rodKeyWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, brw, err := w.hj.Hijack()
	if err != nil {
		return nil, nil, err
	}
	return &acceptSwapConn{Conn: conn}, brw, nil
}

type acceptSwapConn struct {
	net.Conn
	handshaken atomic.Bool
}

func (c *acceptSwapConn) Write(p []byte) (int, error) {
	if !c.handshaken.Load() {
		c.handshaken.Store(true)
		// The upgrader writes the whole response in one call; both values
		// are 28 characters, so nothing moves.
		if i := bytes.Index(p, standInAccept); i >= 0 {
			copy(p[i:], rodAccept)
		}
		return c.Conn.Write(p)
	}
	return c.Conn.Write(p)
}
