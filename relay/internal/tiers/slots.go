package tiers

import "github.com/cdprelay/cdprelay/relay/internal/core"

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
