package secrets

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"html"
	"net/url"
	"strings"
	"unicode/utf16"
)

// A Lock finds the values of typed secrets in outgoing messages and puts
// their references in their place: once a secret has been typed in a
// tab, reading the field back, a page that echoes it, or a request body
// that posts it shows the client "{{secret:NAME}}" instead. It looks for
// each value in the forms it takes in a CDP message: as it is, escaped for
// JSON, URL-encoded (query and path styles) and base64-encoded (standard
// and URL alphabets, at any alignment within the surrounding bytes).
//
// A Lock is immutable; Add returns a new one. Scanning costs one table
// look-up per byte of the message, whatever the number of secrets.
type Lock struct {
	pats  []pattern
	bloom [1 << 16 / 64]uint64 // 4-byte prefixes of the patterns, hashed
	first map[uint32][]int     // 4-byte prefix → patterns
	short []int                // patterns shorter than 4 bytes
	names map[string]bool      // secrets locked

	// The skip scan: every pattern of 4 bytes or more is at least min
	// bytes long, so a message is sampled every min-3 bytes, and a sample
	// whose 4 bytes occur within the first min bytes of a pattern (grams)
	// is looked at closely.
	min   int
	grams [1 << 16 / 64]uint64
}

type pattern struct {
	b   []byte
	ref []byte
	// enc is the alphabet of a base64 form: Replace decodes the base64
	// text around it, replaces there, and encodes it again, so that what
	// the client decodes reads as the reference.
	enc *base64.Encoding
}

// form is one byte string a value takes in a message.
type form struct {
	b   []byte
	enc *base64.Encoding
}

// Add returns a lock that also hides value as secret name's reference.
// It keeps l's patterns.
func (l *Lock) Add(name string, value []byte) *Lock {
	n := &Lock{first: map[uint32][]int{}, names: map[string]bool{name: true}}
	if l != nil {
		for k := range l.names {
			n.names[k] = true
		}
		for _, p := range l.pats {
			n.add(p.b, p.ref, p.enc)
		}
	}
	ref := []byte(Ref(name))
	for _, f := range forms(bytes.Clone(value)) {
		n.add(f.b, ref, f.enc)
	}
	return n
}

// MaxLen is the length of the longest byte string the lock looks for: a
// value split between two pieces of a stream is found whole when the
// reader holds back this many bytes of each piece for the next.
func (l *Lock) MaxLen() int {
	if l == nil {
		return 0
	}
	n := 0
	for _, p := range l.pats {
		n = max(n, len(p.b))
	}
	return n
}

// Has reports whether secret name is locked.
func (l *Lock) Has(name string) bool { return l != nil && l.names[name] }

func (l *Lock) add(b, ref []byte, enc *base64.Encoding) {
	if len(b) == 0 {
		return
	}
	for _, p := range l.pats {
		if bytes.Equal(p.b, b) {
			return
		}
	}
	i := len(l.pats)
	l.pats = append(l.pats, pattern{b: b, ref: ref, enc: enc})
	if len(b) < 4 {
		l.short = append(l.short, i)
		return
	}
	w := binary.LittleEndian.Uint32(b)
	h := hash(w)
	l.bloom[h>>6] |= 1 << (h & 63)
	l.first[w] = append(l.first[w], i)
	if l.min == 0 || len(b) < l.min {
		l.min = len(b)
		l.grams = [1 << 16 / 64]uint64{}
		for _, p := range l.pats {
			l.addGrams(p.b)
		}
		return
	}
	l.addGrams(b)
}

func (l *Lock) addGrams(b []byte) {
	if len(b) < 4 {
		return
	}
	for j := 0; j+4 <= l.min && j+4 <= len(b); j++ {
		h := hash(binary.LittleEndian.Uint32(b[j:]))
		l.grams[h>>6] |= 1 << (h & 63)
	}
}

func hash(w uint32) uint32 { return (w * 0x9E3779B1) >> 16 }

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
	// page echoes it in HTML; each of them base64-encoded (a request body
	// in Network.requestWillBeSent's postDataEntries); and all of those
	// escaped for JSON three ways: JSON.stringify's (what our extension
	// sends), encoding/json's (HTML characters escaped), and ASCII-only.
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
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
			for k := 0; k < 3; k++ {
				if f := stableBase64(enc, []byte(t), k); f != "" {
					out = append(out, form{b: []byte(f), enc: enc})
				}
			}
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

