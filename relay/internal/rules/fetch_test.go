package rules

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/cdprelay/cdprelay/relay/internal/cdp"
)

func TestClientFetchMatches(t *testing.T) {
	cf := &ClientFetch{Patterns: []cdp.FetchPattern{
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
		got := cdp.WildcardMatch(pattern, s)
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

// TestFetchRewrite: on a fenced session the client's Fetch.enable becomes
// one with the relay's patterns first and the client's after them (an
// empty list spelt out as Chrome's default), and its Fetch.disable one
// with the relay's alone, which stay in force.
func TestFetchRewrite(t *testing.T) {
	relay := []cdp.FetchPattern{FencePattern, {URLPattern: "*127.*:9222/*", RequestStage: "Request"}}
	type sent struct {
		Patterns   []cdp.FetchPattern `json:"patterns"`
		HandleAuth *bool              `json:"handleAuthRequests"`
	}
	read := func(b []byte) sent {
		t.Helper()
		var s sent
		if err := json.Unmarshal(b, &s); err != nil || s.HandleAuth == nil {
			t.Fatalf("params %s: %v", b, err)
		}
		return s
	}
	fs := &FetchState{Fence: true, Patterns: relay}
	client := []cdp.FetchPattern{{URLPattern: "*/api/*", RequestStage: "Response"}}
	got := read(fs.Rewrite(client, true, true))
	if !slices.Equal(got.Patterns, append(slices.Clone(relay), client...)) || !*got.HandleAuth {
		t.Errorf("enable: %+v", got)
	}
	if fs.Client == nil || !fs.Client.HandleAuth || !fs.Client.Matches("https://a/api/x", "XHR", true) {
		t.Errorf("the client's Fetch is not recorded: %+v", fs.Client)
	}
	got = read(fs.Rewrite(nil, false, true))
	if want := append(slices.Clone(relay), cdp.FetchPattern{URLPattern: "*"}); !slices.Equal(got.Patterns, want) || *got.HandleAuth {
		t.Errorf("enable without patterns: %+v, want %+v", got, want)
	}
	if !fs.Client.Matches("https://a/", "Document", false) || fs.Client.Matches("https://a/", "Document", true) {
		t.Error("Chrome's default asks for every request at the request stage, and only there")
	}
	got = read(fs.Rewrite(client, true, false))
	if !slices.Equal(got.Patterns, relay) || *got.HandleAuth || fs.Client != nil {
		t.Errorf("disable: %+v, client %+v", got, fs.Client)
	}
	if !slices.Equal(fs.Patterns, relay) || !fs.Fence {
		t.Errorf("the relay's patterns changed: %+v", fs)
	}
	// FetchParams copies: what it returns never shares the relay's list.
	p := FetchParams(relay, &ClientFetch{Patterns: client})["patterns"].([]cdp.FetchPattern)
	p[0].URLPattern = "changed"
	if relay[0].URLPattern != "*" {
		t.Error("FetchParams shares the relay's patterns")
	}
}
