package creds

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
// lock (secrets.Lock) finds it. While a secret is locked, the relay replaces
// the values in what it has of the stream and holds back its end, where a
// value may begin whose rest is still to come, to send it with the next
// piece, so that the lock sees every value whole. Such pieces go to the
// client base64-encoded, which IO.read's clients read piece by piece. A
// read at an offset, which would start a piece inside a value, is refused
// while a secret is locked (no client library sends one).

// maxHeldStreams bounds the streams the relay holds the end of: a client
// that opens ever new ones and never closes them does not grow it.
const maxHeldStreams = 256

// MaxStreamHandle bounds a stream handle the relay keeps (Chrome's are a
// few digits): a read of a longer one is refused while a secret is locked.
const MaxStreamHandle = 256

// Streams remembers, for the IO.read commands a client sent while a
// secret was locked, which stream each reads (until its reply), and what
// is held back of each stream (until it ends or is closed). The zero
// value is ready; it is safe for concurrent use.
type Streams struct {
	mu    sync.Mutex
	reads map[int64]string // client command id → stream handle
	held  map[string]*heldStream
}

type heldStream struct {
	tail  []byte // the end of what was read, not sent yet
	ended bool   // Chrome said eof; the tail went out, eof is owed
}

// NoteRead records IO.read command id of the client, reading handle.
func (s *Streams) NoteRead(id int64, handle string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.reads == nil {
		s.reads, s.held = map[int64]string{}, map[string]*heldStream{}
	}
	s.reads[id] = handle
	if _, ok := s.held[handle]; !ok && len(s.held) >= maxHeldStreams {
		for h := range s.held {
			delete(s.held, h) // a client with this many open streams loses one's end
			break
		}
	}
}

// Forget drops what is noted of IO.read command id (its reply was an
// error, or withheld), or of stream handle (IO.close).
func (s *Streams) Forget(id int64, handle string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if handle != "" {
		delete(s.held, handle)
		return
	}
	delete(s.reads, id)
}

// Pending returns how many IO.read commands are noted that have had no
// reply yet.
func (s *Streams) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.reads)
}

// Piece returns the result of the IO.read command id of the client to send
// on: what was held back of its stream and the piece, with every value of
// lock replaced, less the end it now holds back (where a value may begin
// whose rest is still to come), base64-encoded. ok is false for a read it
// did not note, or a result it cannot read: that goes on as it came.
func (s *Streams) Piece(id int64, result []byte, lock *secrets.Lock) (out []byte, ok bool) {
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
	h := s.held[handle]
	if h == nil {
		h = &heldStream{}
		s.held[handle] = h
	}
	if h.ended {
		// The tail went with the read that met the end; this one says so.
		delete(s.held, handle)
		r.Data, r.Base64Encoded, r.EOF = "", true, true
		out, err := json.Marshal(r)
		return out, err == nil
	}
	all := lock.Replace(nil, append(h.tail, data...))
	send := all
	if r.EOF {
		// What is left goes now, as data of a read that is not the last:
		// some clients take no data from the read that says eof, and read
		// once more, which says it.
		h.tail, h.ended, r.EOF = nil, len(all) > 0, len(all) == 0
		if !h.ended {
			delete(s.held, handle)
		}
	} else {
		cut := streamCut(all, lock.MaxLen()-1)
		send = all[:cut]
		h.tail = append(h.tail[:0:0], all[cut:]...)
	}
	r.Data, r.Base64Encoded = base64.StdEncoding.EncodeToString(send), true
	out, err := json.Marshal(r)
	return out, err == nil
}

// streamCut returns where to cut b so that its last hold bytes stay back;
// within a run of base64 text, at a multiple of four characters from the
// run's start, so that the next piece's run decodes in step.
func streamCut(b []byte, hold int) int {
	cut := max(0, len(b)-max(hold, 0))
	start := cut
	for start > 0 && isBase64Byte(b[start-1]) {
		start--
	}
	if start < cut && cut < len(b) && isBase64Byte(b[cut]) {
		cut = start + (cut-start)/4*4
	}
	return cut
}

// isBase64Byte reports whether c is in either base64 alphabet.
func isBase64Byte(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '-' || c == '_'
}
