package secrets

import (
	"bytes"
	"sync"
	"unicode/utf8"
)

// maxSpan bounds the bytes one character of a value takes in a message:
// its escape, and a soft line break before it.
const maxSpan = maxUnit + 16

// The matcher: the decoders (decode.go) feed one matcher that follows a
// value's targets (targets.go) through a message.
//
// An occurrence of a value is a run of characters, each as it is or
// escaped. Its characters up to the first escaped one are as they are,
// and an escape begins with one of a few bytes (isMarker): so the lock
// finds the plain occurrences with its skip scan (lock.go), and the others
// by looking at each marker in the message: what may be read there, and,
// for a character some target holds, whether the bytes before it are
// that target's as they are and what follows reads as its rest. What
// follows is read character by character, every way it may be written
// (a search that remembers where it failed, so that it stays linear).

const memoSize = 1 << 11

type memoEntry struct {
	key        int64
	gen        uint32
	hasU, hasC bool
	u, c       span
	// reach is the furthest position reading them looked at.
	reachU, reachC int32
}

// memoFor returns the table's entry for (q, d) in this scan.
func (s *scanner) memoFor(q, d int) *memoEntry {
	key := int64(q)<<3 | int64(d)
	e := &s.memo[(q<<2|d)&(memoSize-1)]
	if e.key != key || e.gen != s.gen {
		*e = memoEntry{key: key, gen: s.gen}
	}
	return e
}

// pos is a place in a target: the index of the target and a byte in it.
type pos struct {
	t int32
	j int32
}

// scanner holds one scan's work: the units and escape characters read at
// each position (memoised), and the places the matcher failed at.
type scanner struct {
	l     *Lock
	src   []byte
	depth int  // base64 within base64: how deep src is
	json  bool // src is a JSON message: its escapes are the base (decode.go)

	ua []unit // the arena of units read, memoised by position and depth
	ca []comp // likewise, of escape characters
	// ub is a scratch of units per depth: reading at depth d reads only
	// at lower depths in between.
	ub [maxDepth + 1][]unit
	cb [maxDepth + 1][]comp // likewise, of escape characters
	// memo caches what was read by position and depth, for this scan
	// (gen): a direct-mapped table, since what one marker reads lies
	// within a few hundred bytes of it.
	memo  [memoSize]memoEntry
	gen   uint32
	fail  map[int64]bool
	steps int
	limit int
	reach int  // the furthest position read so far (see units)
	over  bool // the work bound was hit: fail closed

	text, dec []byte // base64 runs read and decoded (lock.go)
}

var scanners = sync.Pool{New: func() any {
	return &scanner{fail: map[int64]bool{}}
}}

// stepsPerByte bounds a scan's work: a message that takes more (a
// pathological run of escapes) is taken to hold a value.
const stepsPerByte = 64

func getScanner(l *Lock, src []byte, depth int, json bool) *scanner {
	s := scanners.Get().(*scanner)
	s.l, s.src, s.depth = l, src, depth
	s.json = json
	s.steps, s.over = 0, false
	if s.gen++; s.gen == 0 {
		s.memo = [memoSize]memoEntry{} // a stamp seen before could come back
		s.gen = 1
	}
	s.limit = stepsPerByte*len(src) + 1<<16
	return s
}

func putScanner(s *scanner) {
	s.l, s.src = nil, nil
	if cap(s.ua) > 1<<16 || cap(s.ca) > 1<<16 || len(s.fail) > 1<<14 || cap(s.dec) > 1<<20 {
		return // grown by one large message: let it go
	}
	s.ua, s.ca = s.ua[:0], s.ca[:0]
	clear(s.fail)
	scanners.Put(s)
}

