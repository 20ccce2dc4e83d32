package relay

import (
	"testing"
	"unsafe"
)

// The pending map keeps its values inline only up to 128 bytes; a larger
// pendingCall costs an allocation for every command forwarded.
func TestPendingCallFitsInline(t *testing.T) {
	if n := unsafe.Sizeof(pendingCall{}); n > 128 {
		t.Fatalf("pendingCall is %d bytes: more than 128, and the pending map allocates for each command", n)
	}
}
