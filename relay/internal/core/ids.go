package core

import "github.com/cdprelay/cdprelay/relay/internal/cdp"

// RandHex is cdp.RandHex, by the short name the core's many callers use.
var RandHex = cdp.RandHex
