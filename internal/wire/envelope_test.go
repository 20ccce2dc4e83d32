package wire

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// errSyntax in a table stands for "any *SyntaxError".
var errSyntax = errors.New("syntax error")

func sp(s string) *string { return &s }

func checkErr(t *testing.T, got, want error) {
	t.Helper()
	if want == errSyntax {
		var se *SyntaxError
		if !errors.As(got, &se) {
			t.Fatalf("err = %v, want a *SyntaxError", got)
		}
		return
	}
	if got != want {
		t.Fatalf("err = %v, want %v", got, want)
	}
}

func checkBytes(t *testing.T, what string, got []byte, want *string) {
	t.Helper()
	switch {
	case want == nil && got != nil:
		t.Errorf("%s = %q, want nil", what, got)
	case want != nil && got == nil:
		t.Errorf("%s = nil, want %q", what, *want)
	case want != nil && string(got) != *want:
		t.Errorf("%s = %q, want %q", what, got, *want)
	}
}

var commandTests = []struct {
	name    string
	frame   string
	err     error
	id      int64
	hasID   bool
	method  string
	session *string
	params  *string
}{
	{name: "minimal", frame: `{"id":1,"method":"Page.enable"}`,
		id: 1, hasID: true, method: "Page.enable"},
	{name: "params", frame: `{"id":2,"method":"Runtime.evaluate","params":{"expression":"1+1"}}`,
		id: 2, hasID: true, method: "Runtime.evaluate", params: sp(`{"expression":"1+1"}`)},
	{name: "session and params", frame: `{"id":3,"sessionId":"8F3A","method":"DOM.getDocument","params":{"depth":-1}}`,
		id: 3, hasID: true, method: "DOM.getDocument", session: sp("8F3A"), params: sp(`{"depth":-1}`)},
	{name: "session without params", frame: `{"sessionId":"S","method":"M","id":4}`,
		id: 4, hasID: true, method: "M", session: sp("S")},
	{name: "empty session", frame: `{"id":1,"method":"M","sessionId":""}`,
		id: 1, hasID: true, method: "M", session: sp("")},
	{name: "whitespace everywhere", frame: " \r\n{ \"id\" : 5 ,\t\"method\" :\"M\" , \"params\" : { } }\n",
		id: 5, hasID: true, method: "M", params: sp(`{ }`)},
	{name: "params null", frame: `{"id":1,"method":"M","params":null}`,
		id: 1, hasID: true, method: "M"},
	{name: "params empty", frame: `{"id":1,"method":"M","params":{}}`,
		id: 1, hasID: true, method: "M", params: sp(`{}`)},
	{name: "params nested", frame: `{"id":1,"method":"M","params":{"a":[1,{"b":"}"}],"c":"\"{"}}`,
		id: 1, hasID: true, method: "M", params: sp(`{"a":[1,{"b":"}"}],"c":"\"{"}`)},
	{name: "params array", frame: `{"id":7,"method":"M","params":[1]}`,
		err: ErrBadParams, id: 7, hasID: true, method: "M"},
	{name: "params string", frame: `{"id":7,"method":"M","params":"{}"}`,
		err: ErrBadParams, id: 7, hasID: true, method: "M"},
	{name: "params number", frame: `{"id":7,"method":"M","params":0}`,
		err: ErrBadParams, id: 7, hasID: true, method: "M"},
	{name: "params false", frame: `{"id":7,"method":"M","params":false}`,
		err: ErrBadParams, id: 7, hasID: true, method: "M"},
	{name: "id zero", frame: `{"id":0,"method":"M"}`,
		id: 0, hasID: true, method: "M"},
	{name: "id minus zero", frame: `{"id":-0,"method":"M"}`,
		id: 0, hasID: true, method: "M"},
	{name: "id negative", frame: `{"id":-1,"method":"M"}`,
		id: -1, hasID: true, method: "M"},
	{name: "id max safe", frame: `{"id":9007199254740991,"method":"M"}`,
		id: 1<<53 - 1, hasID: true, method: "M"},
	{name: "id min safe", frame: `{"id":-9007199254740991,"method":"M"}`,
		id: -(1<<53 - 1), hasID: true, method: "M"},
	{name: "id 2^53", frame: `{"id":9007199254740992,"method":"M"}`, err: ErrNoID, method: "M"},
	{name: "id float", frame: `{"id":1.0,"method":"M"}`, err: ErrNoID, method: "M"},
	{name: "id exponent", frame: `{"id":1e3,"method":"M"}`, err: ErrNoID, method: "M"},
	{name: "id string", frame: `{"id":"1","method":"M"}`, err: ErrNoID, method: "M"},
	{name: "id null", frame: `{"id":null,"method":"M"}`, err: ErrNoID, method: "M"},
	{name: "id object", frame: `{"id":{},"method":"M"}`, err: ErrNoID, method: "M"},
	{name: "id missing", frame: `{"method":"M","params":{}}`, err: ErrNoID, method: "M", params: sp(`{}`)},
	{name: "empty object", frame: `{}`, err: ErrNoID},
	{name: "bad id wins over bad method", frame: `{"id":"x","method":1}`, err: ErrNoID},
	{name: "method missing", frame: `{"id":8}`, err: ErrNoMethod, id: 8, hasID: true},
	{name: "method missing with params", frame: `{"id":8,"params":{"method":"M"}}`,
		err: ErrNoMethod, id: 8, hasID: true, params: sp(`{"method":"M"}`)},
	{name: "method number", frame: `{"id":8,"method":1}`, err: ErrNoMethod, id: 8, hasID: true},
	{name: "method null", frame: `{"id":8,"method":null}`, err: ErrNoMethod, id: 8, hasID: true},
	{name: "method object", frame: `{"id":8,"method":{"a":"b"}}`, err: ErrNoMethod, id: 8, hasID: true},
	{name: "method empty", frame: `{"id":8,"method":""}`, err: ErrNoMethod, id: 8, hasID: true},
	{name: "session number", frame: `{"id":9,"method":"M","sessionId":5}`,
		err: ErrBadSession, id: 9, hasID: true, method: "M"},
	{name: "session null", frame: `{"id":9,"method":"M","sessionId":null}`,
		err: ErrBadSession, id: 9, hasID: true, method: "M"},
	{name: "first envelope error wins", frame: `{"id":9,"sessionId":1,"params":[],"method":"M"}`,
		err: ErrBadSession, id: 9, hasID: true, method: "M"},
	{name: "first envelope error wins reversed", frame: `{"id":9,"params":[],"sessionId":1,"method":"M"}`,
		err: ErrBadParams, id: 9, hasID: true, method: "M"},
	{name: "duplicate id", frame: `{"id":1,"method":"M","id":2}`, err: ErrDuplicateKey, id: 1, hasID: true, method: "M"},
	{name: "duplicate method", frame: `{"id":1,"method":"M","method":"N"}`, err: ErrDuplicateKey, id: 1, hasID: true, method: "M"},
	{name: "duplicate session", frame: `{"id":1,"method":"M","sessionId":"A","sessionId":"B"}`,
		err: ErrDuplicateKey, id: 1, hasID: true, method: "M", session: sp("A")},
	{name: "duplicate params", frame: `{"id":1,"method":"M","params":{},"params":{"a":1}}`,
		err: ErrDuplicateKey, id: 1, hasID: true, method: "M", params: sp(`{}`)},
	{name: "duplicate params null", frame: `{"id":1,"method":"M","params":null,"params":{}}`,
		err: ErrDuplicateKey, id: 1, hasID: true, method: "M"},
	{name: "duplicate escaped method", frame: `{"id":1,"method":"M","\u006dethod":"Evil"}`,
		err: ErrDuplicateKey, id: 1, hasID: true, method: "M"},
	{name: "duplicate escaped id", frame: `{"i\u0064":1,"id":2,"method":"M"}`, err: ErrDuplicateKey, id: 1, hasID: true},
	{name: "duplicate escaped session", frame: `{"id":1,"method":"M","sessionId":"A","\u0073essionId":"B"}`,
		err: ErrDuplicateKey, id: 1, hasID: true, method: "M", session: sp("A")},
	{name: "duplicate with bad id first", frame: `{"id":"x","id":1,"method":"M"}`, err: ErrDuplicateKey},
	{name: "duplicate unknown keys are fine", frame: `{"x":1,"x":2,"id":1,"method":"M"}`,
		id: 1, hasID: true, method: "M"},
	{name: "escaped key alone", frame: `{"id":1,"\u006Dethod":"M"}`, id: 1, hasID: true, method: "M"},
	{name: "fully escaped keys", frame: `{"\u0069\u0064":1,"\u006d\u0065\u0074\u0068\u006f\u0064":"M","\u0070arams":{}}`,
		id: 1, hasID: true, method: "M", params: sp(`{}`)},
	{name: "escaped method", frame: `{"id":1,"method":"Page.\u0065nable"}`, id: 1, hasID: true, method: "Page.enable"},
	{name: "escaped method unicode", frame: `{"id":1,"method":"\u00e9\ud83d\ude00\n"}`, id: 1, hasID: true, method: "é😀\n"},
	{name: "escaped session", frame: `{"id":1,"method":"M","sessionId":"A\/B"}`,
		id: 1, hasID: true, method: "M", session: sp("A/B")},
	{name: "nested method does not override", frame: `{"id":1,"params":{"method":"Evil","id":9,"sessionId":"S"},"method":"Good"}`,
		id: 1, hasID: true, method: "Good", params: sp(`{"method":"Evil","id":9,"sessionId":"S"}`)},
	{name: "nested method in unknown key", frame: `{"id":1,"x":{"method":"Evil"},"y":[{"method":"Evil"}],"method":"Good"}`,
		id: 1, hasID: true, method: "Good"},
	{name: "method inside a string", frame: `{"id":1,"x":"\",\"method\":\"Evil","method":"Good"}`,
		id: 1, hasID: true, method: "Good"},
	{name: "unknown keys ignored", frame: `{"id":1,"method":"M","foo":{"a":[1,2]},"bar":null,"baz":"q","n":-1.5e3}`,
		id: 1, hasID: true, method: "M"},
	{name: "keys are case sensitive", frame: `{"id":1,"method":"M","Method":"X","ID":2,"SessionId":"S","Params":[]}`,
		id: 1, hasID: true, method: "M"},
	{name: "key with trailing NUL", frame: `{"id":1,"method":"M","method\u0000":"X"}`,
		id: 1, hasID: true, method: "M"},
	{name: "array frame", frame: `[{"id":1,"method":"M"}]`, err: errNotObject},
	{name: "string frame", frame: `"{}"`, err: errNotObject},
	{name: "number frame", frame: `1`, err: errNotObject},
	{name: "null frame", frame: `null`, err: errNotObject},
	{name: "empty frame", frame: ``, err: errSyntax},
	{name: "unterminated", frame: `{"id":1,"method":"M"`, err: errSyntax},
	{name: "trailing data", frame: `{"id":1,"method":"M"}}`, err: errSyntax},
	{name: "two objects", frame: `{"id":1,"method":"M"}{}`, err: errSyntax},
	{name: "trailing comma", frame: `{"id":1,"method":"M",}`, err: errSyntax},
	{name: "invalid UTF-8 in method", frame: "{\"id\":1,\"method\":\"M\xff\"}", err: errSyntax},
	{name: "invalid UTF-8 in params", frame: "{\"id\":1,\"method\":\"M\",\"params\":{\"a\":\"\xc3\"}}", err: errSyntax},
	{name: "control char in params", frame: "{\"id\":1,\"method\":\"M\",\"params\":{\"a\":\"\x01\"}}", err: errSyntax},
	{name: "syntax error after duplicate", frame: `{"id":1,"id":2,"method":"M",}`, err: errSyntax},
	{name: "syntax error after bad id", frame: `{"id":"x","method":"M"`, err: errSyntax},
	{name: "too deep params", frame: `{"id":1,"method":"M","params":{"a":` + nested("[", "]", MaxDepth) + `}}`, err: errSyntax},
	{name: "deepest params", frame: `{"id":1,"method":"M","params":{"a":` + nested("[", "]", MaxDepth-2) + `}}`,
		id: 1, hasID: true, method: "M", params: sp(`{"a":` + nested("[", "]", MaxDepth-2) + `}`)},
}

