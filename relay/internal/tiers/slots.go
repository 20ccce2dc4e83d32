package tiers

import (
	"sync/atomic"

	"github.com/cdprelay/cdprelay/relay/internal/access"
	"github.com/cdprelay/cdprelay/relay/internal/core"
)

// What the tiers' stage keeps of a client: its slot in the core's
// ClientConn. A tab's access and what follows from it (its frames, lifted
// settings, withheld scripts) are the core's, which every part reads
// (the core's tierslots.go).
var clientSlot = core.NewClientSlot[tierClient]()

// tierClient is what the tiers keep of a client.
type tierClient struct {
	// acts are the refused inputs the client may retry (refusals.go).
	acts actRefusals
}

// tabSlot is what the tiers keep of a tab besides what the core decides
// its access from (the core's tierslots.go: frames, navigations, the
// client's scripts and the settings lifted).
var tabSlot = core.NewTabSlot[tierTab]()

// tierTab is what the tiers keep of a tab. Guarded by the instance's
// mutex, but for readOnly.
type tierTab struct {
	// guard is the read-only guard installed in the tab's isolated worlds,
	// while it is read-only.
	guard *access.Guard
	// readOnly mirrors Acc.Level == read-only for the reply path, which
	// reads it without the lock.
	readOnly atomic.Bool
	// worldNames are the isolated worlds the client asked for on the tab
	// (a few): a tab that goes blind shows it stand-ins of them.
	worldNames []string
	// deferred are settings a blind tab acknowledged, to apply once it is
	// on a full site (worldscripts.go).
	deferred []deferredSet
}

// Bounds of what the tiers keep of a tab: the world names, and the
// settings a blind tab acknowledged.
const (
	maxWorldNames   = 8
	maxDeferredSets = 64
)

// deferredSet is a setting a blind tab acknowledged without applying it
// (deferSet), applied once the tab is on a full site.
type deferredSet struct {
	key, method string
	params      []byte
}

// Lifecycle is the tiers' share of a tab's life: what the client set up
// on a tab is forgotten with its sessions there.
func Lifecycle() core.Lifecycle {
	return core.Lifecycle{ClientSetupGoneLocked: func(t *core.Tab) {
		tt := tabSlot.Of(t)
		tt.worldNames, tt.deferred = nil, nil
	}}
}
