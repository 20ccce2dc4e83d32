package core

import (
	"testing"

	"github.com/cdprelay/cdprelay/relay/internal/api"
)

func TestSortApprovals(t *testing.T) {
	a := []api.ApprovalStatus{{ID: 3}, {ID: 1}, {ID: 4}, {ID: 2}}
	sortApprovals(a)
	for i, s := range a {
		if s.ID != int64(i+1) {
			t.Fatalf("order %v", a)
		}
	}
	sortApprovals(nil)
}
