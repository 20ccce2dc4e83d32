package core

import (
	"net/url"
	"strings"
)

// NavHost is the host a navigation to raw goes to, lower-cased; "" when
// it names none. A navigation within the host a tab is on, or to the host
// a person approved, is not asked again.
func NavHost(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return strings.ToLower(u.Host)
}
