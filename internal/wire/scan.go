package wire

import (
	"errors"
	"fmt"
	"unicode/utf8"
)

// MaxDepth bounds the nesting of arrays and objects in a frame. Chrome's own
// parser stops far below this; the bound is here so that a hostile peer
// cannot exhaust the stack.
const MaxDepth = 1000

// SyntaxError describes why a frame is not acceptable JSON. Offset is the
// byte offset where the scanner gave up.
type SyntaxError struct {
	Offset int
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at offset %d: %s", e.Offset, e.Msg)
}

var errNotObject = errors.New("message is not a JSON object")

func syntaxErr(off int, msg string) error { return &SyntaxError{Offset: off, Msg: msg} }

// utf8Err locates the first invalid byte of b, which utf8.Valid has already
// refused, so that the offset points at it like every other SyntaxError.
func utf8Err(b []byte) error {
	i := 0
	for i < len(b) {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			break
		}
		i += n
	}
	return syntaxErr(i, "invalid UTF-8")
}

// strClass marks the bytes that end the fast path of string scanning.
var strClass = func() (t [256]bool) {
	for i := 0; i < 0x20; i++ {
		t[i] = true
	}
	t['"'] = true
	t['\\'] = true
	return t
}()

func skipWS(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipString scans the string starting at b[i] == '"'. It returns the index
// just past the closing quote and whether the string contains escapes.
func skipString(b []byte, i int) (end int, escaped bool, err error) {
	i++ // opening quote
	for {
		for i < len(b) && !strClass[b[i]] {
			i++
		}
		if i >= len(b) {
			return 0, false, syntaxErr(i, "unterminated string")
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, escaped, nil
		case c == '\\':
			escaped = true
			if i+1 >= len(b) {
				return 0, false, syntaxErr(i, "unterminated escape")
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) {
					return 0, false, syntaxErr(i, "short \\u escape")
				}
				for _, h := range b[i+2 : i+6] {
					if !isHex(h) {
						return 0, false, syntaxErr(i, "bad \\u escape")
					}
				}
				i += 6
			default:
				return 0, false, syntaxErr(i, "bad escape")
			}
		default:
			return 0, false, syntaxErr(i, "control character in string")
		}
	}
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func skipNumber(b []byte, i int) (int, error) {
	start := i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
	default:
		return 0, syntaxErr(start, "bad number")
	}
	if i < len(b) && b[i] == '.' {
		i++
		d := i
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		if i == d {
			return 0, syntaxErr(start, "bad number")
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		d := i
		for i < len(b) && '0' <= b[i] && b[i] <= '9' {
			i++
		}
		if i == d {
			return 0, syntaxErr(start, "bad number")
		}
	}
	return i, nil
}

func skipLiteral(b []byte, i int, lit string) (int, error) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return 0, syntaxErr(i, "bad literal")
	}
	return i + len(lit), nil
}

// skipValue scans one JSON value starting at or after b[i] (leading
// whitespace allowed) and returns the index just past it.
func skipValue(b []byte, i, depth int) (int, error) {
	i = skipWS(b, i)
	if i >= len(b) {
		return 0, syntaxErr(i, "unexpected end of input")
	}
	switch c := b[i]; c {
	case '{':
		if depth >= MaxDepth {
			return 0, syntaxErr(i, "nesting too deep")
		}
		i = skipWS(b, i+1)
		if i < len(b) && b[i] == '}' {
			return i + 1, nil
		}
		for {
			if i >= len(b) || b[i] != '"' {
				return 0, syntaxErr(i, "expected object key")
			}
			var err error
			if i, _, err = skipString(b, i); err != nil {
				return 0, err
			}
			i = skipWS(b, i)
			if i >= len(b) || b[i] != ':' {
				return 0, syntaxErr(i, "expected ':'")
			}
			if i, err = skipValue(b, i+1, depth+1); err != nil {
				return 0, err
			}
			i = skipWS(b, i)
			if i >= len(b) {
				return 0, syntaxErr(i, "unterminated object")
			}
			if b[i] == '}' {
				return i + 1, nil
			}
			if b[i] != ',' {
				return 0, syntaxErr(i, "expected ',' or '}'")
			}
			i = skipWS(b, i+1)
		}
	case '[':
		if depth >= MaxDepth {
			return 0, syntaxErr(i, "nesting too deep")
		}
		i = skipWS(b, i+1)
		if i < len(b) && b[i] == ']' {
			return i + 1, nil
		}
		for {
			var err error
			if i, err = skipValue(b, i, depth+1); err != nil {
				return 0, err
			}
			i = skipWS(b, i)
			if i >= len(b) {
				return 0, syntaxErr(i, "unterminated array")
			}
			if b[i] == ']' {
				return i + 1, nil
			}
			if b[i] != ',' {
				return 0, syntaxErr(i, "expected ',' or ']'")
			}
			i++
		}
	case '"':
		end, _, err := skipString(b, i)
		return end, err
	case 't':
		return skipLiteral(b, i, "true")
	case 'f':
		return skipLiteral(b, i, "false")
	case 'n':
		return skipLiteral(b, i, "null")
	default:
		if c == '-' || '0' <= c && c <= '9' {
			return skipNumber(b, i)
		}
		return 0, syntaxErr(i, "unexpected character")
	}
}

