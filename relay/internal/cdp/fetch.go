package cdp

import "strings"

// The Fetch domain's request patterns, and how Chrome matches a URL
// against one.

// FetchPattern is one pattern of Fetch.enable, as Chrome reads it.
type FetchPattern struct {
	URLPattern   string `json:"urlPattern,omitempty"`
	ResourceType string `json:"resourceType,omitempty"`
	RequestStage string `json:"requestStage,omitempty"`
}

// WildcardMatch matches s against a Fetch urlPattern: '*' is any run, '?'
// one character, and a backslash escapes the next character.
func WildcardMatch(pattern, s string) bool {
	// Iterative matching with one backtrack point for the last '*'.
	pi, si := 0, 0
	starP, starS := -1, 0
	for si < len(s) {
		if pi < len(pattern) {
			switch c := pattern[pi]; c {
			case '*':
				starP, starS = pi, si
				pi++
				continue
			case '?':
				pi++
				si++
				continue
			case '\\':
				if pi+1 < len(pattern) && pattern[pi+1] == s[si] {
					pi += 2
					si++
					continue
				}
			default:
				if c == s[si] {
					pi++
					si++
					continue
				}
			}
		}
		if starP < 0 {
			return false
		}
		pi = starP + 1
		starS++
		si = starS
	}
	return strings.Trim(pattern[pi:], "*") == ""
}
