package relay

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
)

// Outcomes.
const (
	OutcomeOK      = "ok"
	OutcomeDenied  = "denied"
	OutcomeDropped = "dropped"
	OutcomeError   = "error"
)

type discardObserver struct{}

func (discardObserver) Observe(Event) {}

// observe stamps ev with the instance and hands it to the observer.
func (in *Instance) observe(ev Event) {
	ev.Instance = in.id
	ev.Tenant = in.Tenant()
	ev.Detail = in.scrubString(ev.Detail)
	in.srv.cfg.Observer.Observe(ev)
}

// Observe records an event that is not about one instance (a policy
// reload, say).
func (s *Server) Observe(ev Event) { s.cfg.Observer.Observe(ev) }
