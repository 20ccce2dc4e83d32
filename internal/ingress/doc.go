// Package ingress decides who reaches the relay: a guard in front of its
// HTTP handler checks every request and WebSocket upgrade before any
// routing.
//
// The checks, in order (the first that fails answers):
//
//  1. Host: localhost, 127.0.0.0/8, ::1, or a configured name. A page
//     that rebinds its own name to this machine sends its own name.
//  2. Path: a path that is not clean (dot segments, doubled slashes) is a
//     404.
//  3. Origin, per endpoint: CDP endpoints take none or a configured one;
//     the extension endpoint none or chrome-extension://<allowed id>;
//     everything else none or the relay's own origin.
//  4. Sec-Fetch-Site: cross-site is refused, except on the extension
//     endpoint, for an Origin the operator listed, and for a top-level
//     navigation to the page shell. The live view's socket and the
//     person's actions refuse same-site too (a page on another port of
//     the same host).
//  5. Credentials: the person key (personkey.go), or a token. With tokens
//     configured, every request but the page shell's needs one that grants
//     the endpoint's scope, loopback included. Without tokens, a loopback
//     peer gets every scope and nothing else gets anything but the page
//     shell.
//  6. The person: the person's actions (Stop, Resume, removing an
//     instance; in the live view, whatever Grant.Person allows) need the
//     person key, or a token without the cdp scope, on loopback too. A
//     CDP client holds neither: what drives the tabs never overrules the
//     person who lends them.
//
// Refusals by Host, path, Origin and Fetch Metadata are 403 (404 for a
// path). A missing or wrong token is 401 and a valid token without the
// scope is 403, as is a person's action without the person's credential,
// except on capability endpoints (/cdp/<guid>,
// /devtools/browser/<guid>, /extension/<guid>), where both are the same
// 404 as an unknown guid. The token is checked before the relay looks the
// guid up, hashed and compared against every configured hash on every
// request, so neither the answer nor its time says whether a guid exists.
//
// A token is presented as "Authorization: Bearer <token>" or, for clients
// that cannot set headers (a browser's WebSocket and EventSource, the
// extension's connect URL), as ?token=<token>. The person key is presented
// as a token, or by the live view's socket as a subprotocol. The guard
// removes all of them before the request goes on, and puts what it
// granted in the request's context (Scopes, GrantFrom).
package ingress
