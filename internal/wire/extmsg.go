package wire

import "errors"

// ExtMessage is a message from the extension: a reply ({id, result|error})
// or an event ({method, params}). Slices alias the frame.
type ExtMessage struct {
	ID       int64
	HasID    bool
	Method   []byte // unquoted event name
	Params   []byte // raw array span of an event's arguments
	Result   []byte // raw result span of a reply
	Error    []byte // unquoted error message of a reply; nil when none
	HasError bool
}

// ErrBadExtMessage is returned for frames that are valid JSON but neither a
// reply nor an event of protocol v2.
var ErrBadExtMessage = errors.New("extension message is neither a reply nor an event")

// DecodeExt validates frame and fills m.
func DecodeExt(frame []byte, m *ExtMessage) error {
	*m = ExtMessage{}
	it, err := openTopObject(frame)
	if err != nil {
		return err
	}
	return decodeExt(&it, m)
}

// decodeExt fills m from the members of the object it walks; on a syntax
// error m is left empty.
func decodeExt(it *topObject, m *ExtMessage) error {
	bad := false
	for {
		key, esc, val, ok := it.next()
		if !ok {
			break
		}
		if bad {
			// The rest is only validated: malformed JSON must still win.
			continue
		}
		if esc {
			key = decodeEscaped(key)
		}
		switch string(key) {
		case "id":
			n, ok := parseInt(val)
			if !ok || m.HasID {
				bad = true
				continue
			}
			m.ID, m.HasID = n, true
		case "method":
			s, ok := unquote(val)
			if !ok || m.Method != nil {
				bad = true
				continue
			}
			m.Method = s
		case "params":
			if val[0] != '[' || m.Params != nil {
				bad = true
				continue
			}
			m.Params = val
		case "result":
			if m.Result != nil {
				bad = true
				continue
			}
			m.Result = val
		case "error":
			if m.HasError {
				bad = true
				continue
			}
			m.HasError = true
			if s, ok := unquote(val); ok {
				m.Error = s
			} else {
				// Not a string: keep the raw JSON as the message.
				m.Error = val
			}
		}
	}
	if it.err != nil {
		*m = ExtMessage{}
		return it.err
	}
	if bad {
		return ErrBadExtMessage
	}
	switch {
	case m.HasID && m.Method == nil && (m.Result != nil || m.HasError):
		return nil
	case !m.HasID && m.Method != nil:
		return nil
	}
	return ErrBadExtMessage
}

// Source is the debuggee of a chrome.debugger event: {tabId, sessionId?}.
type Source struct {
	TabID     int64
	SessionID []byte // unquoted; nil for the tab's own session
}

// DebuggerEvent splits the arguments of chrome.debugger.onEvent:
// [source, method, params?]. method is unquoted; params is raw (nil when
// absent).
func DebuggerEvent(args []byte) (src Source, method, params []byte, err error) {
	el, ok := newElements(args)
	if !ok {
		return src, nil, nil, ErrBadExtMessage
	}
	s, ok1 := el.next()
	mt, ok2 := el.next()
	if !ok1 || !ok2 {
		return src, nil, nil, ErrBadExtMessage
	}
	if src, ok = DecodeSource(s); !ok {
		return src, nil, nil, ErrBadExtMessage
	}
	if method, ok = unquote(mt); !ok {
		return src, nil, nil, ErrBadExtMessage
	}
	if p, ok := el.next(); ok && p[0] == '{' {
		params = p
	}
	return src, method, params, nil
}

// DecodeSource reads {tabId, sessionId?}.
func DecodeSource(obj []byte) (Source, bool) {
	var src Source
	it, ok := newMembers(obj)
	if !ok {
		return src, false
	}
	hasTab := false
	for {
		key, esc, val, ok := it.next()
		if !ok {
			break
		}
		if esc {
			key = decodeEscaped(key)
		}
		switch string(key) {
		case "tabId":
			n, ok := parseInt(val)
			if !ok {
				return src, false
			}
			src.TabID, hasTab = n, true
		case "sessionId":
			// Ignoring a malformed sessionId would hand a child session's
			// event to the tab's own session.
			s, ok := unquote(val)
			if !ok {
				return src, false
			}
			src.SessionID = s
		}
	}
	return src, hasTab
}

// Field returns the raw value of the top-level member key of a valid JSON
// object span, or nil.
func Field(obj []byte, key string) []byte {
	it, ok := newMembers(obj)
	if !ok {
		return nil
	}
	for {
		k, esc, val, ok := it.next()
		if !ok {
			return nil
		}
		if esc {
			k = decodeEscaped(k)
		}
		if string(k) == key {
			return val
		}
	}
}

// StringField returns the unquoted string member key of obj, or nil.
func StringField(obj []byte, key string) []byte {
	v := Field(obj, key)
	if v == nil {
		return nil
	}
	s, ok := unquote(v)
	if !ok {
		return nil
	}
	return s
}

// Args returns up to len(out) elements of a valid array span into out and
// how many there were in all.
func Args(arr []byte, out [][]byte) int {
	el, ok := newElements(arr)
	if !ok {
		return 0
	}
	n := 0
	for {
		v, ok := el.next()
		if !ok {
			return n
		}
		if n < len(out) {
			out[n] = v
		}
		n++
	}
}

// Unquote is the exported form of unquote for callers outside the hot path.
// Unlike unquote it does not trust tok to have been validated: a malformed
// token is refused rather than decoded past its end. UTF-8 is not checked.
func Unquote(tok []byte) ([]byte, bool) {
	if len(tok) == 0 || tok[0] != '"' {
		return nil, false
	}
	if end, _, err := skipString(tok, 0); err != nil || end != len(tok) {
		return nil, false
	}
	return unquote(tok)
}

// Int reads a JSON integer span.
func Int(v []byte) (int64, bool) { return parseInt(v) }

// Member returns the raw value of the top-level member key of a valid JSON
// object span and how many times the key occurs, comparing keys after
// their escapes are decoded ("u\u0072l" is "url") and exactly otherwise,
// as Chrome reads params. A caller that judges a value must refuse n > 1:
// the relay and the browser need not pick the same one of two.
func Member(obj []byte, key string) (val []byte, n int) {
	it, ok := newMembers(obj)
	if !ok {
		return nil, 0
	}
	for {
		k, esc, v, ok := it.next()
		if !ok {
			return val, n
		}
		if esc {
			k = decodeEscaped(k)
		}
		if string(k) == key {
			if n == 0 {
				val = v
			}
			n++
		}
	}
}