// match reads target ti's bytes from j on at q, and returns where they
// end, or -1. afterBreak: what was read last is a soft line break, and
// another may not follow it (so that an occurrence takes at most
// maxSpan bytes a character).
func (s *scanner) match(ti, j, q int, afterBreak bool) int {
	t := &s.l.targets[ti]
	for {
		if j == len(t.b) {
			return q
		}
		if q >= len(s.src) {
			return -1
		}
		c := s.src[q]
		var u unit
		if !isMarker[c] {
			afterBreak = false
			if c == '"' && s.json {
				return -1 // a JSON string ends here: a value does not go on
			}
			if c < utf8.RuneSelf {
				if t.b[j] != c {
					return -1
				}
				j, q = j+1, q+1
				continue
			}
			u = literal(s.src, q)
		} else if u = s.base(q); opens(&u) {
			break
		}
		afterBreak = false
		a, b := t.advance(j, &u)
		if a < 0 {
			return -1
		}
		if b >= 0 {
			if e := s.match(ti, b, int(u.end), false); e >= 0 {
				return e
			}
		}
		j, q = a, int(u.end)
	}
	key := int64(ti)<<48 | int64(j)<<32 | int64(q)<<1
	if afterBreak {
		key |= 1
	}
	if s.fail[key] {
		return -1
	}
	if s.steps++; s.steps > s.limit {
		s.over = true
		return -1
	}
	for _, u := range s.units(q, maxDepth) {
		if u.kind == kEps && afterBreak {
			continue
		}
		a, b := t.advance(j, &u)
		for _, nj := range [2]int{a, b} {
			if nj < 0 {
				continue
			}
			if e := s.match(ti, nj, int(u.end), u.kind == kEps); e >= 0 {
				return e
			}
		}
	}
	s.fail[key] = true
	return -1
}

// found is one occurrence: src[start:end] is target ti's value.
type found struct {
	start, end int
	ti         int
}

// better reports whether f comes before g (or at the same place, longer).
func (f found) better(g found) bool {
	return g.end == 0 || f.start < g.start || f.start == g.start && f.end > g.end
}

// atMarker returns the best occurrence whose first escaped character
// begins at marker m, starting no earlier than from.
func (s *scanner) atMarker(m, from int) (best found) {
	l := s.l
	try := func(ti, j int, u *unit) {
		t := &l.targets[ti]
		start := m - j
		if start < from || j > 0 && s.src[m-1] != t.b[j-1] || !bytes.Equal(s.src[start:m], t.b[:j]) || s.json && bytes.IndexByte(t.b[:j], '"') >= 0 || midRune(s.src, start) || s.json && midEscape(s.src, start) {
			return
		}
		a, b := t.advance(j, u)
		for _, nj := range [2]int{a, b} {
			if nj < 0 {
				continue
			}
			if e := s.match(ti, nj, int(u.end), u.kind == kEps); e >= 0 && !midRune(s.src, e) {
				if f := (found{start, e, ti}); f.better(best) {
					best = f
				}
				return
			}
		}
	}
	b := s.base(m)
	if !opens(&b) && !b.dec {
		return best // a marker byte that begins nothing here
	}
	us := s.unitsAt(m)
	for _, u := range us {
		if !u.dec {
			continue
		}
		switch u.kind {
		case kEps:
			// A soft line break inside a value, after the part of it
			// that is as it is: the byte before it ends that part.
			if m > from {
				for _, p := range l.byByte[s.src[m-1]] {
					if j := int(p.j) + 1; j < len(l.targets[p.t].b) {
						try(int(p.t), j, &u)
					}
				}
			}
		case kByte:
			for _, p := range l.byByte[byte(u.r[0])] {
				try(int(p.t), int(p.j), &u)
			}
		default:
			r := u.r[0]
			if r < 256 {
				for _, p := range l.byByte[byte(r)] {
					try(int(p.t), int(p.j), &u)
				}
			}
			if r >= utf8.RuneSelf {
				for _, p := range l.byRune[r] {
					try(int(p.t), int(p.j), &u)
				}
			}
		}
	}
	return best
}

// looksJSON reports whether b is a JSON object or array.
func looksJSON(b []byte) bool {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		case '{', '[':
			return true
		}
		return false
	}
	return false
}

