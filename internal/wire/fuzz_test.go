package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

func FuzzValid(f *testing.F) {
	for _, tt := range validTests {
		if len(tt.in) < 4096 {
			f.Add([]byte(tt.in))
		}
	}
	for _, tt := range commandTests {
		if len(tt.frame) < 4096 {
			f.Add([]byte(tt.frame))
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		err := Valid(b)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Valid error %T %v is not a *SyntaxError", err, err)
			}
			if se.Offset < 0 || se.Offset > len(b) {
				t.Fatalf("offset %d outside [0,%d]", se.Offset, len(b))
			}
		}
		if depthOf(b) > MaxDepth {
			if err == nil {
				t.Fatalf("Valid accepted nesting deeper than MaxDepth")
			}
			return
		}
		want := json.Valid(b) && utf8.Valid(b)
		if (err == nil) != want {
			t.Fatalf("Valid(%q) = %v, encoding/json says valid=%v", b, err, want)
		}
	})
}

type member struct {
	key string
	raw []byte
}

// refMembers lists the top-level members of a valid JSON object in order,
// duplicates included, with decoded keys and raw values. ok is false when
// the value is not an object.
func refMembers(t *testing.T, frame []byte) ([]member, bool) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(frame))
	dec.UseNumber() // a bare 1e400 is valid JSON but no float64
	tok, err := dec.Token()
	if err != nil {
		t.Fatalf("encoding/json: %v", err)
	}
	if tok != json.Delim('{') {
		return nil, false
	}
	var ms []member
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatalf("encoding/json key: %v", err)
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			t.Fatalf("encoding/json value: %v", err)
		}
		ms = append(ms, member{k.(string), bytes.Trim(raw, " \t\r\n")})
	}
	return ms, true
}

var intRE = regexp.MustCompile(`^-?(0|[1-9][0-9]{0,15})$`)

func refInt(raw []byte) (int64, bool) {
	if !intRE.Match(raw) {
		return 0, false
	}
	var n int64
	if err := json.Unmarshal(raw, &n); err != nil || n > 1<<53-1 || n < -(1<<53-1) {
		return 0, false
	}
	return n, true
}

func refString(t *testing.T, raw []byte) ([]byte, bool) {
	t.Helper()
	if raw[0] != '"' {
		return nil, false
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("encoding/json string %s: %v", raw, err)
	}
	return []byte(s), true
}

// sameSyntaxError checks that a decoder that validates while it walks the
// frame refuses exactly what Valid refuses, at the same offset.
func sameSyntaxError(t *testing.T, frame []byte, err error) {
	t.Helper()
	verr := Valid(frame)
	var se, vse *SyntaxError
	isSyntax := errors.As(err, &se)
	if verr == nil {
		if isSyntax {
			t.Fatalf("decoding %q: %v, but Valid accepts it", frame, err)
		}
		return
	}
	errors.As(verr, &vse)
	if !isSyntax || *se != *vse {
		t.Fatalf("decoding %q: %v, Valid says %v", frame, err, verr)
	}
}

// refSyntax reports whether DecodeCommand and DecodeExt must refuse frame as
// malformed JSON, and whether the frame is outside what the references can
// judge (deeper than MaxDepth, where encoding/json still accepts it).
func refSyntax(frame []byte) (bad, skip bool) {
	if !utf8.Valid(frame) || !json.Valid(frame) {
		return true, false
	}
	return false, depthOf(frame) > MaxDepth
}

// refCommand is DecodeCommand's contract written with encoding/json.
func refCommand(t *testing.T, frame []byte) (Envelope, error) {
	var e Envelope
	ms, ok := refMembers(t, frame)
	if !ok {
		return e, errNotObject
	}
	var idErr, err error
	seen := map[string]bool{}
	for _, m := range ms {
		switch m.key {
		case "id", "method", "sessionId", "params":
			if seen[m.key] {
				return e, ErrDuplicateKey
			}
			seen[m.key] = true
		}
		switch m.key {
		case "id":
			if n, ok := refInt(m.raw); ok {
				e.ID, e.HasID = n, true
			} else {
				idErr = ErrNoID
			}
		case "method":
			if s, ok := refString(t, m.raw); ok {
				e.Method = s
			} else {
				err = firstErr(err, ErrNoMethod)
			}
		case "sessionId":
			if s, ok := refString(t, m.raw); ok {
				e.SessionID = s
			} else {
				err = firstErr(err, ErrBadSession)
			}
		case "params":
			switch m.raw[0] {
			case '{':
				e.Params = m.raw
			case 'n':
			default:
				err = firstErr(err, ErrBadParams)
			}
		}
	}
	switch {
	case idErr != nil:
		return e, idErr
	case !e.HasID:
		return e, ErrNoID
	case err != nil:
		return e, err
	case len(e.Method) == 0:
		return e, ErrNoMethod
	}
	return e, nil
}

func sameBytes(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }

