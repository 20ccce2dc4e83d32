package cdp

import "encoding/json"

// Thrown is the result of an evaluation (Runtime.evaluate,
// callFunctionOn) that threw an Error with msg: how the relay refuses
// script, so that clients report what it says (they report a protocol
// error of an evaluation as the context's end).
func Thrown(msg string) []byte {
	e := map[string]any{"type": "object", "subtype": "error", "className": "Error", "description": "Error: " + msg}
	b, _ := json.Marshal(map[string]any{"result": e, "exceptionDetails": map[string]any{
		"exceptionId": 1, "text": "Uncaught", "lineNumber": 0, "columnNumber": 0, "exception": e,
	}})
	return b
}