func TestDecodeCommand(t *testing.T) {
	for _, tt := range commandTests {
		t.Run(tt.name, func(t *testing.T) {
			e := Envelope{ID: 99, HasID: true, Method: []byte("stale"), SessionID: []byte("stale"), Params: []byte("{}")}
			err := DecodeCommand([]byte(tt.frame), &e)
			checkErr(t, err, tt.err)
			if tt.err == errSyntax || tt.err == errNotObject {
				if e.ID != 0 || e.HasID || e.Method != nil || e.SessionID != nil || e.Params != nil {
					t.Errorf("envelope %+v not cleared on %v", e, err)
				}
				return
			}
			if e.ID != tt.id || e.HasID != tt.hasID {
				t.Errorf("id = %d, %v; want %d, %v", e.ID, e.HasID, tt.id, tt.hasID)
			}
			if string(e.Method) != tt.method {
				t.Errorf("method = %q, want %q", e.Method, tt.method)
			}
			checkBytes(t, "sessionId", e.SessionID, tt.session)
			checkBytes(t, "params", e.Params, tt.params)
		})
	}
}

func TestDecodeCommandAliases(t *testing.T) {
	frame := []byte(`{"id":1,"sessionId":"S1","method":"Runtime.evaluate","params":{"expression":"x"}}`)
	var e Envelope
	if err := DecodeCommand(frame, &e); err != nil {
		t.Fatal(err)
	}
	within := func(what string, s []byte) {
		t.Helper()
		off := strings.Index(string(frame), string(s))
		if off < 0 || &frame[off] != &s[0] {
			t.Errorf("%s does not alias the frame", what)
		}
	}
	within("method", e.Method)
	within("sessionId", e.SessionID)
	within("params", e.Params)
}

