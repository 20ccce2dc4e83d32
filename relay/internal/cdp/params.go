package cdp

import (
	"errors"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/cdprelay/cdprelay/internal/wire"
)

// Params read as Chrome reads them.
//
// Chrome compares the keys of a command's params exactly, after their
// escapes are decoded ("u\u0072l" is "url", "URL" is not). Params that
// give a key twice are refused, since the relay and the browser need not
// pick the same one of two.

// DecodeStruct decodes params into v as Chrome reads them: exact keys,
// escapes decoded, no key twice, unknown keys ignored. Absent params
// decode as {}.
func DecodeStruct(params []byte, v any) error {
	if params == nil {
		return nil
	}
	return jsonv2.Unmarshal(params, v)
}

// ParamsError is a command whose params the relay cannot read the way
// Chrome would: it is answered -32602 (CodeInvalidParams), never
// forwarded. Msg is the answer's message.
type ParamsError struct{ Msg string }

func (e *ParamsError) Error() string { return e.Msg }

// ExactString reads the string member key of params as Chrome reads it:
// found is whether params give it; a key given twice or a value that is
// not a string is a *ParamsError.
func ExactString(params []byte, key string) (val string, found bool, err error) {
	if params == nil {
		return "", false, nil
	}
	raw, n := wire.Member(params, key)
	switch {
	case n == 0:
		return "", false, nil
	case n > 1:
		return "", true, &ParamsError{"Invalid parameters: params carry '" + key + "' twice"}
	}
	s, ok := wire.Unquote(raw)
	if !ok {
		return "", true, &ParamsError{"Invalid parameters: Failed to deserialize params." + key + " - BINDINGS: string value expected"}
	}
	return string(s), true, nil
}

// InvalidParams returns err, an error of reading params (DecodeStruct's,
// ExactString's), as the *ParamsError Chrome's answer would carry.
func InvalidParams(err error) error {
	var pe *ParamsError
	if errors.As(err, &pe) {
		return pe
	}
	msg := err.Error()
	// The decoder's own words, without its package prefix.
	msg = strings.TrimPrefix(msg, "json: ")
	if strings.Contains(msg, "duplicate") {
		return &ParamsError{"Invalid parameters: params carry a key twice"}
	}
	return &ParamsError{"Invalid parameters: " + msg}
}
