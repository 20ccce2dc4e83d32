package secrets

import (
	"bytes"
	"encoding/binary"
)

// A Lock finds the values of typed secrets in outgoing messages and puts
// their references in their place: once a secret has been typed in a
// tab, reading the field back, a page that echoes it, or a request body
// that posts it shows the client "{{secret:NAME}}" instead.
//
// It finds a value in every form Chrome and pages give text in a CDP
// message, each character as it is or in any escape, mixed as they come:
// JSON's, JavaScript's and CSS's escapes, HTML character references
// (named or numeric, with or without the semicolon), percent-encoding of
// the UTF-8 or of a legacy charset's bytes ('+' for a space),
// quoted-printable with its soft line breaks, UTF-16, escapes within
// escapes up to maxDepth deep, and base64 of any of those (match.go,
// decode.go, targets.go, base64run.go).
//
// A scan has three parts. The skip scan finds the plain forms (forms.go)
// at one table look-up per sampled byte, whatever the number of secrets;
// the marker scan looks at each byte an escape may begin with (\ & % = +);
// the base64 scan decodes runs of base64 text long enough to hold a value.
//
// A Lock is immutable; Add returns a new one.
type Lock struct {
	entries []entry         // the values locked, in the order added
	names   map[string]bool // secrets locked

	// text are the plain patterns of text (forms.go); bin, of bytes that
	// are not UTF-8 (a value in UTF-16 or a legacy charset, as it is), for
	// what base64 decodes to: in a JSON message they could match inside a
	// character.
	text, bin skip

	// What the decoders' reading is matched against.
	targets   []target
	byByte    [256][]pos     // where each byte is in the targets
	byRune    map[rune][]pos // where each character past ASCII begins in the UTF-8 targets
	minTarget int            // the shortest target's bytes
	maxTarget int            // the longest's

	// deep is the lock of what base64 decodes to: the values that are not
	// too short (minB64Value); nil: none.
	deep *Lock
}

type entry struct {
	name  string
	value []byte
}

// skip is the skip scan's table of plain patterns: every pattern of 4
// bytes or more is at least min bytes long, so a message is sampled every
// min-3 bytes, and a sample whose 4 bytes occur within the first min bytes
// of a pattern (grams) is looked at closely.
type skip struct {
	pats  []pattern
	bloom [1 << 16 / 64]uint64 // 4-byte prefixes of the patterns, hashed
	first map[uint32][]int     // 4-byte prefix → patterns
	short []int                // patterns shorter than 4 bytes
	min   int
	grams [1 << 16 / 64]uint64
}

type pattern struct {
	b   []byte
	ref []byte
	// quote: b has a quote no backslash escapes, which in a JSON message
	// is where a string ends: no value is there.
	quote bool
}

// form is one byte string a value takes in a message.
type form struct {
	b []byte
}

// Add returns a lock that also hides value as secret name's reference.
// It keeps l's values.
func (l *Lock) Add(name string, value []byte) *Lock {
	var entries []entry
	if l != nil {
		entries = append(entries, l.entries...)
	}
	entries = append(entries, entry{name, bytes.Clone(value)})
	n := build(entries)
	var long []entry
	for _, e := range entries {
		if len(e.value) >= minB64Value {
			long = append(long, e)
		}
	}
	if len(long) > 0 {
		n.deep = build(long)
	}
	return n
}

// minB64Value is the shortest value looked for in what base64 text
// decodes to: a shorter one is in any base64 text's bytes by chance.
const minB64Value = 4

func build(entries []entry) *Lock {
	n := &Lock{entries: entries, names: map[string]bool{}, byRune: map[rune][]pos{}}
	n.text.first, n.bin.first = map[uint32][]int{}, map[uint32][]int{}
	for _, e := range n.entries {
		n.names[e.name] = true
		ref := []byte(Ref(e.name))
		for _, f := range forms(e.value) {
			n.text.add(f.b, ref)
		}
		for _, t := range targetsOf(e.value, ref) {
			switch {
			case t.utf8:
			case isText(t.b):
				// Bytes that are text by chance (UTF-16 of characters whose
				// halves are ASCII letters): text to JSON as well.
				n.text.add(t.b, ref)
			default:
				n.bin.add(t.b, ref)
			}
			n.addTarget(t)
		}
	}
	return n
}

func (l *Lock) addTarget(t target) {
	if len(t.b) == 0 || len(t.b) >= 1<<15 {
		return
	}
	for _, o := range l.targets {
		if bytes.Equal(o.b, t.b) {
			return
		}
	}
	ti := int32(len(l.targets))
	l.targets = append(l.targets, t)
	for j, c := range t.b {
		l.byByte[c] = append(l.byByte[c], pos{ti, int32(j)})
		if t.utf8 && t.chars[j] >= 0x80 {
			l.byRune[t.chars[j]] = append(l.byRune[t.chars[j]], pos{ti, int32(j)})
		}
	}
	if l.minTarget == 0 || len(t.b) < l.minTarget {
		l.minTarget = len(t.b)
	}
	l.maxTarget = max(l.maxTarget, len(t.b))
}

// isText reports whether b is printable ASCII.
func isText(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c >= 0x7f {
			return false
		}
	}
	return true
}

// MaxLen is the length of the longest byte string an occurrence of a
// value may take: a value split between two pieces of a stream is found
// whole when the reader holds back this many bytes of each piece for the
// next.
func (l *Lock) MaxLen() int {
	if l == nil {
		return 0
	}
	n := 0
	for _, p := range l.text.pats {
		n = max(n, len(p.b))
	}
	// Every character escaped to the most, in base64.
	return max(n, (l.maxTarget*maxSpan*4+2)/3+4)
}

