package access

import "strings"

// The client's scripts for new documents: one that runs nothing (an
// isolated world's bootstrap: Playwright's utility world has an empty
// source, Puppeteer's a comment) may stay in Chrome wherever the tab goes,
// and is allowed on a read-only or blind tab.

// RunsNothing reports whether script src is only white space and
// comments. Anything else (an unclosed comment included) runs something.
func RunsNothing(src string) bool {
	for i := 0; i < len(src); {
		switch c := src[i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case strings.HasPrefix(src[i:], "//"):
			// To the end of the line: JavaScript's line terminators
			// include U+2028 and U+2029.
			j := strings.IndexAny(src[i:], "\n\r\u2028\u2029")
			if j < 0 {
				return true
			}
			if src[i+j] != '\n' && src[i+j] != '\r' {
				return false // what follows a Unicode line terminator counts as script
			}
			i += j
		case strings.HasPrefix(src[i:], "/*"):
			j := strings.Index(src[i+2:], "*/")
			if j < 0 {
				return false
			}
			i += 2 + j + 2
		default:
			return false
		}
	}
	return true
}
