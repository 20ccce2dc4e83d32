package wire

import (
	"strings"
	"testing"
)

var (
	smallCommand = []byte(`{"id":42,"sessionId":"9A8B7C6D5E4F3A2B1C0D9E8F7A6B5C4D","method":"Runtime.callFunctionOn","params":{"functionDeclaration":"function(){return this.x}","objectId":"-123.45","returnByValue":true,"awaitPromise":false}}`)
	extReply     = []byte(`{"id":42,"result":{"result":{"type":"number","value":3,"description":"3"}}}`)
	extEvent     = []byte(`{"method":"onEvent","params":[{"tabId":1234567,"sessionId":"9A8B7C6D5E4F3A2B1C0D9E8F7A6B5C4D"},"Network.requestWillBeSent",{"requestId":"1000.1","loaderId":"L","documentURL":"https://example.com/","request":{"url":"https://example.com/a.js","method":"GET","headers":{"Accept":"*/*","User-Agent":"Mozilla/5.0"}},"timestamp":12345.678,"wallTime":1700000000.123,"initiator":{"type":"parser"},"type":"Script","frameId":"F"}]}`)
	badIDCommand = []byte(`{"id":1.5,"method":"Page.enable"}`)
	eventArgs    = extEvent[len(`{"method":"onEvent","params":`) : len(extEvent)-1]
)

// largeCommand is the shape of the biggest command Playwright sends: its
// injected script as one Runtime.evaluate expression of about 330 KB.
var largeCommand = func() []byte {
	var b strings.Builder
	b.WriteString(`{"id":7,"sessionId":"9A8B7C6D5E4F3A2B1C0D9E8F7A6B5C4D","method":"Runtime.evaluate","params":{"expression":"`)
	line := `(() => { const x = { kind: \"selector\", parts: [1, 2, 3] }; if (a < b && c > d) { return \"it's \\\\ fine\"; } })();\n`
	for b.Len() < 330_000 {
		b.WriteString(line)
	}
	b.WriteString(`","contextId":3,"returnByValue":false,"awaitPromise":true,"userGesture":true}}`)
	return []byte(b.String())
}()

func TestFixtures(t *testing.T) {
	var e Envelope
	for _, f := range [][]byte{smallCommand, largeCommand} {
		if err := DecodeCommand(f, &e); err != nil || e.Params == nil {
			t.Fatalf("fixture %.60s: %v", f, err)
		}
	}
	var m ExtMessage
	if err := DecodeExt(extEvent, &m); err != nil || string(m.Params) != string(eventArgs) {
		t.Fatalf("extEvent: %v, params %q", err, m.Params)
	}
	if err := DecodeExt(extReply, &m); err != nil || m.Result == nil {
		t.Fatalf("extReply: %v", err)
	}
}

func TestZeroAllocs(t *testing.T) {
	var (
		e   Envelope
		m   ExtMessage
		err error
		buf = make([]byte, 0, 256)
	)
	tests := []struct {
		name string
		f    func()
	}{
		{"DecodeCommand", func() { err = DecodeCommand(smallCommand, &e) }},
		{"DecodeCommand large", func() { err = DecodeCommand(largeCommand, &e) }},
		{"DecodeCommand bad id", func() { err = nilIf(DecodeCommand(badIDCommand, &e), ErrNoID) }},
		{"DecodeExt reply", func() { err = DecodeExt(extReply, &m) }},
		{"DecodeExt event", func() { err = DecodeExt(extEvent, &m) }},
		{"DebuggerEvent", func() { _, _, _, err = DebuggerEvent(eventArgs) }},
		{"Field", func() {
			if Field(smallCommand, "params") == nil {
				err = ErrBadParams
			}
		}},
		{"AppendBytesString", func() {
			buf = AppendBytesString(buf[:0], e.Method)
			buf = AppendBytesString(buf, []byte("é\n\"\u2028\xff"))
		}},
		{"AppendInt", func() { buf = AppendInt(buf[:0], -1<<53+1) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if n := testing.AllocsPerRun(100, tt.f); n != 0 {
				t.Errorf("%v allocations per run, want 0", n)
			}
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// nilIf maps the expected error to nil so that a test can assert on it.
func nilIf(err, expected error) error {
	if err == expected {
		return nil
	}
	if err == nil {
		return ErrNoMethod
	}
	return err
}

func BenchmarkDecodeCommand(b *testing.B) {
	b.SetBytes(int64(len(smallCommand)))
	b.ReportAllocs()
	var e Envelope
	for b.Loop() {
		if err := DecodeCommand(smallCommand, &e); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeCommandLarge(b *testing.B) {
	b.SetBytes(int64(len(largeCommand)))
	b.ReportAllocs()
	var e Envelope
	for b.Loop() {
		if err := DecodeCommand(largeCommand, &e); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeExtEvent(b *testing.B) {
	b.SetBytes(int64(len(extEvent)))
	b.ReportAllocs()
	var m ExtMessage
	for b.Loop() {
		if err := DecodeExt(extEvent, &m); err != nil {
			b.Fatal(err)
		}
		if _, _, _, err := DebuggerEvent(m.Params); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkValidLarge(b *testing.B) {
	b.SetBytes(int64(len(largeCommand)))
	for b.Loop() {
		if err := Valid(largeCommand); err != nil {
			b.Fatal(err)
		}
	}
}