// Has reports whether secret name is locked.
func (l *Lock) Has(name string) bool { return l != nil && l.names[name] }

func (l *skip) add(b, ref []byte) {
	if len(b) == 0 {
		return
	}
	for _, p := range l.pats {
		if bytes.Equal(p.b, b) {
			return
		}
	}
	i := len(l.pats)
	quote := false
	for k, c := range b {
		if c == '"' && (k == 0 || b[k-1] != '\\') {
			quote = true
		}
	}
	l.pats = append(l.pats, pattern{b: b, ref: ref, quote: quote})
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

func (l *skip) addGrams(b []byte) {
	if len(b) < 4 {
		return
	}
	for j := 0; j+4 <= l.min && j+4 <= len(b); j++ {
		h := hash(binary.LittleEndian.Uint32(b[j:]))
		l.grams[h>>6] |= 1 << (h & 63)
	}
}

func hash(w uint32) uint32 { return (w * 0x9E3779B1) >> 16 }

// Contains reports whether b holds a locked value.
func (l *Lock) Contains(b []byte) bool {
	if l == nil {
		return false
	}
	return l.contains(b, 0, looksJSON(b))
}

// contains reports whether b holds a value; depth counts the base64 it is
// inside, json says that b is a JSON message (decode.go).
func (l *Lock) contains(b []byte, depth int, json bool) bool {
	if l.text.plain(b) && l.plainAt(b, 0, json) >= 0 || !json && l.bin.plain(b) {
		return true
	}
	s := getScanner(l, b, depth, json)
	defer putScanner(s)
	if s.anyEscaped() {
		return true
	}
	if depth >= maxB64Depth || l.deep == nil {
		return false
	}
	for i := 0; ; {
		r, ok := nextRun(b, i, len(b), l.deep.minTarget, s.text)
		if !ok {
			return false
		}
		s.text = r.text
		var good bool
		if s.dec, good = r.decode(s.dec[:0]); good && len(s.dec) >= l.deep.minTarget && !isImage(s.dec) && l.deep.contains(s.dec, depth+1, false) {
			return true
		}
		i = r.end
	}
}

// plain reports whether b holds a plain pattern (the skip scan).
func (l *skip) plain(b []byte) bool {
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

// plainAt returns where the first plain pattern of text at or after i in
// b is, that is really there, or -1: not one that cuts an escape of a JSON
// message in two (a value "0000" is not in "\u0000"), nor one across the
// end of a JSON string.
func (l *Lock) plainAt(b []byte, i int, json bool) (at int) {
	for {
		at, p, ok := l.text.next(b, i)
		if !ok {
			return -1
		}
		pat := l.text.pats[p]
		switch {
		case json && (pat.quote || midEscape(b, at) || midEscape(b, at+len(pat.b))):
		default:
			return at
		}
		i = at + 1
	}
}

// at returns the longest pattern of 4 bytes or more that starts at b[s:],
// or -1.
func (l *skip) at(b []byte, s int) int {
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
	if l == nil {
		return append(dst, b...)
	}
	return l.replace(dst, b, 0, looksJSON(b))
}

func (l *Lock) replace(dst, b []byte, depth int, json bool) []byte {
	if !l.contains(b, depth, json) {
		return append(dst, b...)
	}
	s := getScanner(l, b, depth, json)
	defer putScanner(s)
	var text, dec []byte
	start := 0
	for i := 0; ; {
		// The first occurrence: a plain pattern, an escaped one, or one in
		// base64 text, whichever begins first.
		sk := &l.text
		at, p, ok := 0, 0, false
		if at = l.plainAt(b, i, json); at >= 0 {
			_, p, ok = sk.next(b, at)
		}
		if !json {
			if bat, bp, bok := l.bin.next(b, i); bok && (!ok || bat < at) {
				sk, at, p, ok = &l.bin, bat, bp, true
			}
		}
		stop := len(b)
		if ok {
			stop = at + 1
		}
		f := s.escaped(i, stop)
		run, inRun := b64run{}, false
		if depth < maxB64Depth && l.deep != nil {
			runStop := stop
			if f.end > 0 {
				runStop = min(runStop, f.start+1)
			}
			for k := i; ; {
				r, more := nextRun(b, k, runStop, l.deep.minTarget, text)
				if !more {
					break
				}
				text = r.text
				var good bool
				if dec, good = r.decode(dec[:0]); good && len(dec) >= l.deep.minTarget && !isImage(dec) && l.deep.contains(dec, depth+1, false) {
					run, inRun = r, true
					break
				}
				k = r.end
			}
		}
		switch {
		case inRun:
			dst = append(dst, b[start:run.start]...)
			out := l.deep.replace(nil, dec, depth+1, false)
			dst = run.encode(dst, out)
			start, i = run.end, run.end
		case f.end > 0 && (!ok || f.start <= at):
			dst = append(dst, b[start:f.start]...)
			dst = append(dst, l.targets[f.ti].ref...)
			start, i = f.end, f.end
		case ok:
			dst = append(dst, b[start:at]...)
			dst = append(dst, sk.pats[p].ref...)
			start = at + len(sk.pats[p].b)
			i = start
		default:
			return append(dst, b[start:]...)
		}

	}
}

// next finds the first plain pattern at or after i: its offset and
// pattern, the longest one there.
func (l *skip) next(b []byte, i int) (at, pat int, ok bool) {
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
