// Package access holds the tables of what automation may do on a page at
// each level of access (full, read-only, blind), as far as that is data,
// and bytes in and bytes out:
//   - the levels themselves (Level, Full, ReadOnly, Blind: api's);
//   - the read-only command table (ReadOnlyRuleOf, ReadOnlyListed) and what
//     a blind tab lets through (BlindAllowed), with the rewrite that forces
//     V8's side-effect check on script (ForceNoSideEffects) and the check of
//     a plain Fetch.continueRequest (OnlyKeys);
//   - the guard installed in a read-only tab's isolated worlds
//     (readonly_guard.js: NewGuard, GuardFrom, OffScript) and the
//     [[Scopes]] it keeps from the client (WithoutScopes);
//   - what a script for new documents runs (RunsNothing);
//   - the commands that reach past the tab that carries them: a request's
//     body (ReadsBody), a storage named by origin (NamesStorage), the tab's
//     pixels, blind frames and all (Pixels);
//   - the client's settings under tiers: which are lifted on read-only or
//     blind pages and what takes each back (Lift, LiftRule), which are
//     refused (SettingRefusal, Refused) and which are kept (Kept);
//   - the headers a held document request goes on with, once the client's
//     settings were lifted for where it goes or put back (HeaderFix).
//
// A tab's access is the core's to hold, because every part of the relay
// reads it: the core decides it, follows the tab's frames, lifts and puts
// back the client's settings and installs the guard, with these tables;
// the tiers stage (package tiers) refuses, stands in and withholds by
// them. This package knows no instance, tab, session or client.
//
// It is a leaf: it imports internal/wire, relay/internal/api,
// relay/internal/cdp, encoding packages and the standard library, never
// the core nor a stage.
package access
