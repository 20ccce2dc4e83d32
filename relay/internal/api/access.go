package api

import (
	"net/url"
	"strings"
)

// Level is what automation may do with a tab or a frame: everything the
// policy allows (Full), read but not act (ReadOnly), or see nothing and
// only leave (Blind). The levels are ordered: a greater one is stricter.
type Level uint8

const (
	Full Level = iota
	ReadOnly
	Blind
)

func (a Level) String() string {
	switch a {
	case ReadOnly:
		return "read-only"
	case Blind:
		return "blind"
	}
	return "full"
}

// Access is a tab's (or a frame's, or a session's) access with the reason
// a refusal gives. The zero Access is full access.
type Access struct {
	Level Level
	Rule  string // bounded rule id, for records and metrics
	Why   string // what a refusal says, after "cdprelay: "
}

// Stricter returns the stricter of two accesses (a when they are as
// strict).
func Stricter(a, b Access) Access {
	if b.Level > a.Level {
		return b
	}
	return a
}

// PageScheme classifies a top-level URL: shareable web content, a page the
// relay treats as harmless (Chrome's error page, about:blank), or a page
// that is never shared.
func PageScheme(raw string) (web, special bool) {
	i := strings.IndexByte(raw, ':')
	if i <= 0 {
		return false, false
	}
	switch strings.ToLower(raw[:i]) {
	case "http", "https":
		return true, false
	case "about":
		rest := raw[i+1:]
		if j := strings.IndexAny(rest, "?#"); j >= 0 {
			rest = rest[:j]
		}
		return false, rest == "blank" || rest == "srcdoc"
	case "chrome-error":
		return false, strings.HasPrefix(raw, "chrome-error://chromewebdata/")
	case "blob", "filesystem":
		// Their content is their origin's: judge the URL inside.
		inner, _ := PageScheme(raw[i+1:])
		return inner, false
	}
	return false, false
}

// Origin reduces a URL to its origin, for what a blind tab may show.
func Origin(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		if i := strings.IndexByte(raw, ':'); i > 0 {
			return raw[:i+1]
		}
		return ""
	}
	if u.Host == "" {
		return u.Scheme + ":"
	}
	return u.Scheme + "://" + u.Host
}

// SchemeOf names the kind of page raw is by its scheme, for a refusal's
// text: "a file:", "a chrome:", or "a non-web" when it has none.
func SchemeOf(raw string) string {
	if i := strings.IndexByte(raw, ':'); i > 0 {
		return "a " + strings.ToLower(raw[:i]) + ":"
	}
	return "a non-web"
}

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
