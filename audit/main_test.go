package audit

import (
	"testing"

	"github.com/cdprelay/cdprelay/internal/leakcheck"
)

// TestMain fails the package when a follower or sink goroutine outlives
// the tests.
func TestMain(m *testing.M) { leakcheck.Main(m, "cdprelay/cdprelay/audit.") }
