package denylist

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

var (
	errParamsNotObject = errors.New("params are not a JSON object")
	errDuplicateKey    = errors.New("params carry the same key twice")
)

// eachParam calls f with every top-level key of params, decoded (so that
// "u\u0072l" is "url"), and its raw value. Absent or null params have no
// keys. The whole object is read, whatever f returns, so that a malformed
// tail is an error as it would be in Chrome.
func eachParam(params []byte, f func(key string, raw json.RawMessage)) error {
	t := bytes.TrimSpace(params)
	if len(t) == 0 || string(t) == "null" {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(t))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return errParamsNotObject
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return errParamsNotObject
		}
		key, ok := tok.(string)
		if !ok {
			return errParamsNotObject
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return errParamsNotObject
		}
		f(key, raw)
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return errParamsNotObject
	}
	if _, err := dec.Token(); err != io.EOF {
		return errParamsNotObject
	}
	return nil
}

// paramString returns the string value of the top-level key in params.
// Keys are compared exactly, as Chrome does; a key given twice is refused
// because the relay and the browser need not pick the same one.
func paramString(params []byte, key string) (val string, found bool, err error) {
	var n int
	var raw json.RawMessage
	err = eachParam(params, func(k string, r json.RawMessage) {
		if k == key {
			n++
			raw = r
		}
	})
	switch {
	case err != nil:
		return "", false, err
	case n == 0:
		return "", false, nil
	case n > 1:
		return "", true, errDuplicateKey
	}
	if len(raw) == 0 || raw[0] != '"' {
		return "", true, errors.New(key + " is not a string")
	}
	if err := json.Unmarshal(raw, &val); err != nil {
		return "", true, errors.New(key + " is not a string")
	}
	return val, true, nil
}

// paramHasAny reports whether params carry any of keys at the top level,
// whatever the value.
func paramHasAny(params []byte, keys []string) (bool, error) {
	found := false
	err := eachParam(params, func(k string, _ json.RawMessage) {
		for _, want := range keys {
			if k == want {
				found = true
			}
		}
	})
	return found, err
}
