// Package denylist decides what automation may do to a shared tab: which
// CDP commands reach it and which URLs it may be sent to. It is pure
// policy: no I/O, no clock, no logging; the relay feeds it and acts on the
// Decision.
//
// # The command fence
//
// Effective.Method takes the envelope's top-level method and its raw
// params. Only that method counts: a "method" key inside params, or in a
// nested object, means nothing here. A command is
//
//   - denied when a rule of DenyMethods or of the defaults matches it: the
//     relay answers with a CDP error (code -32000, message
//     Decision.Message(), "Denied by cdprelay policy: <reason>");
//   - acknowledged and dropped when a rule of AckAndDropMethods or of the
//     defaults matches it: the relay answers {} and never forwards it;
//   - judged by its URL when it is Page.navigate, Target.createTarget or
//     Network.loadNetworkResource (params.url, see URLMethods). A url given
//     twice, not a string, or params that are not an object are refused;
//     an empty url is refused, except for Target.createTarget, where the
//     protocol reads it as about:blank (and the relay must too);
//   - allowed otherwise.
//
// Deny wins over ack-and-drop. Method patterns are globs in which '*'
// matches any run of characters, dots included ("Network.*Cookie*").
// A command without a URL or params rule costs one map lookup, plus one
// glob match per configured glob, and allocates nothing unless refused;
// only the URL-bearing methods and Target.createBrowserContext read
// their params.
//
// # Default method rules
//
// Dropped as a whole with Config.NoDefaults; listed by DefaultMethodRules.
//
//	deny          Storage.getCookies, Network.getAllCookies, Network.getCookies
//	              (they read the person's cookies: their logged-in sessions)
//	deny          Storage.setCookies, Network.setCookie, Network.setCookies
//	              (they write them)
//	deny          Storage.clearCookies, Network.deleteCookies,
//	              Network.clearBrowserCookies (they delete them)
//	deny          Browser.close (it would close the person's browser)
//	deny          Target.createBrowserContext when params carry proxyServer
//	              or proxyBypassList (the person's traffic would go through
//	              another server); without them it is allowed
//
// # The URL fence
//
// Effective.URL judges a URL the way Chrome would parse it, following the
// WHATWG URL standard, and refuses whatever it cannot read with
// certainty. Before judging it
//
//   - strips leading and trailing C0 controls and spaces and removes every
//     tab and newline;
//   - reads the scheme case-insensitively; a relative or empty URL is
//     refused;
//   - unwraps view-source: and judges the URL inside (view-source itself
//     must be an allowed scheme, which it is not by default);
//   - for http, https, ws, wss and ftp: skips any mix of '/' and '\' after
//     the scheme, ends the authority at '/', '\', '?' or '#', drops the
//     userinfo up to the last '@' (https://example.com@evil.net is
//     evil.net), checks and ignores the port, percent-decodes the host,
//     maps it through IDNA (UTS #46, non-transitional) to lower-case
//     punycode, drops trailing dots, reads IPv4 in the standard's forms
//     (2130706433, 0x7f.1, 0177.0.0.1, 127.1 are all 127.0.0.1) and
//     bracketed IPv6 (zone ids refused).
//
// It is stricter than Chrome where Chrome's reading could differ from its
// own: a host is refused unless it ends up as letters, digits, '-', '_'
// and '.' with no empty label; hosts with characters that transitional and
// non-transitional IDNA map differently (ß, ẞ, ς, zero-width joiners) are
// refused; a numeric last label followed by two or more dots is refused.
//
// Then, in order:
//
//   - the scheme must be allowed (Config.AllowedSchemes, default http and
//     https); about:blank and about:srcdoc, with any query or fragment, are
//     always allowed and other about: URLs refused unless "about" is
//     allowed. javascript:, data:, blob:, file:, filesystem:, chrome:,
//     devtools:, chrome-extension:, ws:, unknown schemes and the rest are
//     refused unless listed. Schemes other than http, https, ws, wss and
//     ftp name no network host, so when one is allowed, the host rules
//     below do not apply to it;
//   - a host matching BlockedHosts is refused;
//   - with BlockPrivateAddresses, an IP literal that is not public, or a
//     name Chrome resolves to loopback itself (localhost, *.localhost), is
//     refused; names that DNS resolves to private addresses are not seen;
//   - with a non-empty AllowedHosts, a host matching none of it is refused.
//
// A host entry is an exact host ("example.com"), a leading-dot entry
// (".example.com": example.com and every subdomain), a glob with '.' as the
// separator ("*.example.com": one label; "**.example.com": any depth), an
// IP address in any form the standard reads, or a CIDR prefix. Entries are
// normalised like hosts. Exact and leading-dot entries compare whole
// labels, so neither evil-example.com nor example.com.evil.net ever
// matches example.com; globs match exactly what they say ("*example.com"
// does match evil-example.com). IP literals match IP and CIDR entries,
// IPv4-mapped IPv6 as its IPv4 address, and globs match dotted-decimal
// IPv4.
//
// # Profiles
//
// A Policy holds the global Config and named Profiles. In a profile, a
// non-empty list replaces the global list of the same name and a set flag
// replaces the global flag; everything else is inherited. Policy.For
// returns the Effective policy of a profile, the global one for "".
//
// # Rule ids
//
// Decision.Rule names the deciding rule with a bounded id: "method:"
// followed by the configured pattern or default method, or one of the
// RuleURL constants. Policy.Rules lists them all for metrics.
package denylist
