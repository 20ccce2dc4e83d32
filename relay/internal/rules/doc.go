// Package rules is the relay's concern of the operator's rules and fences,
// as far as it is plain data or bytes in and bytes out: the relay's own
// rules (their ids and texts, the Target methods a tab's session may send,
// the upload folders' checks: relayrules.go), the navigation backstop's
// Fetch patterns, the rewrite of a client's Fetch.enable and what the
// backstop keeps per session (fetchfence.go), the first-request rules the
// policy gives the extension (netfence.go), the relay's own origins, which
// are never shared (ownorigins.go), and the browser's own policy
// refusals, read from Chrome's texts and said in words
// (policyrefusal.go).
//
// Its state lives where the relay keeps it: a FetchState per session in
// the tab's rules slot (Tab, embedded in the relay's tab), the Origins in the server; the relay's stages
// (the method rules through the policy, rules.Relay, rules.Uploads,
// rules.TargetOnTab, the fence and its backstop) run on the relay's
// commands and call into this package. It knows no instance, tab,
// session, client or command.
//
// It imports relay/internal/api, internal/wire, denylist and the
// standard library and encoding packages. It must not import package
// relay (github.com/cdprelay/cdprelay/relay) nor the package of another
// concern under relay/internal (tiers, person, creds, browser, targets):
// imports run from the facade to the concerns to the core, never back.
package rules
