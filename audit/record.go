package audit

import "time"

// Record is one audited event. Every field is a short, capped string (or a
// number or a time): there is deliberately no field that could carry a
// command's params, a page's text or a header value.
type Record struct {
	// Seq is assigned by the Ring: monotonic from 1, never reused, and
	// continued across restarts when a Sink is configured.
	Seq uint64 `json:"seq"`
	// Time is when the Ring accepted the record, unless the caller set it.
	Time time.Time `json:"time"`
	// Instance is the public instance id, never its guid.
	Instance string `json:"instance,omitempty"`
	// Tenant is the tenant whose instance the record is about; empty for
	// the operator's instances and for what is about no instance (a
	// reload). A tenant reads its own records only.
	Tenant string `json:"tenant,omitempty"`
	Actor  Actor  `json:"actor,omitempty"`
	// By names who did a person's action (a Stop, a Resume, an approval,
	// an answer, a take-over, a removal) and the credential they acted
	// with: "viewer 3fa2c1 (person key)", "the person (token alice)",
	// "the operator (token ops)". Never a credential's value. Capped as
	// Detail is.
	By   string `json:"by,omitempty"`
	Kind Kind   `json:"kind"`
	// Method is a CDP method name taken from a message's envelope.
	Method string `json:"method,omitempty"`
	// Target is a tab or target id.
	Target  string  `json:"target,omitempty"`
	Outcome Outcome `json:"outcome,omitempty"`
	// Detail is a short note for a person: a close reason, a rule name, a
	// redacted URL, a TextLength. URLs found in it are redacted and it is
	// capped at MaxDetail bytes on the way in.
	Detail string `json:"detail,omitempty"`
}

// Actor is who caused a record.
type Actor string

const (
	ActorCDPClient Actor = "cdp-client"
	ActorViewer    Actor = "viewer"
	ActorExtension Actor = "extension"
	ActorOperator  Actor = "operator"
	ActorRelay     Actor = "relay"
)

// Kind is what happened. A Kind outside this list is kept as given, but
// counted under "other" in metrics, whose labels must stay a bounded set.
type Kind string

const (
	KindConnect      Kind = "connect"
	KindDisconnect   Kind = "disconnect"
	KindAttach       Kind = "attach"
	KindDetach       Kind = "detach"
	KindCreateTarget Kind = "create-target"
	KindCloseTarget  Kind = "close-target"
	KindNavigate     Kind = "navigate"
	KindInput        Kind = "input"
	KindDenied       Kind = "denied"
	KindDropped      Kind = "dropped"
	KindTakeOver     Kind = "take-over"
	KindHandBack     Kind = "hand-back"
	KindPolicyReload Kind = "policy-reload"
	KindError        Kind = "error"
)

// knownKinds is the bounded set of metric label values, "other" aside.
var knownKinds = []Kind{
	KindConnect, KindDisconnect, KindAttach, KindDetach,
	KindCreateTarget, KindCloseTarget, KindNavigate, KindInput,
	KindDenied, KindDropped, KindTakeOver, KindHandBack,
	KindPolicyReload, KindError,
}

// Outcome is how it ended.
type Outcome string

const (
	OutcomeOK      Outcome = "ok"
	OutcomeDenied  Outcome = "denied"
	OutcomeDropped Outcome = "dropped"
	OutcomeError   Outcome = "error"
)

// Recorder is what the relay, the policy and the live view report to.
// Record must not block: an implementation that does I/O queues it.
type Recorder interface {
	Record(Record)
}

// Discard is a Recorder that keeps nothing, for code under test and for a
// relay run without auditing.
var Discard Recorder = discard{}

type discard struct{}

func (discard) Record(Record) {}