// Valid reports whether b is exactly one well-formed JSON value in valid
// UTF-8 within MaxDepth.
func Valid(b []byte) error {
	if !utf8.Valid(b) {
		return utf8Err(b)
	}
	return validGrammar(b)
}

func validGrammar(b []byte) error {
	end, err := skipValue(b, 0, 0)
	if err != nil {
		return err
	}
	if skipWS(b, end) != len(b) {
		return syntaxErr(end, "trailing data")
	}
	return nil
}

// topObject walks the members of a frame's top-level object and validates
// the frame on the way, so that a frame is read once instead of validated
// and then walked again: a 330 KB command otherwise costs two full scans.
// It checks exactly what Valid checks, with the same error offsets. Once
// next reports the end, err holds the frame's *SyntaxError, if any.
type topObject struct {
	b     []byte // nil once the walk has ended
	i     int    // the next byte to read; once ended inside a batch, just past the object
	first bool
	err   error
	// depth is the object's own nesting depth: 0 for a frame, 1 for an
	// element of a batch (batch.go), which ends at its '}' rather than at
	// the end of the frame.
	depth int
}

// openTopObject starts a walk. A frame that is not an object is validated
// in full so that malformed JSON earns a *SyntaxError, not errNotObject.
func openTopObject(b []byte) (topObject, error) {
	if !utf8.Valid(b) {
		return topObject{}, utf8Err(b)
	}
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		if err := validGrammar(b); err != nil {
			return topObject{}, err
		}
		return topObject{}, errNotObject
	}
	return topObject{b: b, i: i + 1, first: true}, nil
}

func (o *topObject) next() (key []byte, keyEscaped bool, val []byte, ok bool) {
	b := o.b
	if b == nil {
		return nil, false, nil, false
	}
	i := skipWS(b, o.i)
	if o.first {
		o.first = false
		if i < len(b) && b[i] == '}' {
			o.end(i + 1)
			return nil, false, nil, false
		}
	} else {
		switch {
		case i >= len(b):
			return o.fail(syntaxErr(i, "unterminated object"))
		case b[i] == '}':
			o.end(i + 1)
			return nil, false, nil, false
		case b[i] != ',':
			return o.fail(syntaxErr(i, "expected ',' or '}'"))
		}
		i = skipWS(b, i+1)
	}
	if i >= len(b) || b[i] != '"' {
		return o.fail(syntaxErr(i, "expected object key"))
	}
	kend, esc, err := skipString(b, i)
	if err != nil {
		return o.fail(err)
	}
	key = b[i+1 : kend-1]
	i = skipWS(b, kend)
	if i >= len(b) || b[i] != ':' {
		return o.fail(syntaxErr(i, "expected ':'"))
	}
	vstart := skipWS(b, i+1)
	vend, err := skipValue(b, vstart, o.depth+1)
	if err != nil {
		return o.fail(err)
	}
	o.i = vend
	return key, esc, b[vstart:vend], true
}

func (o *topObject) end(i int) {
	if o.depth > 0 {
		o.i, o.b = i, nil
		return
	}
	if skipWS(o.b, i) != len(o.b) {
		o.err = syntaxErr(i, "trailing data")
	}
	o.b = nil
}

func (o *topObject) fail(err error) ([]byte, bool, []byte, bool) {
	o.err, o.b = err, nil
	return nil, false, nil, false
}

// members iterates over the members of the object span b (already known to
// be valid JSON). It never allocates.
type members struct {
	b []byte
	i int
}

func newMembers(obj []byte) (members, bool) {
	i := skipWS(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return members{}, false
	}
	return members{b: obj, i: i + 1}, true
}

// next returns the next member. key is the raw key between its quotes,
// val the raw value span. ok is false at the end.
func (m *members) next() (key []byte, keyEscaped bool, val []byte, ok bool) {
	b := m.b
	i := skipWS(b, m.i)
	if i < len(b) && b[i] == ',' {
		i = skipWS(b, i+1)
	}
	if i >= len(b) || b[i] != '"' {
		return nil, false, nil, false
	}
	kend, esc, err := skipString(b, i)
	if err != nil {
		return nil, false, nil, false
	}
	key = b[i+1 : kend-1]
	i = skipWS(b, kend)
	i++ // ':'
	i = skipWS(b, i)
	vend, err := skipValue(b, i, 0)
	if err != nil {
		return nil, false, nil, false
	}
	m.i = vend
	return key, esc, b[i:vend], true
}

// elements iterates over the elements of a valid array span.
type elements struct {
	b []byte
	i int
}

func newElements(arr []byte) (elements, bool) {
	i := skipWS(arr, 0)
	if i >= len(arr) || arr[i] != '[' {
		return elements{}, false
	}
	return elements{b: arr, i: i + 1}, true
}

func (e *elements) next() ([]byte, bool) {
	b := e.b
	i := skipWS(b, e.i)
	if i < len(b) && b[i] == ',' {
		i = skipWS(b, i+1)
	}
	if i >= len(b) || b[i] == ']' {
		return nil, false
	}
	end, err := skipValue(b, i, 0)
	if err != nil {
		return nil, false
	}
	e.i = end
	return b[i:end], true
}
