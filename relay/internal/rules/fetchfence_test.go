package rules

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

func TestClientFetchMatches(t *testing.T) {
	cf := &ClientFetch{Patterns: []FetchPattern{
		{URLPattern: "*/api/*"},
		{URLPattern: "*", ResourceType: "Image", RequestStage: "Response"},
	}}
	for _, tc := range []struct {
		url, resourceType string
		response          bool
		want              bool
	}{
		{"https://a/api/x", "XHR", false, true},
		{"https://a/page", "Document", false, false},
		{"https://a/logo.png", "Image", true, true},
		{"https://a/logo.png", "Image", false, false},
		{"https://a/api/x", "XHR", true, false},
	} {
		if got := cf.Matches(tc.url, tc.resourceType, tc.response); got != tc.want {
			t.Errorf("Matches(%s %s, response=%v) = %v, want %v", tc.resourceType, tc.url, tc.response, got, tc.want)
		}
	}
}

func FuzzWildcardMatch(f *testing.F) {
	f.Add("*a?b\\*", "xaybz*")
	f.Add("", "")
	f.Fuzz(func(t *testing.T, pattern, s string) {
		// Must not panic, and a pattern without wildcards matches only
		// itself.
		got := WildcardMatch(pattern, s)
		plain := true
		for i := 0; i < len(pattern); i++ {
			if c := pattern[i]; c == '*' || c == '?' || c == '\\' {
				plain = false
			}
		}
		if plain && got != (pattern == s) {
			t.Fatalf("plain pattern %q vs %q: %v", pattern, s, got)
		}
	})
}
