package relay

import (
	"testing"
	"unsafe"

	"github.com/cdprelay/cdprelay/relay/internal/core"
)

// The pending map keeps its values inline only up to 128 bytes; a larger
// pendingCall costs an allocation for every command forwarded.
func TestPendingCallFitsInline(t *testing.T) {
	if n := unsafe.Sizeof(core.PendingCall{}); n > 128 {
		t.Fatalf("pendingCall is %d bytes: more than 128, and the pending map allocates for each command", n)
	}
}
