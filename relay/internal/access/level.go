package access

import "github.com/cdprelay/cdprelay/relay/internal/api"

// Level is what automation may do with a tab or a frame (api.Level): the
// levels are ordered, a greater one is stricter.
type Level = api.Level

const (
	Full     = api.Full
	ReadOnly = api.ReadOnly
	Blind    = api.Blind
)