var extTests = []struct {
	name     string
	frame    string
	err      error
	id       int64
	hasID    bool
	method   *string
	params   *string
	result   *string
	errMsg   *string
	hasError bool
}{
	{name: "reply", frame: `{"id":1,"result":{"frameId":"F"}}`,
		id: 1, hasID: true, result: sp(`{"frameId":"F"}`)},
	{name: "reply spaced", frame: ` { "result" : [ 1 ] , "id" : 2 } `,
		id: 2, hasID: true, result: sp(`[ 1 ]`)},
	{name: "reply null result", frame: `{"id":1,"result":null}`,
		id: 1, hasID: true, result: sp(`null`)},
	{name: "reply string error", frame: `{"id":2,"error":"No tab with given id 5."}`,
		id: 2, hasID: true, errMsg: sp("No tab with given id 5."), hasError: true},
	{name: "reply escaped error", frame: `{"id":2,"error":"a\"b\nc\u00e9"}`,
		id: 2, hasID: true, errMsg: sp("a\"b\nc\u00e9"), hasError: true},
	{name: "reply empty error", frame: `{"id":2,"error":""}`,
		id: 2, hasID: true, errMsg: sp(""), hasError: true},
	{name: "reply object error", frame: `{"id":3,"error":{"code":-32000,"message":"x"}}`,
		id: 3, hasID: true, errMsg: sp(`{"code":-32000,"message":"x"}`), hasError: true},
	{name: "reply number error", frame: `{"id":3,"error":42}`,
		id: 3, hasID: true, errMsg: sp(`42`), hasError: true},
	{name: "reply null error", frame: `{"id":3,"error":null}`,
		id: 3, hasID: true, errMsg: sp(`null`), hasError: true},
	{name: "reply result and error", frame: `{"id":3,"result":{},"error":"e"}`,
		id: 3, hasID: true, result: sp(`{}`), errMsg: sp("e"), hasError: true},
	{name: "reply escaped keys", frame: `{"\u0069d":4,"r\u0065sult":true}`,
		id: 4, hasID: true, result: sp(`true`)},
	{name: "reply unknown keys", frame: `{"id":4,"x":{"method":"m"},"result":1}`,
		id: 4, hasID: true, result: sp(`1`)},
	{name: "event", frame: `{"method":"onEvent","params":[{"tabId":3},"Page.loadEventFired",{"timestamp":1}]}`,
		method: sp("onEvent"), params: sp(`[{"tabId":3},"Page.loadEventFired",{"timestamp":1}]`)},
	{name: "event without params", frame: `{"method":"ping"}`, method: sp("ping")},
	{name: "event empty params", frame: `{"params":[],"method":"onDetach"}`, method: sp("onDetach"), params: sp(`[]`)},
	{name: "event escaped method", frame: `{"method":"on\u0045vent","params":[]}`,
		method: sp("onEvent"), params: sp(`[]`)},
	{name: "empty", frame: `{}`, err: ErrBadExtMessage},
	{name: "id only", frame: `{"id":1}`, err: ErrBadExtMessage},
	{name: "id and method", frame: `{"id":1,"method":"m","result":{}}`, err: ErrBadExtMessage},
	{name: "params object", frame: `{"method":"m","params":{}}`, err: ErrBadExtMessage},
	{name: "params null", frame: `{"method":"m","params":null}`, err: ErrBadExtMessage},
	{name: "method number", frame: `{"method":1,"params":[]}`, err: ErrBadExtMessage},
	{name: "method null", frame: `{"method":null}`, err: ErrBadExtMessage},
	{name: "id string", frame: `{"id":"1","result":{}}`, err: ErrBadExtMessage},
	{name: "id fraction", frame: `{"id":1.5,"result":{}}`, err: ErrBadExtMessage},
	{name: "id too big", frame: `{"id":9007199254740992,"result":{}}`, err: ErrBadExtMessage},
	{name: "result only", frame: `{"result":{}}`, err: ErrBadExtMessage},
	{name: "duplicate id", frame: `{"id":1,"id":1,"result":{}}`, err: ErrBadExtMessage},
	{name: "duplicate method", frame: `{"method":"a","method":"a"}`, err: ErrBadExtMessage},
	{name: "duplicate escaped method", frame: `{"method":"a","\u006dethod":"b"}`, err: ErrBadExtMessage},
	{name: "duplicate params", frame: `{"method":"a","params":[],"params":[]}`, err: ErrBadExtMessage},
	{name: "duplicate result", frame: `{"id":1,"result":null,"result":null}`, err: ErrBadExtMessage},
	{name: "duplicate error", frame: `{"id":1,"error":"a","error":"b"}`, err: ErrBadExtMessage},
	{name: "array", frame: `[]`, err: errNotObject},
	{name: "string", frame: `"x"`, err: errNotObject},
	{name: "syntax", frame: `{"id":1,"result":}`, err: errSyntax},
	{name: "trailing", frame: `{"id":1,"result":1} 1`, err: errSyntax},
	{name: "invalid UTF-8", frame: "{\"method\":\"\xff\"}", err: errSyntax},
}

