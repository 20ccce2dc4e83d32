// Package team holds the end-to-end tests of a relay run for many people:
// tenants that cannot see each other, each with a browser of their own,
// and a fleet of relay processes behind a real nginx. Their browsers take
// turns with the e2e package's (testenv.LockBrowsers): at most two run at
// once.
package team

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/internal/testenv"
)

func TestMain(m *testing.M) {
	code := func() int {
		if testenv.Require(true) == "" {
			unlock, err := testenv.LockBrowsers()
			if err != nil {
				println("team: lock:", err.Error())
				return 1
			}
			defer unlock()
		}
		return m.Run()
	}()
	os.Exit(code)
}

// node runs an e2e node script from the e2e folder.
func node(t *testing.T, script string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	out, err := testenv.Node(ctx, script, nil, args...)
	t.Logf("%s %v:\n%s", script, args[0], out)
	if err != nil {
		t.Fatalf("%s: %v", script, err)
	}
	return out
}
