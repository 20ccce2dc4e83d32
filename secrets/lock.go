package secrets

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
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
			n.add(p.b, p.ref)
		}
	}
	ref := []byte(Ref(name))
	for _, f := range forms(bytes.Clone(value)) {
		n.add(f, ref)
	}
	return n
}

// Has reports whether secret name is locked.
func (l *Lock) Has(name string) bool { return l != nil && l.names[name] }

func (l *Lock) add(b, ref []byte) {
	if len(b) == 0 {
		return
	}
	for _, p := range l.pats {
		if bytes.Equal(p.b, b) {
			return
		}
	}
	i := len(l.pats)
	l.pats = append(l.pats, pattern{b: b, ref: ref})
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
func forms(value []byte) [][]byte {
	s := string(value)
	out := [][]byte{value}
	add := func(f string) {
		if f != "" && f != s {
			out = append(out, []byte(f))
		}
	}
	// The JSON forms: JSON.stringify's (what our extension sends),
	// encoding/json's (HTML characters escaped), and an ASCII-only one.
	add(jsonEscape(s, false))
	add(jsonEscape(s, true))
	if j, err := json.Marshal(s); err == nil {
		add(string(j[1 : len(j)-1]))
	}
	add(url.QueryEscape(s))
	add(url.PathEscape(s))
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		for k := 0; k < 3; k++ {
			add(stableBase64(enc, value, k))
		}
	}
	return out
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
func (l *Lock) Replace(dst, b []byte) []byte {
	start := 0
	for i := 0; ; {
		at, p, ok := l.next(b, i)
		if !ok {
			return append(dst, b[start:]...)
		}
		dst = append(dst, b[start:at]...)
		dst = append(dst, l.pats[p].ref...)
		start = at + len(l.pats[p].b)
		i = start
	}
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
