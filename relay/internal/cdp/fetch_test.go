package cdp

import "testing"

func TestWildcardMatch(t *testing.T) {
	for _, tc := range []struct {
		pattern, s string
		want       bool
	}{
		{"*", "https://example.com/", true},
		{"*", "", true},
		{"", "", true},
		{"", "x", false},
		{"https://*.example.com/*", "https://www.example.com/a", true},
		{"https://*.example.com/*", "https://example.com/a", false},
		{"*.js", "https://a/b.js", true},
		{"*.js", "https://a/b.json", false},
		{"https://a/?", "https://a/b", true},
		{"https://a/?", "https://a/", false},
		{"https://a/\\*", "https://a/*", true},
		{"https://a/\\*", "https://a/b", false},
		{"*a*b*c*", "xxaxxbxxcxx", true},
		{"*a*b*c*", "xxaxxcxxbxx", false},
		{"**", "anything", true},
	} {
		if got := WildcardMatch(tc.pattern, tc.s); got != tc.want {
			t.Errorf("WildcardMatch(%q, %q) = %v, want %v", tc.pattern, tc.s, got, tc.want)
		}
	}
}
