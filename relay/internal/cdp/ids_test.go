package cdp

import "testing"

func TestGUID(t *testing.T) {
	a, b := NewGUID(), NewGUID()
	if !ValidGUID(a) || !ValidGUID(b) || a == b {
		t.Fatalf("NewGUID gave %q and %q", a, b)
	}
	if got := RandHex(6); len(got) != 12 {
		t.Fatalf("RandHex(6) = %q, want 12 hex digits", got)
	}
	for _, s := range []string{"", "0123456789abcdef0123456789abcde", "0123456789ABCDEF0123456789abcdef",
		"0123456789abcdef0123456789abcdeg", "0123456789abcdef0123456789abcdef0", "0123456789abcdef0123456789abcd\u00e9"} {
		if ValidGUID(s) {
			t.Errorf("ValidGUID(%q) = true", s)
		}
	}
}
