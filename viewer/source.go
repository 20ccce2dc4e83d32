package viewer

import (
	"context"
	"encoding/json"

	"github.com/cdprelay/cdprelay/relay"
	"github.com/cdprelay/cdprelay/screencast"
)

// Source is what the live view needs of the relay. FromRelay adapts a
// relay.Server; tests may supply their own.
type Source interface {
	// Instances returns every instance, the default first.
	Instances() []Instance
}

// Instance is one extension connection with its shared tabs.
type Instance interface {
	ID() string
	// Tenant is whose the instance is; "" is the operator's. A viewer of
	// a tenant sees that tenant's instances only (Config.Tenant).
	Tenant() string
	Status() relay.Status
	// OpenTab attaches to a tab for the live view's own use. fn gets the
	// tab's screencast frames and attach/detach events; it must not block.
	OpenTab(ctx context.Context, tabID int64, fn func(screencast.Event)) (Tab, error)
	TakeControl(tabID int64, holder string) error
	ReleaseControl(tabID int64, holder string) error
	Controller(tabID int64) string
	// The person in charge: stop and resume the instance's automation,
	// answer a tab's JavaScript dialog, approve or deny a held command.
	Stop(by string) error
	Resume(by string) error
	AnswerDialog(tabID, dialogID int64, accept bool, promptText, by string) error
	Approve(id int64, by string) error
	Deny(id int64, by string) error
}

// Changer is a Source that says when its instances' status changes, so
// that viewers get the instance list at once rather than at the next
// refresh.
type Changer interface {
	// Changed returns a channel closed at the next change.
	Changed() <-chan struct{}
}

// Tab is the live view's handle on one tab: commands to the tab's own
// session that never reach the CDP client.
type Tab interface {
	Call(ctx context.Context, method string, params any) (json.RawMessage, error)
	Close()
}

// FromRelay is the Source of a relay server.
func FromRelay(s *relay.Server) Source { return relaySource{s} }

type relaySource struct{ s *relay.Server }

func (r relaySource) Changed() <-chan struct{} { return r.s.Changed() }

func (r relaySource) Instances() []Instance {
	ins := r.s.Instances()
	out := make([]Instance, len(ins))
	for i, in := range ins {
		out[i] = relayInstance{in}
	}
	return out
}

type relayInstance struct{ *relay.Instance }

func (ri relayInstance) OpenTab(ctx context.Context, tabID int64, fn func(screencast.Event)) (Tab, error) {
	h, err := relay.OpenTab(ctx, ri.Instance, tabID, func(ev relay.TabEvent) {
		fn(screencast.Event{Method: eventMethod(ev.Method), Params: ev.Params, ClientScreencast: ev.ClientScreencast})
	})
	if err != nil {
		return nil, err
	}
	return h, nil
}

// eventMethod names a relay tab event the way the screencast package does.
func eventMethod(m string) string {
	switch m {
	case relay.EventAttached:
		return screencast.EventAttached
	case relay.EventDetached:
		return screencast.EventDetached
	case relay.EventClientScreencast:
		return screencast.EventClientScreencast
	case relay.EventHidden:
		return screencast.EventHidden
	}
	return m
}
