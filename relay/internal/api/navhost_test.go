package api

import "testing"

func TestNavHost(t *testing.T) {
	for raw, want := range map[string]string{
		"https://Shop.Example/pay":         "shop.example",
		"http://u:p@a.example:8080/":       "a.example:8080",
		"about:blank":                      "",
		"/relative":                        "",
		"https://a.example\x7f/":           "",
		"HTTPS://B.EXAMPLE?next=c.example": "b.example",
	} {
		if got := NavHost(raw); got != want {
			t.Errorf("NavHost(%q) = %q, want %q", raw, got, want)
		}
	}
}