// stableBase64 is the part of the base64 encoding of value, preceded by k
// bytes of anything (k < 3), that does not depend on those bytes or on
// what follows: the characters whose six bits all come from value.
func stableBase64(enc *base64.Encoding, value []byte, k int) string {
	full := enc.EncodeToString(append(make([]byte, k), value...))
	first := (8*k + 5) / 6           // first character whose bits start at or after value
	last := (8*k + 8*len(value)) / 6 // characters before this end within value
	if last > len(full) || first >= last || last-first < 4 {
		return ""
	}
	return full[first:last]
}

// Contains reports whether b holds a locked value.
func (l *Lock) Contains(b []byte) bool {
	if l == nil {
		return false
	}
	for _, p := range l.short {
		if bytes.Contains(b, l.pats[p].b) {
			return true
		}
	}
	if l.min == 0 {
		return false
	}
	step := l.min - 3
	for i := 0; i+4 <= len(b); i += step {
		h := hash(binary.LittleEndian.Uint32(b[i:]))
		if l.grams[h>>6]&(1<<(h&63)) == 0 {
			continue
		}
		// A pattern with this gram starts at most min-4 bytes before.
		for s := max(0, i-(l.min-4)); s <= i && s+4 <= len(b); s++ {
			if l.at(b, s) >= 0 {
				return true
			}
		}
	}
	return false
}

// at returns the longest pattern of 4 bytes or more that starts at b[s:],
// or -1.
func (l *Lock) at(b []byte, s int) int {
	w := binary.LittleEndian.Uint32(b[s:])
	h := hash(w)
	if l.bloom[h>>6]&(1<<(h&63)) == 0 {
		return -1
	}
	match := -1
	for _, p := range l.first[w] {
		pb := l.pats[p].b
		if bytes.HasPrefix(b[s:], pb) && (match < 0 || len(pb) > len(l.pats[match].b)) {
			match = p
		}
	}
	return match
}

// Replace appends b to dst with every locked value replaced by its
// reference.
func (l *Lock) Replace(dst, b []byte) []byte { return l.replace(dst, b, 0) }

func (l *Lock) replace(dst, b []byte, depth int) []byte {
	start := 0
	for i := 0; ; {
		at, p, ok := l.next(b, i)
		if !ok {
			return append(dst, b[start:]...)
		}
		pat := l.pats[p]
		if pat.enc != nil && depth < 2 {
			// Inside base64 text: decode the run, replace, encode again.
			if rs, re, ok := base64Run(b, at, at+len(pat.b), pat.enc); ok && rs >= start {
				if dec, pad, ok := decodeRun(b[rs:re], pat.enc); ok {
					out := l.replace(nil, dec, depth+1)
					dst = append(dst, b[start:rs]...)
					enc := pat.enc
					if !pad {
						enc = enc.WithPadding(base64.NoPadding)
					}
					dst = enc.AppendEncode(dst, out)
					start, i = re, re
					continue
				}
			}
		}
		dst = append(dst, b[start:at]...)
		dst = append(dst, pat.ref...)
		start = at + len(pat.b)
		i = start
	}
}

// base64Run widens [s, e) of b to the run of enc's alphabet around it,
// with its padding.
func base64Run(b []byte, s, e int, enc *base64.Encoding) (int, int, bool) {
	in := func(c byte) bool {
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			return true
		case enc == base64.URLEncoding:
			return c == '-' || c == '_'
		}
		return c == '+' || c == '/'
	}
	for s > 0 && in(b[s-1]) {
		s--
	}
	for e < len(b) && in(b[e]) {
		e++
	}
	for e < len(b) && b[e] == '=' {
		e++
	}
	return s, e, e-s >= 4
}

// decodeRun decodes a run of base64 text, padded or not.
func decodeRun(run []byte, enc *base64.Encoding) (dec []byte, padded, ok bool) {
	if d, err := enc.AppendDecode(nil, run); err == nil {
		return d, true, true
	}
	if d, err := enc.WithPadding(base64.NoPadding).AppendDecode(nil, run); err == nil {
		return d, false, true
	}
	return nil, false, false
}

// next finds the first locked value at or after i: its offset and
// pattern, the longest one there.
func (l *Lock) next(b []byte, i int) (at, pat int, ok bool) {
	best, bestPat := -1, -1
	for _, p := range l.short {
		if j := bytes.Index(b[i:], l.pats[p].b); j >= 0 && (best < 0 || i+j < best) {
			best, bestPat = i+j, p
		}
	}
	end := len(b) - 3
	if best >= 0 && best < end {
		end = best
	}
	for ; i < end; i++ {
		if match := l.at(b, i); match >= 0 {
			return i, match, true
		}
	}
	if best >= 0 {
		return best, bestPat, true
	}
	return 0, 0, false
}
