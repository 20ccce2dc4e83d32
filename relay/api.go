package relay

import (
	"context"
	"net/url"
	"slices"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/cdp"
	"github.com/cdprelay/cdprelay/relay/internal/config"
	"github.com/cdprelay/cdprelay/relay/internal/core"
	"github.com/cdprelay/cdprelay/relay/internal/handles"
	"github.com/cdprelay/cdprelay/relay/internal/metrics"
	"github.com/cdprelay/cdprelay/relay/internal/person"
	"github.com/cdprelay/cdprelay/relay/internal/rules"
)

// The names the rest of the product uses. The words the relay and its
// users share (policies, audit events, the live view's tab events, the
// statuses and errors) are defined once in relay/internal/api; what an
// instance is and how it is configured is the core's.

// An instance and its configuration (relay/internal/core).
type (
	Config          = config.Config
	DownloadsConfig = config.DownloadsConfig
	Metrics         = metrics.Metrics
	SecretSource    = config.SecretSource
	Instance        = core.Instance
	SavedInstance   = config.SavedInstance
	Status          = api.Status
	TabStatus       = api.TabStatus
)

// What a policy says of a command, and the policies an operator plugs in.
type (
	Verdict         = api.Verdict
	Decision        = api.Decision
	Policy          = api.Policy
	Asker           = api.Asker
	NavigationAsker = api.NavigationAsker
	NetworkRuler    = api.NetworkRuler
	TierRuler       = api.TierRuler
)

// The verdicts.
const (
	Allow      = api.Allow
	Deny       = api.Deny
	AckAndDrop = api.AckAndDrop
	Ask        = api.Ask
)

// The audit log: its observer, its events, who acted, what happened and
// how it ended.
type (
	Observer = api.Observer
	Event    = api.Event
)

const (
	ActorClient    = api.ActorClient
	ActorExtension = api.ActorExtension
	ActorViewer    = api.ActorViewer
	ActorRelay     = api.ActorRelay
	ActorOperator  = api.ActorOperator

	KindConnect    = api.KindConnect
	KindDisconnect = api.KindDisconnect
	KindAttach     = api.KindAttach
	KindDetach     = api.KindDetach
	KindNavigate   = api.KindNavigate
	KindInput      = api.KindInput
	KindDenied     = api.KindDenied
	KindDropped    = api.KindDropped
	KindTakeOver   = api.KindTakeOver
	KindHandBack   = api.KindHandBack
	KindAccess     = api.KindAccess
	KindSecret     = api.KindSecret
	KindPolicy     = api.KindPolicy
	KindError      = api.KindError
	KindStop       = api.KindStop
	KindResume     = api.KindResume
	KindDialog     = api.KindDialog
	KindAsk        = api.KindAsk
	KindApproval   = api.KindApproval
	KindRemove     = api.KindRemove
	KindDownload   = api.KindDownload

	OutcomeOK      = api.OutcomeOK
	OutcomeDenied  = api.OutcomeDenied
	OutcomeDropped = api.OutcomeDropped
	OutcomeError   = api.OutcomeError
)

// What the live view hears of a tab, and what it is shown of a held
// command.
type (
	TabEvent       = api.TabEvent
	ApprovalStatus = api.ApprovalStatus
)

const (
	EventAttached         = api.EventAttached
	EventDetached         = api.EventDetached
	EventClientScreencast = api.EventClientScreencast
	EventHidden           = api.EventHidden
)

// TabHandle is the live view's use of a shared tab beside the CDP
// client's session (relay/internal/handles).
type TabHandle = handles.Handle

// OpenTab attaches to a shared tab of in for the relay's own use (the
// live view). fn receives the tab's screencast frames and the Event*
// notifications; it may be called with the instance's lock held, so it
// must not block or call the relay (the live view's tap queues them).
func OpenTab(ctx context.Context, in *Instance, tabID int64, fn func(TabEvent)) (*TabHandle, error) {
	return handles.Open(ctx, in, tabID, fn)
}

// The errors of an instance's person-facing methods.
var (
	ErrNoApproval     = api.ErrNoApproval
	ErrControlled     = api.ErrControlled
	ErrHidden         = api.ErrHidden
	ErrNoDialog       = api.ErrNoDialog
	ErrDialogAnswered = api.ErrDialogAnswered
	ErrWedged         = api.ErrWedged
	ErrNoTab          = api.ErrNoTab
	ErrStopped        = api.ErrStopped
	ErrNotStopped     = api.ErrNotStopped
)

// ParsePublicURL validates a public URL (Config.PublicURL): http or
// https, a host, a path prefix or none, and nothing else.
func ParsePublicURL(s string) (*url.URL, error) { return config.ParsePublicURL(s) }

// NewGUID mints a guid, for callers that persist the default instance's.
func NewGUID() string { return cdp.NewGUID() }

// NewMetrics creates the relay's metrics and registers them on reg (nil:
// not registered, still counted).
func NewMetrics(reg prometheus.Registerer) *Metrics { return metrics.New(reg) }

// RelayRules lists the rule ids of the relay's own refusals, for counters
// that start at zero.
func RelayRules() []string {
	return slices.Concat(core.RelayRules(), rules.RuleIDs(), person.RuleIDs())
}
