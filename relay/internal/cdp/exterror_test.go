package cdp

import "testing"

var extErrorCases = []struct {
	in   string
	code int64
	msg  string
}{
	{`{"code":-32601,"message":"'Foo.bar' wasn't found"}`, -32601, "'Foo.bar' wasn't found"},
	{`{"code":-32000,"message":"Cannot navigate to invalid URL"}`, -32000, "Cannot navigate to invalid URL"},
	// Not Chrome's {code, message}: the text is the message.
	{`Debugger is not attached to the tab with id: 7.`, CodeServerError, "Debugger is not attached to the tab with id: 7."},
	{`{"message":"no code"}`, CodeServerError, `{"message":"no code"}`},
	{`{"code":"x","message":"a code that is no number"}`, CodeServerError, `{"code":"x","message":"a code that is no number"}`},
	{`{"code":-32000`, CodeServerError, `{"code":-32000`},
	{``, CodeServerError, ``},
}

func TestParseExtError(t *testing.T) {
	for _, tc := range extErrorCases {
		e := ParseExtError([]byte(tc.in))
		if e.Code != tc.code || e.Message != tc.msg || e.Error() != tc.msg {
			t.Errorf("ParseExtError(%q) = {%d %q}, want {%d %q}", tc.in, e.Code, e.Message, tc.code, tc.msg)
		}
	}
}

func TestDebuggee(t *testing.T) {
	if d := Debuggee(3, ""); len(d) != 1 || d["tabId"] != int64(3) {
		t.Errorf("a tab's own session: %v", d)
	}
	if d := Debuggee(3, "S"); len(d) != 2 || d["sessionId"] != "S" {
		t.Errorf("a child session: %v", d)
	}
}

// FuzzParseExtError: whatever the extension sends as an error, it is read
// without a panic into an error with a message; the message is the text
// itself unless the text is Chrome's {code, message}.
func FuzzParseExtError(f *testing.F) {
	for _, tc := range extErrorCases {
		f.Add([]byte(tc.in))
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		e := ParseExtError(msg)
		if e == nil {
			t.Fatal("no error")
		}
		if e.Code == CodeServerError && e.Message != string(msg) && (len(msg) == 0 || msg[0] != '{') {
			t.Fatalf("the plain text %q became %q", msg, e.Message)
		}
	})
}
