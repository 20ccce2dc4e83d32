// Package creds is the relay's stage of credentials and secrets: nothing
// reaches a client that a script in the page could not read, and a secret
// typed by reference never comes back.
//
// What it does with instances, tabs and clients, on the core's types:
//   - its rows of the order (rows.go): creds.Restore (a paused request's
//     real credentials put back when the client continues it,
//     keptheaders.go), creds.Secret and creds.LockGates (typing a secret
//     by reference, typing.go; the commands refused while the lock holds
//     what they would give, lockgaterows.go; a page whose password field
//     holds one, fieldwatch.go), creds.Streams, creds.Frames (a screencast
//     frame of such a page is the live view's only), creds.Redact and
//     creds.Results (credential headers and cookies of events and results
//     redacted), creds.StreamForget and creds.StreamPiece;
//   - the scrubber (Scrubber, core.Services.Scrubber): the last look at every
//     frame to the client and every text shown to a person or recorded —
//     the URL passwords it saw (urlpasswords.go) and the secrets typed in
//     the instance, replaced by their references;
//   - what it hears of a tab's life (Lifecycle): a new document leaves the
//     typed secrets of the one before behind; a detach voids the headers
//     kept of its paused requests;
//   - its state, in the core's slots (stageslots.go): per tab the kept
//     requests and the secret field, per client the console warnings, per
//     instance the lock, the streams and the count of URL passwords
//     (Instance, read without the lock), in the relay the header names
//     redacted (SetRedactHeaders).
//
// What needs no instance, tab or client is here too: the passwords of URLs
// in bytes (userinfo.go), the pieces of a stream read while a secret is
// locked (streams.go), redaction and restoration of credential headers
// (redact.go, restore.go), what the lock cannot read (lockgates.go), and
// the scripts that type a secret and look at the field that holds it
// (secrets.go, secretfield.go).
//
// It imports the core, the secrets package, relay/internal/api,
// internal/wire and encoding packages. It must not import package relay
// nor another stage's package: imports run from the facade to the stages
// to the core, never back.
package creds
