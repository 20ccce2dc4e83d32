package core

import (
	"github.com/cdprelay/cdprelay/relay/internal/cdp"
	"github.com/cdprelay/cdprelay/relay/internal/methods"
)

// The method table is package methods' (what the relay knows of each CDP
// method and event); the core plans each entry: which rows of its tables
// want it (order.go).

// MethodInfo is one method (methods.Info).
type MethodInfo = methods.Info

// LookupMethod returns the entry of method, making one for a method the
// table lacks.
func LookupMethod(method []byte) *MethodInfo { return methods.Lookup(method) }

// Params are read as Chrome reads them (cdp/params.go), by the short names
// the relay's many callers use. Functions rather than variables, so that
// they inline and the compiler still sees what escapes on the per-message
// path.

func DecodeStruct(params []byte, v any) error { return cdp.DecodeStruct(params, v) }

func ExactString(params []byte, key string) (val string, found bool, err error) {
	return cdp.ExactString(params, key)
}
