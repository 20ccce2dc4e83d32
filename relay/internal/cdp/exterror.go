package cdp

import "github.com/cdprelay/cdprelay/internal/wire"

// What the extension protocol says of chrome.debugger: its errors and its
// name for a session.

// ExtError is an error reply from the extension. Chrome's CDP errors come
// through as their code and message.
type ExtError struct {
	Code    int64
	Message string
}

func (e *ExtError) Error() string { return e.Message }

// ParseExtError reads an extension error string. chrome.debugger reports a
// CDP error as the JSON text of {code, message}; anything else is a plain
// message.
func ParseExtError(msg []byte) *ExtError {
	if len(msg) > 0 && msg[0] == '{' && wire.Valid(msg) == nil {
		code, okc := wire.Int(wire.Field(msg, "code"))
		text := wire.StringField(msg, "message")
		if okc && text != nil {
			return &ExtError{Code: code, Message: string(text)}
		}
	}
	return &ExtError{Code: CodeServerError, Message: string(msg)}
}

// Debuggee is chrome.debugger's name for tab tabID's session sid ("" for
// the tab's own).
func Debuggee(tabID int64, sid string) map[string]any {
	d := map[string]any{"tabId": tabID}
	if sid != "" {
		d["sessionId"] = sid
	}
	return d
}
