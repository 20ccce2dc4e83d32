package relay

import (
	"testing"

	"github.com/cdprelay/cdprelay/internal/leakcheck"
)

// TestMain fails the package when goroutines of this module outlive the
// tests: every test closes its Server, and Server.Close must leave none.
func TestMain(m *testing.M) { leakcheck.Main(m) }
