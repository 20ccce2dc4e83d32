package relay

import (
	"net/url"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cdprelay/cdprelay/relay/internal/core"
)

type (
	DownloadsConfig = core.DownloadsConfig
	ApprovalStatus  = core.ApprovalStatus
	Config          = core.Config
	Metrics         = core.Metrics
	Observer        = core.Observer
	Event           = core.Event
	Verdict         = core.Verdict
	Decision        = core.Decision
	Policy          = core.Policy
	Asker           = core.Asker
	NetworkRuler    = core.NetworkRuler
	TierRuler       = core.TierRuler
	Instance        = core.Instance
	Status          = core.Status
	TabStatus       = core.TabStatus
	NavigationAsker = core.NavigationAsker
	SecretSource    = core.SecretSource
	TabEvent        = core.TabEvent
	SavedInstance   = core.SavedInstance
)

const (
	KindDownload          = core.KindDownload
	ActorClient           = core.ActorClient
	ActorExtension        = core.ActorExtension
	ActorViewer           = core.ActorViewer
	ActorRelay            = core.ActorRelay
	ActorOperator         = core.ActorOperator
	KindConnect           = core.KindConnect
	KindDisconnect        = core.KindDisconnect
	KindAttach            = core.KindAttach
	KindDetach            = core.KindDetach
	KindNavigate          = core.KindNavigate
	KindInput             = core.KindInput
	KindDenied            = core.KindDenied
	KindDropped           = core.KindDropped
	KindTakeOver          = core.KindTakeOver
	KindHandBack          = core.KindHandBack
	KindAccess            = core.KindAccess
	KindSecret            = core.KindSecret
	KindPolicy            = core.KindPolicy
	KindError             = core.KindError
	KindStop              = core.KindStop
	KindResume            = core.KindResume
	KindDialog            = core.KindDialog
	KindAsk               = core.KindAsk
	KindApproval          = core.KindApproval
	KindRemove            = core.KindRemove
	OutcomeOK             = core.OutcomeOK
	OutcomeDenied         = core.OutcomeDenied
	OutcomeDropped        = core.OutcomeDropped
	OutcomeError          = core.OutcomeError
	Allow                 = core.Allow
	Deny                  = core.Deny
	AckAndDrop            = core.AckAndDrop
	Ask                   = core.Ask
	EventAttached         = core.EventAttached
	EventDetached         = core.EventDetached
	EventClientScreencast = core.EventClientScreencast
	EventHidden           = core.EventHidden
)

var (
	ErrNoApproval     = core.ErrNoApproval
	ErrControlled     = core.ErrControlled
	ErrHidden         = core.ErrHidden
	ErrNoDialog       = core.ErrNoDialog
	ErrDialogAnswered = core.ErrDialogAnswered
	ErrWedged         = core.ErrWedged
	ErrNoTab          = core.ErrNoTab
	ErrStopped        = core.ErrStopped
	ErrNotStopped     = core.ErrNotStopped
)

// ParsePublicURL is core.ParsePublicURL.
func ParsePublicURL(s string) (*url.URL, error) { return core.ParsePublicURL(s) }

// NewGUID is core.NewGUID.
func NewGUID() string { return core.NewGUID() }

// NewMetrics is core.NewMetrics.
func NewMetrics(reg prometheus.Registerer) *Metrics { return core.NewMetrics(reg) }

// RelayRules is core.RelayRules.
func RelayRules() []string { return core.RelayRules() }
