package audit

import (
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Field caps, in bytes. Ids and method names are far shorter in practice;
// the caps only stop a hostile or broken peer from filling the ring with
// one large record.
const (
	maxInstance = 64
	maxTenant   = 64
	maxActor    = 32
	maxKind     = 32
	maxMethod   = 128
	maxTarget   = 128
	maxOutcome  = 32
	// maxBy bounds Record.By: a viewer's name and a token's.
	maxBy = 128
	// MaxDetail bounds Record.Detail.
	MaxDetail = 256
)

// ellipsis marks a field that was cut.
const ellipsis = "…"

// UnparseableURL stands in for a URL that RedactURL cannot parse: what it
// cannot parse it cannot prove free of secrets.
const UnparseableURL = "(unparseable URL)"

// opaqueRedacted follows the scheme of an opaque URL (data:, javascript:,
// mailto:, ...), whose whole body may be user data.
const opaqueRedacted = "(redacted)"

// RedactURL reduces raw to scheme://host[:port]/path. Userinfo, query and
// fragment go, and so do path parameters (";jsessionid=..."), because that
// is where credentials, tokens and search terms travel. The body of an
// opaque URL (data:, javascript:, mailto:) is replaced; about: pages are
// kept. A URL that does not parse becomes UnparseableURL.
func RedactURL(raw string) string {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil || !utf8.ValidString(raw) {
		return UnparseableURL
	}
	if u.Opaque != "" {
		if u.Scheme == "about" {
			return clean("about:"+stripPathParams(u.Opaque), len(raw))
		}
		return u.Scheme + ":" + opaqueRedacted
	}
	var b strings.Builder
	if u.Scheme != "" {
		b.WriteString(u.Scheme)
		b.WriteByte(':')
	}
	if u.Host != "" || u.Scheme != "" && strings.HasPrefix(raw[len(u.Scheme)+1:], "//") {
		b.WriteString("//")
		b.WriteString(strings.ToLower(u.Host))
	}
	b.WriteString(stripPathParams(u.EscapedPath()))
	out := b.String()
	if strings.ContainsFunc(out, invisible) {
		// The parser lets these through in a host; a URL that hides
		// characters from the person reading it is not worth keeping.
		return UnparseableURL
	}
	return out
}

// invisible reports the characters no record may hold: controls, which
// could forge lines, and bidi overrides, which reorder text on screen.
func invisible(r rune) bool {
	return unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r)
}

// stripPathParams drops ";..." from every path segment.
func stripPathParams(p string) string {
	if strings.IndexByte(p, ';') < 0 {
		return p
	}
	segs := strings.Split(p, "/")
	for i, s := range segs {
		if j := strings.IndexByte(s, ';'); j >= 0 {
			segs[i] = s[:j]
		}
	}
	return strings.Join(segs, "/")
}

// TextLength is what is recorded for typed or inserted text: its length in
// characters, never the text.
func TextLength(s string) string {
	n := utf8.RuneCountInString(s)
	if n == 1 {
		return "typed 1 character"
	}
	return "typed " + strconv.Itoa(n) + " characters"
}

// sanitize enforces the field rules on r. It allocates only when a field
// needs changing, so the common record costs nothing here.
func (r *Record) sanitize() {
	if y := r.Time.Year(); y < 0 || y > 9999 {
		// Not representable in RFC 3339, so neither in JSON: the Ring
		// stamps its own time instead.
		r.Time = time.Time{}
	}
	r.Instance = clean(r.Instance, maxInstance)
	r.Tenant = clean(r.Tenant, maxTenant)
	r.Actor = Actor(clean(string(r.Actor), maxActor))
	r.By = clean(r.By, maxBy)
	r.Kind = Kind(clean(string(r.Kind), maxKind))
	r.Method = clean(r.Method, maxMethod)
	r.Target = clean(r.Target, maxTarget)
	r.Outcome = Outcome(clean(string(r.Outcome), maxOutcome))
	// Control characters go before URLs are looked for, or one could hide
	// a scheme from the scrubber ("java\x00script:"). The first cut bounds
	// the work; a URL cut there loses its tail, which redaction would
	// remove anyway.
	r.Detail = clean(scrubURLs(clean(r.Detail, 4*MaxDetail)), MaxDetail)
}

// clean returns s without control or bidi-override characters (which
// could forge lines or reorder text in an operator's terminal), with
// invalid UTF-8 replaced, and cut to at most max bytes.
func clean(s string, max int) string {
	i := 0
	for i < len(s) && s[i] >= 0x20 && s[i] < 0x7f {
		i++
	}
	if i == len(s) && len(s) <= max {
		return s
	}
	b := make([]byte, 0, min(len(s), max))
	b = append(b, s[:min(i, max)]...)
	cut := i > max
	for _, r := range s[i:] {
		if cut {
			break
		}
		if invisible(r) {
			continue
		}
		if len(b)+utf8.RuneLen(r) > max {
			cut = true
			break
		}
		b = utf8.AppendRune(b, r)
	}
	if cut {
		for len(b) > max-len(ellipsis) {
			_, size := utf8.DecodeLastRune(b)
			b = b[:len(b)-size]
		}
		b = append(b, ellipsis...)
	}
	return string(b)
}

// opaqueSchemes carry their payload right after the colon, so in free
// text they are redacted even without "//".
var opaqueSchemes = map[string]bool{
	"data": true, "javascript": true, "vbscript": true,
	"mailto": true, "tel": true, "sms": true,
}

// scrubURLs redacts every URL-looking token in free text. Detail is meant
// to be built from the relay's own words, but a close reason or an error
// message can quote a URL, and the rules must not depend on every caller
// remembering RedactURL.
func scrubURLs(s string) string {
	if strings.IndexByte(s, ':') < 0 {
		return s
	}
	var out strings.Builder
	done := 0 // s[:done] has been copied or replaced
	for i := 0; i < len(s); i++ {
		if s[i] != ':' || i < done {
			continue
		}
		start := i
		for start > done && isSchemeByte(s[start-1]) {
			start--
		}
		for start < i && !isASCIILetter(s[start]) {
			start++
		}
		if start == i {
			// "://" with no scheme before it is still an address to a
			// reader: keep none of it.
			if strings.HasPrefix(s[i+1:], "//") {
				end := i + 1
				for end < len(s) && !endsURL(s[end]) {
					end++
				}
				out.WriteString(s[done:i])
				out.WriteString(UnparseableURL)
				done = end
				i = end - 1
			}
			continue
		}
		end := i + 1
		switch {
		case strings.HasPrefix(s[i+1:], "//"):
			for end < len(s) && !endsURL(s[end]) {
				end++
			}
		case opaqueSchemes[strings.ToLower(s[start:i])]:
			// A script or a data payload may hold spaces and quotes:
			// nothing after it can be told apart from it.
			end = len(s)
		default:
			continue
		}
		out.WriteString(s[done:start])
		out.WriteString(RedactURL(s[start:end]))
		done = end
		i = end - 1
	}
	if done == 0 {
		return s
	}
	out.WriteString(s[done:])
	return out.String()
}

func isASCIILetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

func isSchemeByte(c byte) bool {
	return isASCIILetter(c) || c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'
}

func endsURL(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '"', '\'', '<', '>', '`':
		return true
	}
	return false
}
