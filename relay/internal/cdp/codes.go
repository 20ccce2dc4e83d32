package cdp

// CDP error codes, as Chrome uses them.
const (
	CodeParseError     = -32700 // the message is not JSON
	CodeInvalidRequest = -32600 // the message is not a command
	CodeMethodNotFound = -32601 // no such method
	CodeInvalidParams  = -32602 // the params cannot be read
	CodeServerError    = -32000 // the command failed
	CodeNoSession      = -32001 // no session of that id
)
