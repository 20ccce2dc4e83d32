package wire

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// batchItem is what one step of a batch walk gave.
type batchItem struct {
	m   ExtMessage
	err error
}

// walkBatch walks frame to its end and returns every element and the
// frame's error (OpenBatch's or Err's).
func walkBatch(frame []byte) ([]batchItem, error) {
	bt, err := OpenBatch(frame)
	if err != nil {
		return nil, err
	}
	var items []batchItem
	var m ExtMessage
	for {
		ok, err := bt.Next(&m)
		if !ok {
			return items, bt.Err()
		}
		items = append(items, batchItem{m, err})
	}
}

var batchTests = []struct {
	name  string
	frame string
	// want lists the elements: "reply N", "error N", "event M" or an error's
	// text for an element that is no message.
	want []string
	err  error
}{
	{name: "empty", frame: `[]`},
	{name: "empty spaced", frame: " [ \n ] "},
	{name: "one reply", frame: `[{"id":1,"result":{}}]`, want: []string{"reply 1"}},
	{name: "replies and events in order", frame: `[{"id":2,"result":{"a":[1,{"b":2}]}},{"method":"chrome.debugger.onEvent","params":[{"tabId":7},"Page.loadEventFired",{}]},{"id":1,"error":"gone"},{"method":"extension.keepalive","params":[]}]`,
		want: []string{"reply 2", "event chrome.debugger.onEvent", "error 1", "event extension.keepalive"}},
	{name: "spaced", frame: "[ {\"id\" : 3 , \"result\" : 1 } ,\n\t{ \"id\":4,\"result\":2} ]", want: []string{"reply 3", "reply 4"}},
	{name: "bad element between good ones", frame: `[{"id":1,"result":{}},{"id":"x","result":{}},{"id":2,"result":{}}]`,
		want: []string{"reply 1", ErrBadExtMessage.Error(), "reply 2"}},
	{name: "elements that are no objects", frame: `[1,"s",null,[{"id":1,"result":{}}],{"id":5,"result":true}]`,
		want: []string{ErrBatchElement.Error(), ErrBatchElement.Error(), ErrBatchElement.Error(), ErrBatchElement.Error(), "reply 5"}},
	{name: "duplicate key in one element", frame: `[{"method":"a","method":"b"},{"method":"c"}]`,
		want: []string{ErrBadExtMessage.Error(), "event c"}},
	{name: "broken JSON ends the walk after what came before", frame: `[{"id":1,"result":{}},{"id":2,"result":}]`,
		want: []string{"reply 1"}, err: errSyntax},
	{name: "missing comma", frame: `[{"id":1,"result":{}} {"id":2,"result":{}}]`, want: []string{"reply 1"}, err: errSyntax},
	{name: "trailing comma", frame: `[{"id":1,"result":{}},]`, want: []string{"reply 1"}, err: errSyntax},
	{name: "unterminated", frame: `[{"id":1,"result":{}}`, want: []string{"reply 1"}, err: errSyntax},
	{name: "trailing data", frame: `[{"id":1,"result":{}}] x`, want: []string{"reply 1"}, err: errSyntax},
	{name: "invalid UTF-8 refuses the whole frame", frame: "[{\"id\":1,\"result\":{}},{\"method\":\"\xff\"}]", err: errSyntax},
	{name: "too deep", frame: `[{"id":1,"result":` + nested("[", "]", MaxDepth) + `}]`, err: errSyntax},
	{name: "deepest", frame: `[{"id":1,"result":` + nested("[", "]", MaxDepth-2) + `}]`, want: []string{"reply 1"}},
}

func describe(it batchItem) string {
	switch {
	case it.err != nil:
		return it.err.Error()
	case it.m.HasID && it.m.HasError:
		return fmt.Sprint("error ", it.m.ID)
	case it.m.HasID:
		return fmt.Sprint("reply ", it.m.ID)
	default:
		return "event " + string(it.m.Method)
	}
}