func TestDecodeExt(t *testing.T) {
	for _, tt := range extTests {
		t.Run(tt.name, func(t *testing.T) {
			m := ExtMessage{ID: 99, HasID: true, Method: []byte("stale"), HasError: true}
			err := DecodeExt([]byte(tt.frame), &m)
			checkErr(t, err, tt.err)
			if tt.err != nil {
				if tt.err != ErrBadExtMessage && (m.HasID || m.Method != nil || m.HasError) {
					t.Errorf("message %+v not cleared on %v", m, err)
				}
				return
			}
			if m.ID != tt.id || m.HasID != tt.hasID {
				t.Errorf("id = %d, %v; want %d, %v", m.ID, m.HasID, tt.id, tt.hasID)
			}
			checkBytes(t, "method", m.Method, tt.method)
			checkBytes(t, "params", m.Params, tt.params)
			checkBytes(t, "result", m.Result, tt.result)
			checkBytes(t, "error", m.Error, tt.errMsg)
			if m.HasError != tt.hasError {
				t.Errorf("HasError = %v, want %v", m.HasError, tt.hasError)
			}
		})
	}
}

var debuggerEventTests = []struct {
	name    string
	args    string
	ok      bool
	tab     int64
	session *string
	method  string
	params  *string
}{
	{name: "full", args: `[{"tabId":3,"sessionId":"AB"},"Page.loadEventFired",{"timestamp":1}]`,
		ok: true, tab: 3, session: sp("AB"), method: "Page.loadEventFired", params: sp(`{"timestamp":1}`)},
	{name: "no session", args: `[{"tabId":3},"Page.loadEventFired",{"timestamp":1}]`,
		ok: true, tab: 3, method: "Page.loadEventFired", params: sp(`{"timestamp":1}`)},
	{name: "without params", args: `[{"tabId":3},"Inspector.detached"]`,
		ok: true, tab: 3, method: "Inspector.detached"},
	{name: "params null", args: `[{"tabId":3},"E",null]`, ok: true, tab: 3, method: "E"},
	{name: "spaced", args: " [ { \"sessionId\" : \"S\" , \"tabId\" : 12 } , \"E\" , { \"a\" : [ ] } ] ",
		ok: true, tab: 12, session: sp("S"), method: "E", params: sp(`{ "a" : [ ] }`)},
	{name: "extra source fields", args: `[{"tabId":1,"targetId":"T","extensionId":"X"},"E",{}]`,
		ok: true, tab: 1, method: "E", params: sp(`{}`)},
	{name: "escaped method", args: `[{"tabId":1},"Page.\u0066rameNavigated",{}]`,
		ok: true, tab: 1, method: "Page.frameNavigated", params: sp(`{}`)},
	{name: "escaped source keys", args: `[{"\u0074abId":7,"\u0073essionId":"S"},"E"]`,
		ok: true, tab: 7, session: sp("S"), method: "E"},
	{name: "empty", args: `[]`},
	{name: "source only", args: `[{"tabId":3}]`},
	{name: "source not object", args: `[3,"E"]`},
	{name: "source array", args: `[[],"E"]`},
	{name: "no tabId", args: `[{},"E"]`},
	{name: "tabId string", args: `[{"tabId":"3"},"E"]`},
	{name: "tabId fraction", args: `[{"tabId":3.5},"E"]`},
	{name: "tabId null", args: `[{"tabId":null},"E"]`},
	{name: "sessionId number", args: `[{"tabId":3,"sessionId":5},"E"]`},
	{name: "sessionId null", args: `[{"tabId":3,"sessionId":null},"E"]`},
	{name: "method number", args: `[{"tabId":3},5]`},
	{name: "method null", args: `[{"tabId":3},null]`},
	{name: "object", args: `{"tabId":3}`},
	{name: "string", args: `"E"`},
	{name: "nothing", args: ``},
}

