package api

// Observer receives what the relay decides and sees: connections, attaches
// and detaches, denials, navigations, take-overs. The audit log and the
// metrics implement it. Observe is called on connection goroutines and
// must not block.
type Observer interface {
	Observe(Event)
}

// Event is one observation. It never carries params, page text or
// secrets: only the envelope's method, ids and short details.
type Event struct {
	Instance string // filled in by the relay
	Tenant   string // the instance's tenant, filled in by the relay; "": the operator's
	Actor    string // one of the Actor constants
	Kind     string // one of the Kind constants
	Method   string // a CDP method name, when the event is about a command
	Target   string // a tab or target id
	Rule     string // the policy rule of a denial or drop
	Outcome  string // one of the Outcome constants
	Detail   string // short, free text (a close reason, a URL without its query)
	// By names who did a person's action (a Stop, an answer, a take-over):
	// the viewer or the person's credential the relay was given, such as
	// "viewer 3fa2c1 (person key)" or "the operator (token ops)".
	By string
}

// Actors.
const (
	ActorClient    = "cdp-client"
	ActorExtension = "extension"
	ActorViewer    = "viewer"
	ActorRelay     = "relay"
	ActorOperator  = "operator"
)

// Kinds.
const (
	KindConnect    = "connect"
	KindDisconnect = "disconnect"
	KindAttach     = "attach"
	KindDetach     = "detach"
	KindNavigate   = "navigate"
	KindInput      = "input"
	KindDenied     = "denied"
	KindDropped    = "dropped"
	KindTakeOver   = "take-over"
	KindHandBack   = "hand-back"
	KindAccess     = "access"
	KindSecret     = "secret"
	KindPolicy     = "policy-reload"
	KindError      = "error"
	KindStop       = "stop"
	KindResume     = "resume"
	KindDialog     = "dialog"
	KindAsk        = "ask"
	KindApproval   = "approval"
	KindRemove     = "remove"
	// KindDownload: a download's file copied for the client, or not.
	KindDownload = "download"
)

// Outcomes.
const (
	OutcomeOK      = "ok"
	OutcomeDenied  = "denied"
	OutcomeDropped = "dropped"
	OutcomeError   = "error"
)

// DiscardObserver is the observer of a relay configured without one: it
// drops every event.
type DiscardObserver struct{}

func (DiscardObserver) Observe(Event) {}
