package wire

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestBuilders(t *testing.T) {
	sid := Quote(nil, []byte("pw-tab-1"))
	for _, tc := range []struct {
		name string
		got  []byte
		want string
	}{
		{"result", AppendResult(nil, 7, sid, []byte(`{"a":1}`)), `{"id":7,"sessionId":"pw-tab-1","result":{"a":1}}`},
		{"empty result at the root", AppendResult(nil, 7, nil, nil), `{"id":7,"result":{}}`},
		{"error", AppendError(nil, -1, sid, -32000, "a \"quoted\" reason"), `{"id":-1,"sessionId":"pw-tab-1","error":{"code":-32000,"message":"a \"quoted\" reason"}}`},
		{"error without id", AppendErrorNoID(nil, -32700, "bad"), `{"id":null,"error":{"code":-32700,"message":"bad"}}`},
		{"event", AppendEvent(nil, "Page.loadEventFired", sid, []byte(`{"timestamp":1}`)), `{"method":"Page.loadEventFired","sessionId":"pw-tab-1","params":{"timestamp":1}}`},
		{"event without params", AppendEvent(nil, []byte("X.y"), nil, nil), `{"method":"X.y","params":{}}`},
		{"call", AppendCall(nil, 3, "chrome.tabs.remove", []byte(`[5]`)), `{"id":3,"method":"chrome.tabs.remove","params":[5]}`},
		{"send command", AppendSendCommand(nil, 4, 9, nil, "Runtime.evaluate", []byte(`{"expression":"1"}`)), `{"id":4,"method":"chrome.debugger.sendCommand","params":[{"tabId":9},"Runtime.evaluate",{"expression":"1"}]}`},
		{"send command to a child", AppendSendCommand(nil, 4, 9, Quote(nil, []byte("C1")), []byte("Page.enable"), nil), `{"id":4,"method":"chrome.debugger.sendCommand","params":[{"tabId":9,"sessionId":"C1"},"Page.enable"]}`},
	} {
		if string(tc.got) != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, tc.got, tc.want)
		}
		if !json.Valid(tc.got) {
			t.Errorf("%s: not JSON: %s", tc.name, tc.got)
		}
	}
}

// FuzzBuilders: what a builder writes, the decoders read back
// identically — the client's command decoder for the reply shapes' ids and
// sessions, the extension decoder for calls, and DecodeMessage for all.
func FuzzBuilders(f *testing.F) {
	f.Add(int64(1), int64(7), "pw-tab-1", "Runtime.evaluate", []byte(`{"expression":"1"}`), int64(-32000), "reason")
	f.Add(int64(-9), int64(0), "", "X.y", []byte(`{}`), int64(0), "")
	f.Add(int64(1<<53), int64(1<<31), "sé\"ss\\ion\u2028", "Me\u0000thod", []byte(`{"a":[1,{"b":null}],"c":"\u00e9"}`), int64(-32601), "bad \x7f\xff")
	f.Fuzz(func(t *testing.T, id, tabID int64, session, method string, params []byte, code int64, msg string) {
		// Ids and codes are the client's or Chrome's, which are safe
		// integers (the decoders refuse others).
		id, tabID, code = id%(maxSafeInt+1), tabID%(maxSafeInt+1), code%(maxSafeInt+1)
		if Valid(params) != nil || len(params) == 0 || params[0] != '{' {
			params = []byte(`{}`)
		}
		var sid []byte
		if session != "" {
			sid = Quote(nil, []byte(session))
		}
		// The session and method as they read back: builders replace
		// invalid UTF-8 with U+FFFD, as encoding/json does.
		wantSession := readBack(t, Quote(nil, []byte(session)))
		wantMethod := readBack(t, Quote(nil, []byte(method)))
		wantMsg := readBack(t, Quote(nil, []byte(msg)))

		var m Message
		check := func(what string, frame []byte) {
			t.Helper()
			if err := Valid(frame); err != nil {
				t.Fatalf("%s: invalid frame %q: %v", what, frame, err)
			}
			if err := DecodeMessage(frame, &m); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
		}
		check("result", AppendResult(nil, id, sid, params))
		if !m.HasID || m.ID != id || string(m.SessionID) != sessionOrNil(wantSession, session) || !bytes.Equal(m.Result, params) {
			t.Fatalf("result read back as %+v", m)
		}
		check("error", AppendError(nil, id, sid, code, msg))
		if m.ID != id || !m.HasError || m.ErrCode != code || string(m.ErrMsg) != wantMsg || string(m.SessionID) != sessionOrNil(wantSession, session) {
			t.Fatalf("error read back as %+v", m)
		}
		check("event", AppendEvent(nil, method, sid, params))
		if m.HasID || string(m.Method) != wantMethod || !bytes.Equal(m.Params, params) || string(m.SessionID) != sessionOrNil(wantSession, session) {
			t.Fatalf("event read back as %+v", m)
		}
		// Extension calls read back through the extension's own reading of
		// its arguments: the debuggee and the method.
		frame := AppendSendCommand(nil, id, tabID, sid, method, params)
		check("send command", frame)
		var args [3][]byte
		if m.ID != id || string(m.Method) != "chrome.debugger.sendCommand" || Args(m.Params, args[:]) != 3 {
			t.Fatalf("send command read back as %+v", m)
		}
		src, ok := DecodeSource(args[0])
		if !ok || src.TabID != tabID || string(src.SessionID) != sessionOrNil(wantSession, session) {
			t.Fatalf("debuggee read back as %+v from %s", src, args[0])
		}
		if got, _ := Unquote(args[1]); string(got) != wantMethod || !bytes.Equal(args[2], params) {
			t.Fatalf("method and params read back as %s %s", args[1], args[2])
		}
		// A client command built the same way decodes with the relay's own
		// command decoder.
		cmd := AppendEvent(nil, method, sid, params)
		cmd = append([]byte(`{"id":`+itoa(id)+`,`), cmd[1:]...)
		var env Envelope
		if err := DecodeCommand(cmd, &env); err == nil {
			if env.ID != id || string(env.Method) != wantMethod || string(env.SessionID) != sessionOrNil(wantSession, session) || !bytes.Equal(env.Params, params) {
				t.Fatalf("command read back as %+v", env)
			}
		} else if wantMethod != "" {
			t.Fatalf("command %s: %v", cmd, err)
		}
	})
}

func readBack(t *testing.T, tok []byte) string {
	s, ok := Unquote(tok)
	if !ok {
		t.Fatalf("Quote wrote an invalid token %q", tok)
	}
	return string(s)
}

func sessionOrNil(readBack, session string) string {
	if session == "" {
		return ""
	}
	return readBack
}

func itoa(n int64) string { return string(AppendInt(nil, n)) }
