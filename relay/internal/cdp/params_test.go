package cdp

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/cdprelay/cdprelay/internal/wire"
)

var exactCases = []struct {
	params, key string
	val         string
	found       bool
	wantErr     bool
}{
	{`{"url":"https://a.test/"}`, "url", "https://a.test/", true, false},
	{`{"URL":"file:///etc/passwd"}`, "url", "", false, false},
	{`{"Url":"file:///etc/passwd","url":"https://a.test/"}`, "url", "https://a.test/", true, false},
	{`{"u\u0072l":"file:///etc/passwd"}`, "url", "file:///etc/passwd", true, false},
	{`{"url":"https://a.test/","url":"file:///etc/passwd"}`, "url", "", true, true},
	{`{"url":"https://a.test/","u\u0072l":"file:///etc/passwd"}`, "url", "", true, true},
	{`{"url":7}`, "url", "", true, true},
	{`{"a":{"url":"x"}}`, "url", "", false, false},
	{`{"name":"a\"b\u00e9"}`, "name", "a\"b\u00e9", true, false},
	{``, "url", "", false, false},
}

func TestExactString(t *testing.T) {
	for _, tc := range exactCases {
		var p []byte
		if tc.params != "" {
			p = []byte(tc.params)
		}
		val, found, err := ExactString(p, tc.key)
		if val != tc.val || found != tc.found || (err != nil) != tc.wantErr {
			t.Errorf("%s %s: %q %v %v, want %q %v error %v", tc.params, tc.key, val, found, err, tc.val, tc.found, tc.wantErr)
		}
		var pe *ParamsError
		if err != nil && (!errors.As(err, &pe) || !strings.HasPrefix(pe.Msg, "Invalid parameters: ")) {
			t.Errorf("%s: error %v is not an answer's", tc.params, err)
		}
	}
}

func TestDecodeStruct(t *testing.T) {
	for _, tc := range []struct {
		params  string
		want    string
		wantErr string
	}{
		{`{"targetId":"T"}`, "T", ""},
		{`{"TargetId":"T"}`, "", ""},
		{`{"t\u0061rgetId":"T"}`, "T", ""},
		{`{"targetId":"T","targetId":"U"}`, "", "Invalid parameters: params carry a key twice"},
		{`{"targetId":7}`, "", "Invalid parameters: "},
		{``, "", ""},
	} {
		var v struct {
			TargetID string `json:"targetId"`
		}
		var p []byte
		if tc.params != "" {
			p = []byte(tc.params)
		}
		err := DecodeStruct(p, &v)
		if err != nil {
			err = InvalidParams(err)
		}
		switch {
		case tc.wantErr == "" && err != nil, tc.wantErr != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.wantErr)):
			t.Errorf("%s: error %v, want %q", tc.params, err, tc.wantErr)
		case err == nil && v.TargetID != tc.want:
			t.Errorf("%s: read %q, want %q", tc.params, v.TargetID, tc.want)
		}
	}
	if err := InvalidParams(&ParamsError{"kept"}); err.Error() != "kept" {
		t.Errorf("a ParamsError became %v", err)
	}
}

// FuzzExactString: what ExactString reads is what an exact reading of the
// top-level members gives; a key given twice or not a string is refused.
func FuzzExactString(f *testing.F) {
	for _, tc := range exactCases {
		f.Add([]byte(tc.params), tc.key)
	}
	f.Fuzz(func(t *testing.T, params []byte, key string) {
		if wire.Valid(params) != nil || len(params) == 0 || params[0] != '{' {
			return
		}
		val, found, err := ExactString(params, key)
		dec := json.NewDecoder(bytes.NewReader(params))
		if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
			return
		}
		var vs []json.RawMessage
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return
			}
			var raw json.RawMessage
			if dec.Decode(&raw) != nil {
				return
			}
			if tok.(string) == key {
				vs = append(vs, raw)
			}
		}
		var want string
		switch {
		case len(vs) == 0 && (found || err != nil || val != ""):
			t.Fatalf("%s: no %q, read %q %v %v", params, key, val, found, err)
		case len(vs) > 1 && err == nil:
			t.Fatalf("%s: %q given twice, accepted", params, key)
		case len(vs) == 1 && json.Unmarshal(vs[0], &want) != nil && err == nil:
			t.Fatalf("%s: a non-string %q accepted", params, key)
		case len(vs) == 1 && err == nil && (!found || val != want):
			t.Fatalf("%s: read %q, an exact reading gives %q", params, val, want)
		}
	})
}
