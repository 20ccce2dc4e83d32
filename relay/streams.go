package relay

import (
	"encoding/base64"
	"encoding/json"
	"sync"

	"github.com/cdprelay/cdprelay/secrets"
)

// Streams read in pieces while a secret is locked.
//
// IO.read hands a stream over (a response body taken as a stream, a PDF, a
// trace) in pieces of the size the client asks for: a typed secret that a
// body echoes could be split between two pieces, in neither of which the
// lock (secrets.go) finds it. While a secret is locked, the relay replaces
// the values in what it has of the stream and holds back its end, where a
// value may begin whose rest is still to come, to send it with the next
// piece (or with the last), so that the lock sees every value whole. Such
// pieces go to the client base64-encoded, which IO.read's clients read
// piece by piece.

// streamReads remembers, for the IO.read commands a client sent while a
// secret was locked, which stream each reads, and what is held back of
// each stream.
type streamReads struct {
	mu    sync.Mutex
	reads map[int64]string // client command id → stream handle
	held  map[string][]byte
}

// maxHeldStreams bounds the streams the relay holds bytes of: a client
// that opens ever new ones and never reads them to their end does not
// grow it without end.
const maxHeldStreams = 256

// noteRead records IO.read command id of the client, reading handle; at
// an offset, what was held back of the stream is dropped: the client
// reads from elsewhere.
func (s *streamReads) noteRead(id int64, handle string, seek bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.reads == nil {
		s.reads, s.held = map[int64]string{}, map[string][]byte{}
	}
	if len(s.reads) >= maxHeldStreams || (len(s.held) >= maxHeldStreams && s.held[handle] == nil) {
		clear(s.reads)
		clear(s.held)
	}
	s.reads[id] = handle
	if seek {
		delete(s.held, handle)
	}
}

// piece returns the result of the IO.read command id of the client to send
// on: what was held back of its stream and the piece, with every value of
// lock replaced, less the end it now holds back (where a value may begin
// whose rest is still to come), base64-encoded. ok is false for a read it
// did not note, or a result it cannot read: that goes on as it came.
func (s *streamReads) piece(id int64, result []byte, lock *secrets.Lock) (out []byte, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	handle, noted := s.reads[id]
	if !noted {
		return nil, false
	}
	delete(s.reads, id)
	var r struct {
		Data          string `json:"data"`
		Base64Encoded bool   `json:"base64Encoded"`
		EOF           bool   `json:"eof"`
	}
	if json.Unmarshal(result, &r) != nil {
		return nil, false
	}
	data := []byte(r.Data)
	if r.Base64Encoded {
		d, err := base64.StdEncoding.DecodeString(r.Data)
		if err != nil {
			return nil, false
		}
		data = d
	}
	all := lock.Replace(nil, append(s.held[handle], data...))
	send := all
	if r.EOF {
		delete(s.held, handle)
	} else {
		// A value that is not whole yet began within the last MaxLen-1
		// bytes: nothing of it goes before the rest has come.
		cut := max(0, len(all)-(lock.MaxLen()-1))
		send = all[:cut]
		s.held[handle] = append([]byte(nil), all[cut:]...)
	}
	r.Data, r.Base64Encoded = base64.StdEncoding.EncodeToString(send), true
	out, err := json.Marshal(r)
	return out, err == nil
}
