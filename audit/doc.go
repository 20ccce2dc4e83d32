// Package audit records what automation does through the relay, in a form
// an operator can trust and a person can be shown without harm.
//
// # Recording
//
// The relay, the policy and the live view report to a Recorder: a Log in
// production, Discard or a bare Ring in tests. A Log hands each Record to
// a Ring, which numbers it, and to an optional Sink, which appends it to a
// file; neither ever makes the reporter wait.
//
// # Privacy by construction
//
// What cannot be recorded cannot leak, so the rules are enforced here, not
// left to callers:
//
//   - A Record has no field for a command's params, a page's content, a
//     header or a cookie: only short strings (instance and target ids, a
//     CDP method name, a kind, an outcome, a detail), a number and a time.
//   - Every string field loses its control and bidi-override characters
//     (they could forge lines or reorder text in an operator's terminal)
//     and is capped; Detail at MaxDetail bytes.
//   - URLs are kept as scheme://host[:port]/path, without userinfo, query,
//     fragment or path parameters (RedactURL). Any URL that appears in
//     Detail is redacted on the way in, whoever wrote it.
//   - Typed or inserted text is recorded as its length (TextLength).
//   - Callers build Detail from the relay's own words (a close reason, a
//     rule name), never from what a client or a page sent.
//
// # Sequence numbers
//
// The Ring hands out Seq, from 1, never reused. With a Sink, NewRing
// starts after the file's last record (Sink.LastSeq), so numbers stay
// monotonic across restarts. A reader that asks for records after a Seq
// learns when some of them are no longer in the ring: Query's gap, a
// follower's Gap. A Seq beyond every one handed out comes from an earlier
// run without a Sink; it counts as 0 and is reported as a reset.
//
// # Followers
//
// A Subscription reads the Ring itself through a cursor; it has no queue
// of its own. Writers only set a one-slot wake-up flag, so a follower that
// is slow, or stops reading altogether, costs them nothing. One that falls
// more than the ring's capacity behind is not closed: its next read
// reports how many records were overwritten meanwhile (a Gap) and it
// resumes with the oldest record kept.
//
// # The file
//
// The Sink writes JSON Lines, one record per line in Seq order, from one
// goroutine fed by a bounded queue. A full queue or a failed write drops
// records from the file only (they are still in the ring) and is counted
// (Dropped, Errors, LastError), never fatal. Each write holds whole lines,
// so the file is safe to tail; after a crash, a cut-off last line is
// skipped when the file is reopened and the next record starts a new
// line.
//
// # HTTP and metrics
//
// Ring.Handler serves GET /v1/audit (JSON) and GET /v1/audit/follow
// (Server-Sent Events, resumable with Last-Event-ID). Ring.HandlerWith
// scopes both to the tenant a request acts for: a tenant reads the
// records of its own instances only, and an instance= it may not see is a
// 404 whether the instance is another tenant's or never was. Sequence
// numbers stay the ring's: a tenant's records are a subsequence. Metrics are
// registered on the registry given to NewMetrics; their labels are only
// the known kinds and "other".
package audit
