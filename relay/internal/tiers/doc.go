// Package tiers is the relay's concern of per-origin tiers (blind,
// read-only, and a person's take-over, which makes a tab read-only): what
// automation may see of a site and do on it, as far as that is data, and
// bytes in and bytes out. It owns:
//   - the levels of access under the names of this concern (Level,
//     Full, ReadOnly, Blind: api's, which the core holds);
//   - the read-only command table (ReadOnlyRuleOf) and what a blind tab
//     lets through (BlindAllowed), with the rewrite that forces V8's
//     side-effect check on script (ForceNoSideEffects) and the check of a
//     plain Fetch.continueRequest (OnlyKeys);
//   - the guard installed in a read-only tab's isolated worlds
//     (readonly_guard.js: NewGuard, GuardFrom, OffScript) and the
//     [[Scopes]] it keeps from the client (WithoutScopes);
//   - the stand-ins a blind tab shows the client (BlindFrameTree,
//     BlindHistory) and V8's side-effect refusal explained
//     (SideEffectText, SideEffectExplained);
//   - what a script for new documents runs (RunsNothing);
//   - the commands that reach past the tab that carries them: a
//     request's body (ReadsBody), a storage named by origin
//     (NamesStorage), the tab's pixels, blind frames and all (Pixels);
//   - the client's settings under tiers: which are lifted on read-only
//     or blind pages and what takes each back (Lift, LiftRule), which
//     are refused (SettingRefusal, Refused) and which are kept (Kept).
//
// Its state lives where the relay keeps it (a tab's, a session's, a
// client's and an instance's tier slots, relay/tierslots.go), and deciding
// a tab's access, following its frames, lifting and putting back settings
// and answering the client stay in package relay, which calls this one
// with values: a method's name, params, a URL. This package knows no
// instance, tab, session or client. Package relay imports it as tier,
// since its tests name their tiered policy tiers.
//
// It imports internal/wire, relay/internal/api, relay/internal/cdp (the
// protocol's leaf), encoding packages and the standard library. It must
// not import package relay
// (github.com/cdprelay/cdprelay/relay) nor the package of another concern
// under relay/internal (rules, person, creds, browser, targets): imports
// run from the facade to the concerns to the core, never back.
package tiers
