// Package cdp holds what the relay knows of the Chrome DevTools Protocol
// itself, apart from any client, tab or policy: the protocol's command and
// event names (the list the relay serves at /json/protocol), its domains,
// its error codes, the ids it mints in Chrome's format, the reading of a
// command's params as Chrome reads them (exact keys, no key twice), the
// params the relay judges, decoded once for every stage (args.go), which
// params name an execution context and how (contexts.go), why Chrome
// detached a tab by itself, in our extension's words (detach.go),
// Chrome's texts for a tab its browser's policy keeps the debugger out of
// (policyrefusal.go), and what Browser.getVersion says of a browser, read
// from its user agent (browser.go), and remembered across the relay's
// restarts (browserfile.go).
//
// It is a leaf: it imports internal/wire, the JSON decoder that reads
// params as Chrome does (go-json-experiment/json) and the standard library
// only, never package relay (github.com/cdprelay/cdprelay/relay) nor any
// other package under relay/internal, so that the core and every concern's
// package can share it.
package cdp
