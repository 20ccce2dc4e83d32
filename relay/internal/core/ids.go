package core

import "github.com/cdprelay/cdprelay/relay/internal/cdp"

// randHex is cdp.RandHex, by the short name the relay's many callers use.
var RandHex = cdp.RandHex

// NewGUID mints a guid for callers that persist the default instance's.
func NewGUID() string { return cdp.NewGUID() }
