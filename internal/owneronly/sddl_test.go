package owneronly

import (
	"strings"
	"testing"
)

// TestSDDL: the descriptor Windows files and folders get. It is parsed by
// Windows only (acl_windows_test.go reads back what a written file has);
// here, that it says what the package promises and nothing more.
func TestSDDL(t *testing.T) {
	const user = "S-1-5-21-1004336348-1177238915-682003330-512"
	tests := []struct {
		dir  bool
		want string
	}{
		{false, "D:P(A;;FA;;;" + user + ")(A;;FA;;;SY)(A;;FA;;;BA)"},
		{true, "D:P(A;OICI;FA;;;" + user + ")(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)"},
	}
	for _, tt := range tests {
		got := sddl(user, tt.dir)
		if got != tt.want {
			t.Errorf("sddl(dir=%v) = %s, want %s", tt.dir, got, tt.want)
		}
		// Never Everyone (WD), Users (BU), Authenticated Users (AU) or
		// an inherited entry.
		for _, wide := range []string{";WD)", ";BU)", ";AU)", "ID"} {
			if strings.Contains(got, wide) {
				t.Errorf("sddl(dir=%v) grants %s: %s", tt.dir, wide, got)
			}
		}
	}
}