// midEscape reports whether i falls inside an escape of a JSON message
// (\n, \u00e4): an occurrence may not begin there, or the client would get
// the escape cut in two.
func midEscape(src []byte, i int) bool {
	for k := i - 1; k >= 0 && k >= i-5; k-- {
		if src[k] != '\\' {
			continue
		}
		// k begins an escape when an even number of backslashes precede it.
		n := 0
		for p := k - 1; p >= 0 && src[p] == '\\'; p-- {
			n++
		}
		if n%2 == 1 {
			continue
		}
		width := 2
		switch {
		case k+1 >= len(src):
			return false
		case src[k+1] == 'u':
			width = 6
		case jsonSimple[src[k+1]] == 0 && src[k+1] != '\\':
			return false // no escape of JSON's: the backslash is as it is
		}
		return k+width > i
	}
	return false
}

// midRune reports whether i falls inside a UTF-8 character of src: an
// occurrence may not begin or end there.
func midRune(src []byte, i int) bool {
	if i <= 0 || i >= len(src) || src[i]&0xC0 != 0x80 {
		return false
	}
	k := i
	for k > 0 && k > i-4 && src[k]&0xC0 == 0x80 {
		k--
	}
	r, n := utf8.DecodeRune(src[k:])
	return (r != utf8.RuneError || n > 1) && k+n > i
}

// unitsAt returns what may be read at marker m, every escape up to
// maxDepth deep. Most markers begin one escape with nothing escaped inside
// it (a URL's '&', a JSON message's \"): what is read one escape deep is
// then all there is, and reading deeper, which costs as much again for
// each level, is skipped. It is all there is when what is read one deep
// does not begin another escape, and every escape the reading looked at
// past m reads one deep as nothing but itself.
func (s *scanner) unitsAt(m int) []unit {
	u1 := s.units(m, 1)
	reach := s.memoFor(m, 1).reachU
	for i := range u1 {
		if u1[i].dec && (opens(&u1[i]) || u1[i].kind == kEps) {
			return s.units(m, maxDepth)
		}
	}
	for p := m + 1; p <= int(reach) && p < len(s.src); p++ {
		if !isMarker[s.src[p]] {
			continue
		}
		b := s.base(p)
		if !opens(&b) {
			continue
		}
		for _, c := range s.comps(p, 1) {
			if c.end != b.end || c.c != byte(b.r[0]) {
				return s.units(m, maxDepth)
			}
		}
	}
	return u1
}

// markers finds the marker bytes of a message in order, with one
// vectorised search per kind of marker rather than a look at every byte.
type markers struct {
	src  []byte
	next [5]int // where each kind is next, at or after the last search
}

var markerBytes = [5]byte{'\\', '&', '%', '=', '+'}

func newMarkers(src []byte) markers {
	return markers{src: src, next: [5]int{-1, -1, -1, -1, -1}}
}

// find returns the first marker at or after from, or len(src).
func (k *markers) find(from int) int {
	m := len(k.src)
	for i, c := range markerBytes {
		if k.next[i] < from {
			if j := bytes.IndexByte(k.src[from:], c); j >= 0 {
				k.next[i] = from + j
			} else {
				k.next[i] = len(k.src)
			}
		}
		m = min(m, k.next[i])
	}
	return m
}

// escaped returns the first occurrence with an escaped character that
// starts at or after from and before stop, or found{} (end 0).
func (s *scanner) escaped(from, stop int) (best found) {
	ms := newMarkers(s.src)
	for m := ms.find(from); m < len(s.src) && m < stop; m = ms.find(m + 1) {
		if s.quickSkip(m) {
			continue
		}
		if f := s.atMarker(m, from); f.end > 0 && f.better(best) {
			best = f
			// Nothing that begins at a later marker can start before it.
			stop = min(stop, best.start+s.l.maxTarget+1)
		}
		if s.over {
			return found{start: m, end: m + 1, ti: 0}
		}
	}
	return best
}

// anyEscaped reports whether src holds an occurrence with an escaped
// character.
func (s *scanner) anyEscaped() bool {
	ms := newMarkers(s.src)
	for m := ms.find(0); m < len(s.src); m = ms.find(m + 1) {
		if s.quickSkip(m) {
			continue
		}
		if s.atMarker(m, 0).end > 0 || s.over {
			return true
		}
	}
	return false
}
