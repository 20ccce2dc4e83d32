package ingress_test

import (
	"testing"

	"github.com/cdprelay/cdprelay/internal/leakcheck"
)

// TestMain fails the package when a goroutine of this module outlives
// the tests.
func TestMain(m *testing.M) { leakcheck.Main(m) }
