package relay

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"testing"

	"github.com/gorilla/websocket"
)

// anyValue in a pattern matches any value that is present.
const anyValue = "<any>"

// mustMatch checks that got is JSON of exactly the shape of the pattern
// want: the same keys, no extra ones, equal values, anyValue matching
// whatever is present.
func mustMatch(t testing.TB, got []byte, want string) {
	t.Helper()
	if err := matchJSON(got, want); err != nil {
		t.Fatalf("%v\n got: %s\nwant: %s", err, got, want)
	}
}

func matchJSON(got []byte, want string) error {
	g, err := decodeJSON(got)
	if err != nil {
		return fmt.Errorf("got is not JSON: %w", err)
	}
	w, err := decodeJSON([]byte(want))
	if err != nil {
		return fmt.Errorf("pattern is not JSON: %w", err)
	}
	return diffJSON("$", g, w)
}

func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("trailing data")
	}
	return v, nil
}

func diffJSON(path string, got, want any) error {
	if want == anyValue {
		return nil
	}
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: got %v, want an object", path, got)
		}
		keys := make([]string, 0, len(w))
		for k := range w {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			gv, ok := g[k]
			if !ok {
				return fmt.Errorf("%s: missing key %q", path, k)
			}
			if err := diffJSON(path+"."+k, gv, w[k]); err != nil {
				return err
			}
		}
		for k := range g {
			if _, ok := w[k]; !ok {
				return fmt.Errorf("%s: unexpected key %q", path, k)
			}
		}
		return nil
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Errorf("%s: got %v, want %d elements", path, got, len(w))
		}
		for i := range w {
			if err := diffJSON(fmt.Sprintf("%s[%d]", path, i), g[i], w[i]); err != nil {
				return err
			}
		}
		return nil
	}
	if !reflect.DeepEqual(got, want) {
		return fmt.Errorf("%s: got %#v, want %#v", path, got, want)
	}
	return nil
}

// closeFrame returns the code and reason of a connection's close frame.
func closeFrame(t testing.TB, err error) (int, string) {
	t.Helper()
	var ce *websocket.CloseError
	if !errors.As(err, &ce) {
		t.Fatalf("connection ended without a close frame: %v", err)
	}
	return ce.Code, ce.Text
}

func TestMatchJSON(t *testing.T) {
	tests := []struct {
		got, want string
		ok        bool
	}{
		{`{"a":1,"b":[1,"x"]}`, `{"b":[1,"x"],"a":1}`, true},
		{`{"a":1}`, `{"a":1,"b":2}`, false},
		{`{"a":1,"b":2}`, `{"a":1}`, false},
		{`{"a":1}`, `{"a":"1"}`, false},
		{`{"a":[1,2]}`, `{"a":[2,1]}`, false},
		{`{"a":{"x":null}}`, `{"a":"<any>"}`, true},
		{`{"a":1.0}`, `{"a":1}`, false},
		{`{"a":1}{}`, `{"a":1}`, false},
	}
	for _, tt := range tests {
		if err := matchJSON([]byte(tt.got), tt.want); (err == nil) != tt.ok {
			t.Errorf("matchJSON(%s, %s) = %v, want ok=%t", tt.got, tt.want, err, tt.ok)
		}
	}
}

func mustDecode(t testing.TB, s string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatalf("decode %s: %v", s, err)
	}
}
