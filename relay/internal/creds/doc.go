// Package creds is the relay's concern of credentials and secrets, as far
// as it is bytes in and bytes out: the passwords of URLs in what goes to a
// client (userinfo.go), the pieces of a stream read while a secret is
// locked (streams.go), the credential headers and cookies of events and
// results redacted, and a paused request's put back when the client
// continues it (redact.go, restore.go), what the lock cannot read
// (lockgates.go), and the scripts that type a secret and look at the
// field that holds it (secrets.go, secretfield.go).
//
// Its state lives where the relay keeps it: Instance (the lock itself, a
// *secrets.Lock, the Streams and the count of URL passwords) embedded in
// the relay's instance, KeptRequest in a tab's paused requests, Headers
// in the server; the relay's order
// tables decide when each part runs. This package knows no instance, tab,
// session or client.
//
// It imports the secrets package, relay/internal/api, internal/wire and
// encoding packages. It
// must not import package relay (github.com/cdprelay/cdprelay/relay) nor
// the package of another concern under relay/internal (rules, tiers,
// person, browser, targets): imports run from the facade to the concerns
// to the core, never back.
package creds