func TestBatch(t *testing.T) {
	for _, tt := range batchTests {
		t.Run(tt.name, func(t *testing.T) {
			if !IsBatch([]byte(tt.frame)) {
				t.Fatalf("IsBatch(%q) = false", tt.frame)
			}
			items, err := walkBatch([]byte(tt.frame))
			if tt.err == nil && err != nil {
				t.Fatalf("err = %v, want none", err)
			}
			if tt.err != nil {
				checkErr(t, err, tt.err)
			}
			var got []string
			for _, it := range items {
				got = append(got, describe(it))
			}
			if strings.Join(got, "; ") != strings.Join(tt.want, "; ") {
				t.Errorf("elements = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestBatchElementSpans(t *testing.T) {
	frame := []byte(`[{"id":1,"result":{"x":"y"}},{"method":"chrome.debugger.onEvent","params":[{"tabId":3,"sessionId":"S"},"Network.dataReceived",{"n":1}]}]`)
	items, err := walkBatch(frame)
	if err != nil || len(items) != 2 {
		t.Fatalf("walk = %d items, %v", len(items), err)
	}
	if string(items[0].m.Result) != `{"x":"y"}` {
		t.Errorf("result = %s", items[0].m.Result)
	}
	src, method, params, err := DebuggerEvent(items[1].m.Params)
	if err != nil || src.TabID != 3 || string(src.SessionID) != "S" || string(method) != "Network.dataReceived" || string(params) != `{"n":1}` {
		t.Errorf("event = %+v %s %s %v", src, method, params, err)
	}
}

func TestIsBatch(t *testing.T) {
	for frame, want := range map[string]bool{`[]`: true, " \n[1]": true, `{"id":1}`: false, ``: false, ` `: false, `"["`: false} {
		if got := IsBatch([]byte(frame)); got != want {
			t.Errorf("IsBatch(%q) = %v, want %v", frame, got, want)
		}
	}
}

func TestBatchAllocs(t *testing.T) {
	frame := batchFrame(16)
	var m ExtMessage
	n := testing.AllocsPerRun(100, func() {
		bt, err := OpenBatch(frame)
		if err != nil {
			t.Fatal(err)
		}
		for {
			ok, err := bt.Next(&m)
			if !ok {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	})
	if n != 0 {
		t.Errorf("walking a batch of 16 allocates %v times", n)
	}
}

// batchFrame is a batch of n events as our extension sends them.
func batchFrame(n int) []byte {
	b := []byte{'['}
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, extEvent...)
	}
	return append(b, ']')
}

func BenchmarkDecodeExtBatch(b *testing.B) {
	frame := batchFrame(16)
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	var m ExtMessage
	for b.Loop() {
		bt, err := OpenBatch(frame)
		if err != nil {
			b.Fatal(err)
		}
		for {
			ok, err := bt.Next(&m)
			if !ok {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			if _, _, _, err := DebuggerEvent(m.Params); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func FuzzBatch(f *testing.F) {
	for _, tt := range batchTests {
		f.Add([]byte(tt.frame))
	}
	for _, tt := range extTests {
		f.Add([]byte("[" + tt.frame + "," + tt.frame + "]"))
	}
	f.Fuzz(func(t *testing.T, frame []byte) {
		if !IsBatch(frame) {
			return
		}
		items, err := walkBatch(frame)
		// The walk validates the frame as Valid does, with the same error.
		sameSyntaxError(t, frame, err)
		bad, skip := refSyntax(frame)
		if bad || skip {
			return
		}
		var els []json.RawMessage
		if err := json.Unmarshal(frame, &els); err != nil {
			t.Fatalf("encoding/json: %v", err)
		}
		if len(items) != len(els) {
			t.Fatalf("walk of %q gave %d elements, want %d", frame, len(items), len(els))
		}
		for i, el := range els {
			got := items[i]
			if el[0] != '{' {
				if !errors.Is(got.err, ErrBatchElement) {
					t.Fatalf("element %d %s: %v, want ErrBatchElement", i, el, got.err)
				}
				continue
			}
			want, wantErr := refExt(t, el)
			if got.err != wantErr {
				t.Fatalf("element %d %s: %v, want %v", i, el, got.err, wantErr)
			}
			if wantErr != nil {
				continue
			}
			m := got.m
			if m.ID != want.ID || m.HasID != want.HasID || m.HasError != want.HasError ||
				!sameBytes(m.Method, want.Method) || !sameBytes(m.Params, want.Params) ||
				!sameBytes(m.Result, want.Result) || !sameBytes(m.Error, want.Error) {
				t.Fatalf("element %d %s = %+v, want %+v", i, el, m, want)
			}
		}
	})
}
