package wire

// Frame builders: every message the relay writes is built here, so that
// the shapes of replies, errors, events and extension calls are defined
// once. Each appends to dst and returns it; none allocates beyond dst's
// growth. A session argument is the session id as a JSON string token
// (see Quote), or nil for a message without one.

// Quote appends s as a JSON string token: the form the builders take a
// session id in.
func Quote(dst, s []byte) []byte { return appendString(dst, s) }

func appendSession(dst, session []byte) []byte {
	if session == nil {
		return dst
	}
	dst = append(dst, `,"sessionId":`...)
	return append(dst, session...)
}

// AppendResult appends a reply {"id","sessionId"?,"result"}. result is a
// JSON value; nil stands for {}.
func AppendResult(dst []byte, id int64, session, result []byte) []byte {
	dst = append(dst, `{"id":`...)
	dst = AppendInt(dst, id)
	dst = appendSession(dst, session)
	dst = append(dst, `,"result":`...)
	if result == nil {
		dst = append(dst, "{}"...)
	} else {
		dst = append(dst, result...)
	}
	return append(dst, '}')
}

// AppendError appends an error reply {"id","sessionId"?,"error":{"code",
// "message"}}.
func AppendError(dst []byte, id int64, session []byte, code int64, msg string) []byte {
	dst = append(dst, `{"id":`...)
	dst = AppendInt(dst, id)
	dst = appendSession(dst, session)
	dst = appendErrorObject(dst, code, msg)
	return append(dst, '}')
}

// AppendErrorNoID appends the error reply to a message that had no usable
// id: {"id":null,"error":{...}}, as Chrome answers one.
func AppendErrorNoID(dst []byte, code int64, msg string) []byte {
	dst = append(dst, `{"id":null`...)
	dst = appendErrorObject(dst, code, msg)
	return append(dst, '}')
}

func appendErrorObject(dst []byte, code int64, msg string) []byte {
	dst = append(dst, `,"error":{"code":`...)
	dst = AppendInt(dst, code)
	dst = append(dst, `,"message":`...)
	dst = appendString(dst, msg)
	return append(dst, '}')
}

// AppendEvent appends an event {"method","sessionId"?,"params"}. params is
// a JSON object; nil stands for {}.
func AppendEvent[T ~string | ~[]byte](dst []byte, method T, session, params []byte) []byte {
	dst = append(dst, `{"method":`...)
	dst = appendString(dst, method)
	dst = appendSession(dst, session)
	dst = append(dst, `,"params":`...)
	if params == nil {
		dst = append(dst, "{}"...)
	} else {
		dst = append(dst, params...)
	}
	return append(dst, '}')
}

// AppendCall appends a command to the extension {"id","method","params"}.
// args is the JSON array of the call's arguments; nil stands for [].
func AppendCall(dst []byte, id int64, method string, args []byte) []byte {
	dst = append(dst, `{"id":`...)
	dst = AppendInt(dst, id)
	dst = append(dst, `,"method":`...)
	dst = appendString(dst, method)
	dst = append(dst, `,"params":`...)
	if args == nil {
		dst = append(dst, "[]"...)
	} else {
		dst = append(dst, args...)
	}
	return append(dst, '}')
}

// AppendSendCommand appends the extension call that sends a CDP command to
// a tab: chrome.debugger.sendCommand with the debuggee {tabId, sessionId?},
// the method and its params (nil: none). session is the child session's
// id as a JSON string token, or nil for the tab's own session.
func AppendSendCommand[T ~string | ~[]byte](dst []byte, id, tabID int64, session []byte, method T, params []byte) []byte {
	dst = append(dst, `{"id":`...)
	dst = AppendInt(dst, id)
	dst = append(dst, `,"method":"chrome.debugger.sendCommand","params":[{"tabId":`...)
	dst = AppendInt(dst, tabID)
	dst = appendSession(dst, session)
	dst = append(dst, "},"...)
	dst = appendString(dst, method)
	if params != nil {
		dst = append(dst, ',')
		dst = append(dst, params...)
	}
	return append(dst, "]}"...)
}

// Message is any protocol message decoded by DecodeMessage: a CDP command,
// reply or event, or an extension call, reply or event. Slices alias the
// frame; strings are unquoted.
type Message struct {
	ID        int64
	HasID     bool
	Method    []byte
	SessionID []byte
	Params    []byte // raw value
	Result    []byte // raw value
	HasError  bool
	ErrCode   int64
	ErrMsg    []byte
}

// DecodeMessage reads the top level of any message the builders write. It
// is for tests and tools that check what went over a socket; the relay's
// own read paths use DecodeCommand and DecodeExt.
func DecodeMessage(frame []byte, m *Message) error {
	*m = Message{}
	o, err := openTopObject(frame)
	if err != nil {
		return err
	}
	for {
		key, esc, val, ok := o.next()
		if !ok {
			break
		}
		if esc {
			key = decodeEscaped(key)
		}
		switch string(key) {
		case "id":
			m.ID, m.HasID = parseInt(val)
		case "method":
			m.Method, _ = unquote(val)
		case "sessionId":
			m.SessionID, _ = unquote(val)
		case "params":
			m.Params = val
		case "result":
			m.Result = val
		case "error":
			m.HasError = true
			if val[0] == '{' {
				m.ErrCode, _ = parseInt(Field(val, "code"))
				m.ErrMsg = StringField(val, "message")
			} else {
				m.ErrMsg, _ = unquote(val)
			}
		}
	}
	return o.err
}
