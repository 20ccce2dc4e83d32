package secrets

import (
	"encoding/json"
	"html"
	"net/url"
	"strings"
	"unicode/utf16"
)

// The plain patterns of a value: the forms it takes in a message that the
// skip scan (lock.go) finds without decoding anything, in one table
// look-up per sampled byte. Every form with an escape in it is also found
// by the decoders (match.go); these are the common ones, found faster.

// forms are the byte strings value takes in a message.
func forms(value []byte) []form {
	s := string(value)
	out := []form{{b: value}}
	add := func(f string) {
		if f != "" && f != s {
			out = append(out, form{b: []byte(f)})
		}
	}
	// The text forms: as it is, as a URL or a form post carries it, as a
	// page echoes it in HTML; and all of those escaped for JSON three ways:
	// JSON.stringify's (what our extension sends), encoding/json's (HTML
	// characters escaped), and ASCII-only.
	texts := []string{s,
		url.QueryEscape(s), url.PathEscape(s),
		percentEscape(s, wwwFormSafe, true, false), percentEscape(s, wwwFormSafe, true, true),
		percentEscape(s, uriComponentSafe, false, false), percentEscape(s, uriComponentSafe, false, true),
		percentEscape(s, uriSafe, false, false),
		html.EscapeString(s), htmlEscape(s, false), htmlEscape(s, true),
	}
	seen := map[string]bool{}
	for _, t := range texts {
		if seen[t] {
			continue
		}
		seen[t] = true
		add(t)
		add(jsonEscape(t, false))
		add(jsonEscape(t, true))
		if j, err := json.Marshal(t); err == nil {
			add(string(j[1 : len(j)-1]))
		}
	}
	return out
}

// The characters percent-encoding leaves as they are: the
// application/x-www-form-urlencoded serializer's (URLSearchParams, form
// posts), encodeURIComponent's and encodeURI's, besides ASCII letters and
// digits.
const (
	wwwFormSafe      = "*-._"
	uriComponentSafe = "-_.!~*'()"
	uriSafe          = "-_.!~*'();/?:@&=+$,#"
)

// percentEscape percent-encodes the UTF-8 bytes of s but letters, digits
// and safe; plus writes a space as '+'; lower uses lower-case hex digits.
func percentEscape(s, safe string, plus, lower bool) string {
	digits := "0123456789ABCDEF"
	if lower {
		digits = "0123456789abcdef"
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', strings.IndexByte(safe, c) >= 0:
			b.WriteByte(c)
		case c == ' ' && plus:
			b.WriteByte('+')
		default:
			b.WriteByte('%')
			b.WriteByte(digits[c>>4])
			b.WriteByte(digits[c&15])
		}
	}
	return b.String()
}

// htmlEscape escapes s as a browser serializes text (&, <, >) or, with
// attr, an attribute value (&, ").
func htmlEscape(s string, attr bool) string {
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "\u00a0", "&nbsp;")
	if attr {
		r = strings.NewReplacer("&", "&amp;", "\"", "&quot;", "\u00a0", "&nbsp;")
	}
	return r.Replace(s)
}

// jsonEscape escapes s as JSON.stringify does inside a string, and with
// ascii every character past ASCII as \uXXXX too.
func jsonEscape(s string, ascii bool) string {
	var b strings.Builder
	hex := func(r rune) {
		b.WriteString(`\u`)
		for shift := 12; shift >= 0; shift -= 4 {
			b.WriteByte("0123456789abcdef"[(r>>shift)&0xF])
		}
	}
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20:
			hex(r)
		case ascii && r > 0x7e && r > 0xffff:
			r1, r2 := utf16.EncodeRune(r)
			hex(r1)
			hex(r2)
		case ascii && r > 0x7e:
			hex(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
