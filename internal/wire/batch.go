package wire

import (
	"errors"
	"unicode/utf8"
)

// Batches: once the relay and our extension have agreed on them
// (docs/EXTENSION-PROTOCOL.md, feature "batches"), a text frame may carry a
// JSON array of ordinary protocol-v2 messages instead of one message. The
// array is walked once, each element validated and decoded where it lies,
// so that a batch costs what its messages would cost one per frame.

// ErrBatchElement is returned for an element of a batch that is valid JSON
// but not an object (a batch does not nest).
var ErrBatchElement = errors.New("batch element is not a message object")

// IsBatch reports whether frame is a batch rather than one message: its
// first byte that is not white space is '['.
func IsBatch(frame []byte) bool {
	i := skipWS(frame, 0)
	return i < len(frame) && frame[i] == '['
}

// Batch walks the messages of a batch frame. Each element is decoded on its
// own: one that is valid JSON but no message is reported and the walk goes
// on; JSON that breaks off ends the walk, and Err says where.
type Batch struct {
	b     []byte // nil once the walk has ended
	i     int
	first bool
	err   error
}

// OpenBatch starts walking frame, which IsBatch reports as a batch. A
// frame that is not valid UTF-8 is refused whole, before any element.
func OpenBatch(frame []byte) (Batch, error) {
	if !utf8.Valid(frame) {
		return Batch{}, utf8Err(frame)
	}
	i := skipWS(frame, 0)
	if i >= len(frame) || frame[i] != '[' {
		return Batch{}, syntaxErr(i, "expected '['")
	}
	return Batch{b: frame, i: i + 1, first: true}, nil
}

// Next decodes the next element into m; m's slices alias the frame. It
// reports false at the end of the batch or when its JSON breaks off. With
// true, err is nil for a message and otherwise says why the element was
// none (ErrBadExtMessage, ErrBatchElement): the caller skips it.
func (bt *Batch) Next(m *ExtMessage) (ok bool, err error) {
	*m = ExtMessage{}
	b := bt.b
	if b == nil {
		return false, nil
	}
	i := skipWS(b, bt.i)
	if bt.first {
		bt.first = false
		if i < len(b) && b[i] == ']' {
			return bt.end(i + 1)
		}
	} else {
		switch {
		case i >= len(b):
			return bt.fail(syntaxErr(i, "unterminated array"))
		case b[i] == ']':
			return bt.end(i + 1)
		case b[i] != ',':
			return bt.fail(syntaxErr(i, "expected ',' or ']'"))
		}
		i = skipWS(b, i+1)
	}
	if i >= len(b) {
		return bt.fail(syntaxErr(i, "unexpected end of input"))
	}
	if b[i] != '{' {
		end, err := skipValue(b, i, 1)
		if err != nil {
			return bt.fail(err)
		}
		bt.i = end
		return true, ErrBatchElement
	}
	o := topObject{b: b, i: i + 1, first: true, depth: 1}
	err = decodeExt(&o, m)
	if o.err != nil {
		return bt.fail(o.err)
	}
	bt.i = o.i
	return true, err
}

// Err is the frame's *SyntaxError once Next has reported false, if its
// JSON broke off.
func (bt *Batch) Err() error { return bt.err }

func (bt *Batch) end(i int) (bool, error) {
	if skipWS(bt.b, i) != len(bt.b) {
		bt.err = syntaxErr(i, "trailing data")
	}
	bt.b = nil
	return false, nil
}

func (bt *Batch) fail(err error) (bool, error) {
	bt.err, bt.b = err, nil
	return false, nil
}
