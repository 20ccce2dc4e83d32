// Package origins says which origins are the relay's own, which no shared
// tab may reach (Origins, origins.go), which pages are never shared with
// automation, the relay's own among them (Origins.NeverShared,
// nevershared.go, with the refusal of a command bound there and the access
// of a page there: Refusal, Origins.Access), and the first-request rules the extension installs
// while a client is connected: the policy's network rules with those that
// keep the shared tabs off the relay's own origins (NetFenceRules,
// netfence.go).
//
// It is a leaf: it imports relay/internal/api, relay/internal/cdp,
// internal/wire, denylist and the standard library, and never the core
// nor a stage, so that the server, the core and every stage can share it.
package origins