func FuzzDecodeCommand(f *testing.F) {
	for _, tt := range commandTests {
		if len(tt.frame) < 4096 {
			f.Add([]byte(tt.frame))
		}
	}
	f.Add([]byte(`{"id":1,"method":"M","ſessionId":"x","sessionId":"S"}`))
	f.Add([]byte(`{"id":1,"METHOD":"X","method":"M","ID":2}`))
	f.Fuzz(func(t *testing.T, frame []byte) {
		var e Envelope
		err := DecodeCommand(frame, &e)
		sameSyntaxError(t, frame, err)

		bad, skip := refSyntax(frame)
		if skip {
			return
		}
		if bad {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("DecodeCommand(%q) = %v, want a *SyntaxError", frame, err)
			}
			return
		}
		want, wantErr := refCommand(t, frame)
		if err != wantErr {
			t.Fatalf("DecodeCommand(%q) = %v, want %v", frame, err, wantErr)
		}
		if err == errNotObject {
			return
		}
		if e.ID != want.ID || e.HasID != want.HasID {
			t.Fatalf("DecodeCommand(%q) id = %d,%v, want %d,%v", frame, e.ID, e.HasID, want.ID, want.HasID)
		}
		if err != nil {
			return
		}
		if !bytes.Equal(e.Method, want.Method) || !sameBytes(e.SessionID, want.SessionID) || !sameBytes(e.Params, want.Params) {
			t.Fatalf("DecodeCommand(%q) = %+v, want %+v", frame, e, want)
		}
		if e.Params != nil && e.Params[0] != '{' {
			t.Fatalf("params %q is not an object", e.Params)
		}

		// The same frame through encoding/json's struct decoding. It folds
		// case when matching keys, so frames with such near-miss keys are
		// left to the reference above.
		ms, _ := refMembers(t, frame)
		for _, m := range ms {
			for _, k := range []string{"id", "method", "sessionId", "params"} {
				if m.key != k && strings.EqualFold(m.key, k) {
					return
				}
			}
		}
		var s struct {
			ID        int64           `json:"id"`
			Method    string          `json:"method"`
			SessionID string          `json:"sessionId"`
			Params    json.RawMessage `json:"params"`
		}
		if err := json.Unmarshal(frame, &s); err != nil {
			t.Fatalf("DecodeCommand accepted %q, encoding/json says %v", frame, err)
		}
		params := []byte(s.Params)
		if string(params) == "null" {
			params = nil
		}
		if s.ID != e.ID || s.Method != string(e.Method) || s.SessionID != string(e.SessionID) || !bytes.Equal(params, e.Params) {
			t.Fatalf("DecodeCommand(%q) = %+v, encoding/json gives %+v", frame, e, s)
		}
	})
}

// refExt is DecodeExt's contract written with encoding/json.
func refExt(t *testing.T, frame []byte) (ExtMessage, error) {
	var m ExtMessage
	ms, ok := refMembers(t, frame)
	if !ok {
		return m, errNotObject
	}
	seen := map[string]bool{}
	for _, mb := range ms {
		switch mb.key {
		case "id", "method", "params", "result", "error":
			if seen[mb.key] {
				return m, ErrBadExtMessage
			}
			seen[mb.key] = true
		}
		switch mb.key {
		case "id":
			n, ok := refInt(mb.raw)
			if !ok {
				return m, ErrBadExtMessage
			}
			m.ID, m.HasID = n, true
		case "method":
			s, ok := refString(t, mb.raw)
			if !ok {
				return m, ErrBadExtMessage
			}
			m.Method = s
		case "params":
			if mb.raw[0] != '[' {
				return m, ErrBadExtMessage
			}
			m.Params = mb.raw
		case "result":
			m.Result = mb.raw
		case "error":
			m.HasError = true
			if s, ok := refString(t, mb.raw); ok {
				m.Error = s
			} else {
				m.Error = mb.raw
			}
		}
	}
	switch {
	case m.HasID && m.Method == nil && (m.Result != nil || m.HasError):
		return m, nil
	case !m.HasID && m.Method != nil:
		return m, nil
	}
	return m, ErrBadExtMessage
}

func FuzzDecodeExt(f *testing.F) {
	for _, tt := range extTests {
		f.Add([]byte(tt.frame))
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		var m ExtMessage
		err := DecodeExt(frame, &m)
		sameSyntaxError(t, frame, err)

		bad, skip := refSyntax(frame)
		if skip {
			return
		}
		if bad {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("DecodeExt(%q) = %v, want a *SyntaxError", frame, err)
			}
			return
		}
		want, wantErr := refExt(t, frame)
		if err != wantErr {
			t.Fatalf("DecodeExt(%q) = %v, want %v", frame, err, wantErr)
		}
		if err != nil {
			return
		}
		if m.ID != want.ID || m.HasID != want.HasID || m.HasError != want.HasError ||
			!sameBytes(m.Method, want.Method) || !sameBytes(m.Params, want.Params) ||
			!sameBytes(m.Result, want.Result) || !sameBytes(m.Error, want.Error) {
			t.Fatalf("DecodeExt(%q) = %+v, want %+v", frame, m, want)
		}
		if m.Params != nil {
			// What the relay does next with an event.
			src, method, params, err := DebuggerEvent(m.Params)
			checkDebuggerEvent(t, m.Params, src, method, params, err)
		}
	})
}

