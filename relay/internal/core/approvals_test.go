package core

import "testing"

func TestSortApprovals(t *testing.T) {
	a := []ApprovalStatus{{ID: 3}, {ID: 1}, {ID: 4}, {ID: 2}}
	sortApprovals(a)
	for i, s := range a {
		if s.ID != int64(i+1) {
			t.Fatalf("order %v", a)
		}
	}
	sortApprovals(nil)
}