func TestDebuggerEvent(t *testing.T) {
	for _, tt := range debuggerEventTests {
		t.Run(tt.name, func(t *testing.T) {
			src, method, params, err := DebuggerEvent([]byte(tt.args))
			if !tt.ok {
				if err != ErrBadExtMessage {
					t.Fatalf("err = %v, want ErrBadExtMessage", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if src.TabID != tt.tab {
				t.Errorf("tabId = %d, want %d", src.TabID, tt.tab)
			}
			checkBytes(t, "sessionId", src.SessionID, tt.session)
			if string(method) != tt.method {
				t.Errorf("method = %q, want %q", method, tt.method)
			}
			checkBytes(t, "params", params, tt.params)
		})
	}
}

func TestDecodeSource(t *testing.T) {
	tests := []struct {
		in      string
		ok      bool
		tab     int64
		session *string
	}{
		{`{"tabId":3,"sessionId":"AB"}`, true, 3, sp("AB")},
		{`{"tabId":3}`, true, 3, nil},
		{`{"tabId":-1}`, true, -1, nil},
		{` { "sessionId" : "A\"B" , "tabId" : 0 } `, true, 0, sp(`A"B`)},
		{`{"\u0074abId":3}`, true, 3, nil},
		{`{"tabId":3,"other":{"tabId":"x","sessionId":1}}`, true, 3, nil},
		{`{"TabId":3}`, false, 0, nil},
		{`{"sessionId":"AB"}`, false, 0, nil},
		{`{"tabId":"3"}`, false, 0, nil},
		{`{"tabId":1e3}`, false, 0, nil},
		{`{"tabId":3,"sessionId":7}`, false, 0, nil},
		{`{"tabId":3,"sessionId":{}}`, false, 0, nil},
		{`{}`, false, 0, nil},
		{`[]`, false, 0, nil},
		{`3`, false, 0, nil},
		{``, false, 0, nil},
	}
	for _, tt := range tests {
		src, ok := DecodeSource([]byte(tt.in))
		if ok != tt.ok {
			t.Errorf("DecodeSource(%s) ok = %v, want %v", tt.in, ok, tt.ok)
			continue
		}
		if !ok {
			continue
		}
		if src.TabID != tt.tab {
			t.Errorf("DecodeSource(%s) tabId = %d, want %d", tt.in, src.TabID, tt.tab)
		}
		checkBytes(t, "DecodeSource("+tt.in+") sessionId", src.SessionID, tt.session)
	}
}

func TestField(t *testing.T) {
	obj := ` { "a" : 1 , "b":{"c":2,"d":"x"}, "s":"v\n", "e\u0073c":"y", "n":null, "arr":[1,{"a":9}] } `
	tests := []struct {
		key  string
		want *string
	}{
		{"a", sp(`1`)},
		{"b", sp(`{"c":2,"d":"x"}`)},
		{"s", sp(`"v\n"`)},
		{"esc", sp(`"y"`)},
		{"n", sp(`null`)},
		{"arr", sp(`[1,{"a":9}]`)},
		{"c", nil},
		{"d", nil},
		{"A", nil},
		{"", nil},
	}
	for _, tt := range tests {
		checkBytes(t, "Field("+tt.key+")", Field([]byte(obj), tt.key), tt.want)
	}
	for _, notObj := range []string{`[{"a":1}]`, `"a"`, `1`, ``, `null`} {
		if v := Field([]byte(notObj), "a"); v != nil {
			t.Errorf("Field(%s, a) = %q, want nil", notObj, v)
		}
	}
	if v := Field([]byte(`{}`), "a"); v != nil {
		t.Errorf("Field({}, a) = %q", v)
	}
}

func TestStringField(t *testing.T) {
	obj := []byte(`{"url":"https://a/","esc":"a\tb\u00e9","empty":"","num":1,"obj":{"url":"x"},"nul":null}`)
	tests := []struct {
		key  string
		want *string
	}{
		{"url", sp("https://a/")},
		{"esc", sp("a\tb\u00e9")},
		{"empty", sp("")},
		{"num", nil},
		{"obj", nil},
		{"nul", nil},
		{"missing", nil},
	}
	for _, tt := range tests {
		checkBytes(t, "StringField("+tt.key+")", StringField(obj, tt.key), tt.want)
	}
}

func TestArgs(t *testing.T) {
	arr := []byte(` [ 1 , "a,]" ,{"b":[2,3]}, [ ] ,null ] `)
	want := []string{`1`, `"a,]"`, `{"b":[2,3]}`, `[ ]`, `null`}

	out := make([][]byte, 10)
	if n := Args(arr, out); n != len(want) {
		t.Fatalf("Args = %d, want %d", n, len(want))
	}
	for i, w := range want {
		if string(out[i]) != w {
			t.Errorf("out[%d] = %q, want %q", i, out[i], w)
		}
	}
	if out[len(want)] != nil {
		t.Errorf("Args wrote past the elements: %q", out[len(want)])
	}

	short := make([][]byte, 2)
	if n := Args(arr, short); n != len(want) {
		t.Errorf("Args into a short slice = %d, want %d", n, len(want))
	}
	if string(short[0]) != want[0] || string(short[1]) != want[1] {
		t.Errorf("short = %q", short)
	}
	if n := Args(arr, nil); n != len(want) {
		t.Errorf("Args(nil) = %d", n)
	}
	for _, in := range []string{`[]`, ` [ ] `, `{}`, `"[1]"`, ``, `1`} {
		if n := Args([]byte(in), out); n != 0 {
			t.Errorf("Args(%q) = %d, want 0", in, n)
		}
	}
}

var appendStringTests = []string{
	"",
	"abc",
	"Runtime.evaluate",
	`"`,
	`\`,
	`a"b\c`,
	"/",
	"\n\r\t\b\f",
	"\x00\x01\x02\x07\x0b\x0e\x1e\x1f",
	"\x7f",
	"<script>&amp;</script>",
	"é€😀",
	"\u2028\u2029",
	"a\u2028b\u2029c",
	"\u2027\u202a",
	"\uFFFD",
	"\xff",
	"a\xffb",
	"\xed\xa0\x80",
	"\xc3",
	"\xc3(",
	"\xf0\x9f\x98",
	"\xf0\x9f\x98\x80\xf0",
	"\xc0\xaf",
	"\xf4\x90\x80\x80",
	"x\x00é\xff\u2028\"",
	strings.Repeat("long string with \"quotes\" and \\ ", 100),
}

func TestAppendString(t *testing.T) {
	for _, s := range appendStringTests {
		got := AppendString(nil, s)
		if err := Valid(got); err != nil {
			t.Errorf("AppendString(%q) = %s is not valid: %v", s, got, err)
			continue
		}
		if b := AppendBytesString(nil, []byte(s)); string(b) != string(got) {
			t.Errorf("AppendBytesString(%q) = %s, AppendString = %s", s, b, got)
		}
		var dec string
		if err := json.Unmarshal(got, &dec); err != nil {
			t.Errorf("Unmarshal(AppendString(%q)): %v", s, err)
			continue
		}
		ref, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var want string
		if err := json.Unmarshal(ref, &want); err != nil {
			t.Fatal(err)
		}
		if dec != want {
			t.Errorf("AppendString(%q) decodes to %q, encoding/json round trip gives %q", s, dec, want)
		}
		if utf8.ValidString(s) && dec != s {
			t.Errorf("AppendString(%q) decodes to %q", s, dec)
		}
	}
}

func TestAppendStringExact(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", `""`},
		{"abc", `"abc"`},
		{`a"b\c`, `"a\"b\\c"`},
		{"\n\r\t", `"\n\r\t"`},
		{"\x00\x1f\b\f", `"\u0000\u001f\u0008\u000c"`},
		{"\x7f/<&>", "\"\x7f/<&>\""},
		{"\u2028\u2029", `"\u2028\u2029"`},
		{"é\xffx", "\"é\\ufffdx\""},
		{"\xed\xa0\x80", `"\ufffd\ufffd\ufffd"`},
		{"\uFFFD", "\"\uFFFD\""},
	}
	for _, tt := range tests {
		if got := AppendString(nil, tt.in); string(got) != tt.want {
			t.Errorf("AppendString(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
	prefix := []byte(`{"method":`)
	got := AppendString(prefix[:len(prefix):len(prefix)], "M")
	if string(got) != `{"method":"M"` {
		t.Errorf("AppendString kept no prefix: %s", got)
	}
	if string(AppendInt([]byte("id:"), -42)) != "id:-42" {
		t.Error("AppendInt")
	}
}