// refDebuggerEvent is DebuggerEvent's contract written with encoding/json,
// for a valid args span.
func refDebuggerEvent(t *testing.T, args []byte) (src Source, method, params []byte, ok bool) {
	var els []json.RawMessage
	if err := json.Unmarshal(args, &els); err != nil || len(els) < 2 {
		return src, nil, nil, false
	}
	ms, isObj := refMembers(t, els[0])
	if !isObj {
		return src, nil, nil, false
	}
	hasTab := false
	for _, m := range ms {
		switch m.key {
		case "tabId":
			n, ok := refInt(m.raw)
			if !ok {
				return src, nil, nil, false
			}
			src.TabID, hasTab = n, true
		case "sessionId":
			s, ok := refString(t, m.raw)
			if !ok {
				return src, nil, nil, false
			}
			src.SessionID = s
		}
	}
	if !hasTab {
		return src, nil, nil, false
	}
	if method, ok = refString(t, els[1]); !ok {
		return src, nil, nil, false
	}
	if len(els) > 2 && els[2][0] == '{' {
		params = els[2]
	}
	return src, method, params, true
}

func checkDebuggerEvent(t *testing.T, args []byte, src Source, method, params []byte, err error) {
	t.Helper()
	if err != nil && err != ErrBadExtMessage {
		t.Fatalf("DebuggerEvent(%q) error %v", args, err)
	}
	if Valid(args) != nil || depthOf(args) > MaxDepth {
		return
	}
	wsrc, wmethod, wparams, ok := refDebuggerEvent(t, args)
	if ok != (err == nil) {
		t.Fatalf("DebuggerEvent(%q) = %v, want ok=%v", args, err, ok)
	}
	if !ok {
		return
	}
	if src.TabID != wsrc.TabID || !sameBytes(src.SessionID, wsrc.SessionID) ||
		!bytes.Equal(method, wmethod) || !sameBytes(params, wparams) {
		t.Fatalf("DebuggerEvent(%q) = %+v %q %q, want %+v %q %q", args, src, method, params, wsrc, wmethod, wparams)
	}
}

func FuzzDebuggerEvent(f *testing.F) {
	for _, tt := range debuggerEventTests {
		f.Add([]byte(tt.args))
	}
	f.Add([]byte(`[{"tabId":1,"tabId":2,"sessionId":"A","sessionId":"B"},"E",{},{}]`))
	f.Fuzz(func(t *testing.T, args []byte) {
		src, method, params, err := DebuggerEvent(args)
		checkDebuggerEvent(t, args, src, method, params, err)

		// The other readers of valid spans must not fail on any input.
		var out [4][]byte
		Args(args, out[:])
		Field(args, "tabId")
		StringField(args, "sessionId")
		DecodeSource(args)
		if s, ok := Unquote(args); ok {
			var ref string
			if err := json.Unmarshal(args, &ref); err != nil {
				t.Fatalf("Unquote accepted %q, encoding/json says %v", args, err)
			}
			if utf8.Valid(args) && ref != string(s) {
				t.Fatalf("Unquote(%q) = %q, encoding/json gives %q", args, s, ref)
			}
		}
	})
}

func FuzzAppendString(f *testing.F) {
	for _, s := range appendStringTests {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := AppendString([]byte("x"), s)
		if out[0] != 'x' {
			t.Fatal("prefix lost")
		}
		out = out[1:]
		if err := Valid(out); err != nil {
			t.Fatalf("AppendString(%q) = %s: %v", s, out, err)
		}
		if b := AppendBytesString(nil, []byte(s)); !bytes.Equal(b, out) {
			t.Fatalf("AppendBytesString(%q) = %s, AppendString = %s", s, b, out)
		}
		var got string
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("Unmarshal(%s): %v", out, err)
		}
		if utf8.ValidString(s) {
			if got != s {
				t.Fatalf("AppendString(%q) round-trips to %q", s, got)
			}
		} else if want := replaceInvalid(s); got != want {
			t.Fatalf("AppendString(%q) round-trips to %q, want %q", s, got, want)
		}
		if u, ok := Unquote(out); !ok || string(u) != got {
			t.Fatalf("Unquote(%s) = %q, %v; want %q", out, u, ok, got)
		}
	})
}

// replaceInvalid replaces every byte of s that does not begin a valid UTF-8
// sequence with U+FFFD, as encoding/json does (strings.ToValidUTF8 would
// merge runs of them).
func replaceInvalid(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		b.WriteRune(r)
		i += size
	}
	return b.String()
}
