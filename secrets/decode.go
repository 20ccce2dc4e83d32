package secrets

import (
	"unicode/utf8"
)

// The decoders: what one character of a message may be written as.
//
// A message from Chrome is JSON, and a string in it may hold text that
// was escaped before: a page's HTML (character references, named or by
// number, with or without the semicolon), a URL or a form body (percent
// escapes of UTF-8 or of a legacy charset's bytes, '+' for a space), a
// saved page (quoted-printable, with soft line breaks anywhere), script,
// JSON text and style sheets (\uXXXX, \u{...}, \xXX, \/ and CSS's
// \31 ). An escape's own characters may be escaped in turn (a saved
// page's &amp; broken by a soft line break; a form post writes &#26085;
// as %26%2326085%3B), up to maxDepth escapes deep, and a page may write
// every character in another form. So the lock does not list the forms
// a value takes: it reads a message one character at a time, every way
// the character may be written, and matches what it reads against the
// value (match.go).
//
// Reading starts from a base: a JSON message's own escapes are read as
// JSON reads them, one way only (\" is a quote, \\ a backslash); other
// text (a stream's piece, base64 decoded, a title) is read as its bytes.

// maxDepth is how many escapes deep a character is read above the base:
// quoted-printable, then a character reference (a saved page's HTML).
const maxDepth = 2

// maxUnit bounds the bytes one character of a value may take in a
// message, escapes and soft line breaks included; a longer one is not
// read.
const maxUnit = 64

// isMarker are the bytes an escape starts with. A message position that
// holds none of them holds its character as it is (in a JSON message, a
// backslash begins an escape of JSON's, read at once).
var isMarker = [256]bool{'\\': true, '&': true, '%': true, '=': true, '+': true}

// isEscapeChar are the characters an escape of the content starts with,
// once the base is read: a JSON message's \u0026 is an '&'.
func isEscapeChar(r rune) bool {
	return r < 128 && r != 0 && isMarker[r]
}

type unitKind uint8

const (
	kRune unitKind = iota // n characters
	kByte                 // one byte, in r[0]: a percent or quoted-printable escape, or a byte that is not UTF-8
	kEps                  // nothing: a soft line break
)

// A unit is one thing read at a position of a message: a character (two
// for a few named references), a byte, or nothing; and where it ends.
type unit struct {
	end  int32
	kind unitKind
	dec  bool // an escape's, not the bytes as they are
	n    uint8
	r    [2]rune
}

// A comp is one ASCII character of an escape's own syntax, and where it
// ends.
type comp struct {
	c   byte
	end int32
}

// span is a slice of a scanner's arena.
type span struct{ lo, hi int32 }

// literal is the unit at q as the bytes are: a UTF-8 character, or a byte
// that begins none.
func literal(src []byte, q int) unit {
	c := src[q]
	if c < utf8.RuneSelf {
		return unit{end: int32(q + 1), kind: kRune, n: 1, r: [2]rune{rune(c)}}
	}
	r, n := utf8.DecodeRune(src[q:])
	if r == utf8.RuneError && n <= 1 {
		return unit{end: int32(q + 1), kind: kByte, r: [2]rune{rune(c)}}
	}
	return unit{end: int32(q + n), kind: kRune, n: 1, r: [2]rune{r}}
}

// base is the unit at q before any escape of the content: in a JSON
// message a JSON escape, as the character it stands for; otherwise the
// bytes as they are.
func (s *scanner) base(q int) unit {
	src := s.src
	if !s.json || src[q] != '\\' || q+1 >= len(src) {
		return literal(src, q)
	}
	u := unit{end: int32(q + 2), kind: kRune, dec: true, n: 1}
	switch src[q+1] {
	case '"', '\\', '/':
		u.r[0] = rune(src[q+1])
	case 'b':
		u.r[0] = '\b'
	case 'f':
		u.r[0] = '\f'
	case 'n':
		u.r[0] = '\n'
	case 'r':
		u.r[0] = '\r'
	case 't':
		u.r[0] = '\t'
	case 'u':
		v, ok := hex4(src, q+2)
		if !ok {
			return literal(src, q)
		}
		u.r[0], u.end = rune(v), int32(q+6)
		if v >= 0xD800 && v < 0xDC00 && q+12 <= len(src) && src[q+6] == '\\' && src[q+7] == 'u' {
			if lo, ok := hex4(src, q+8); ok && lo >= 0xDC00 && lo < 0xE000 {
				u.r[0], u.end = 0x10000+(rune(v)-0xD800)<<10+rune(lo)-0xDC00, int32(q+12)
			}
		}
	default:
		return literal(src, q)
	}
	return u
}

// hex4 reads four hex digits at src[i:].
func hex4(src []byte, i int) (uint32, bool) {
	if i+4 > len(src) {
		return 0, false
	}
	var v uint32
	for _, c := range src[i : i+4] {
		x, ok := digitVal(c, 16)
		if !ok {
			return 0, false
		}
		v = v<<4 | x
	}
	return v, true
}

// opens reports whether an escape of the content may begin with u.
func opens(u *unit) bool {
	return u.kind == kRune && u.n == 1 && isEscapeChar(u.r[0])
}

// units returns what may be read at q, escapes up to d deep above the
// base. The slice is the scanner's; it stays valid for the scan.
func (s *scanner) units(q, d int) []unit {
	if q >= len(s.src) {
		return nil
	}
	if !isMarker[s.src[q]] {
		lo := len(s.ua)
		s.ua = append(s.ua, literal(s.src, q))
		return s.ua[lo:]
	}
	b := s.base(q)
	if d == 0 || !opens(&b) {
		lo := len(s.ua)
		s.ua = append(s.ua, b)
		return s.ua[lo:]
	}
	if e := s.memoFor(q, d); e.hasU {
		s.reach = max(s.reach, int(e.reachU))
		return s.ua[e.u.lo:e.u.hi]
	}
	s.steps++
	outer := s.reach
	s.reach = q
	// Read into the scratch of depth d: what decode calls reads at lower
	// depths only.
	s.ub[d] = append(s.ub[d][:0], b)
	if d > 1 {
		// What is read less deep stays a reading: an escape read deeper
		// may go on where the shallower one stopped (&#x3c followed by
		// &#x62;, a 'b', which is a hex digit too).
		s.ub[d] = append(s.ub[d], s.units(q, d-1)...)
	}
	s.decode(q, d)
	lo := len(s.ua)
	for _, u := range s.ub[d] {
		if int(u.end)-q > maxUnit {
			continue
		}
		dup := false
		for _, v := range s.ua[lo:] {
			if v.end == u.end && v.kind == u.kind && v.n == u.n && v.r == u.r {
				dup = true
				break
			}
		}
		if !dup {
			s.ua = append(s.ua, u)
		}
	}
	e := s.memoFor(q, d)
	e.u, e.hasU, e.reachU = span{int32(lo), int32(len(s.ua))}, true, int32(s.reach)
	s.reach = max(s.reach, outer)
	return s.ua[lo:]
}

// comps returns the ASCII characters that may be read at q, escapes up to
// d deep, past any soft line breaks.
func (s *scanner) comps(q, d int) []comp {
	s.reach = max(s.reach, q)
	if q >= len(s.src) {
		return nil
	}
	c := s.src[q]
	if !isMarker[c] {
		if c >= utf8.RuneSelf {
			return nil
		}
		lo := len(s.ca)
		s.ca = append(s.ca, comp{c, int32(q + 1)})
		return s.ca[lo:]
	}
	if b := s.base(q); d == 0 || !opens(&b) {
		if b.kind != kRune || b.r[0] >= utf8.RuneSelf {
			return nil
		}
		lo := len(s.ca)
		s.ca = append(s.ca, comp{byte(b.r[0]), b.end})
		return s.ca[lo:]
	}
	if e := s.memoFor(q, d); e.hasC {
		s.reach = max(s.reach, int(e.reachC))
		return s.ca[e.c.lo:e.c.hi]
	}
	outer := s.reach
	s.reach = q
	// Collected in the scratch of depth d: reading units reads escape
	// characters at lower depths into the arena meanwhile.
	cb := s.cb[d][:0]
	var work [4]int32
	work[0] = int32(q)
	for n, w := 1, 0; w < n; w++ {
		for _, u := range s.units(int(work[w]), d) {
			switch {
			case u.kind == kEps:
				if n < len(work) {
					work[n] = u.end
					n++
				}
			case u.kind == kByte && u.r[0] < utf8.RuneSelf, u.kind == kRune && u.n == 1 && u.r[0] < utf8.RuneSelf:
				cb = append(cb, comp{byte(u.r[0]), u.end})
			}
		}
	}
	s.cb[d] = cb
	lo := len(s.ca)
	s.ca = append(s.ca, cb...)
	e := s.memoFor(q, d)
	e.c, e.hasC, e.reachC = span{int32(lo), int32(len(s.ca))}, true, int32(s.reach)
	s.reach = max(s.reach, outer)
	return s.ca[lo:]
}

// decode adds to the scratch of depth d the escapes, up to d deep, that
// begin at q.
func (s *scanner) decode(q, d int) {
	for _, a := range s.comps(q, d-1) {
		switch a.c {
		case '\\':
			s.backslash(int(a.end), d)
		case '&':
			s.reference(int(a.end), d)
		case '%':
			s.percent(int(a.end), d)
		case '=':
			s.quotedPrintable(int(a.end), d)
		case '+':
			s.emit(d, runeUnit(' ', a.end))
		}
	}
}

// emit adds u to the scratch of depth d.
func (s *scanner) emit(d int, u unit) { s.ub[d] = append(s.ub[d], u) }

func runeUnit(r rune, end int32) unit {
	return unit{end: end, kind: kRune, dec: true, n: 1, r: [2]rune{r}}
}

// byteUnit is an escaped byte; one below 0x80 is the ASCII character.
func byteUnit(b uint32, end int32) unit {
	if b < utf8.RuneSelf {
		return runeUnit(rune(b), end)
	}
	return unit{end: end, kind: kByte, dec: true, r: [2]rune{rune(b)}}
}

// A hexRead is a number read from digits, and where they end.
type hexRead struct {
	v   uint32
	end int32
}

// hexReads are the ways digits were read (a few at most).
type hexReads struct {
	n int
	a [16]hexRead
}

func (h *hexReads) add(r hexRead) {
	if h.n < len(h.a) {
		h.a[h.n] = r
		h.n++
	}
}

func digitVal(c byte, base uint32) (uint32, bool) {
	var v uint32
	switch {
	case c >= '0' && c <= '9':
		v = uint32(c - '0')
	case c >= 'a' && c <= 'f':
		v = uint32(c-'a') + 10
	case c >= 'A' && c <= 'F':
		v = uint32(c-'A') + 10
	default:
		return 0, false
	}
	return v, v < base
}

// digits returns the numbers of between min and max digits of base read
// from p (each way the digits may be written). With greedy, only the
// readings that stop where no further digit follows (or at max).
func (s *scanner) digits(p, d int, base uint32, min, max int, greedy bool) hexReads {
	var out hexReads
	s.digitsFrom(p, d, base, 0, 0, min, max, greedy, &out)
	return out
}

func (s *scanner) digitsFrom(p, d int, base, v uint32, n, min, max int, greedy bool, out *hexReads) {
	s.steps++
	// Greedy: a reading stops where what follows may be read as something
	// other than a digit (or nothing follows), each way it may be read.
	stops := true
	if n < max {
		cs := s.comps(p, d)
		stops = len(cs) == 0
		for _, c := range cs {
			x, ok := digitVal(c.c, base)
			if !ok {
				stops = true
				continue
			}
			nv := v*base + x
			if nv > 0x10FFFF {
				nv = 0x110000 // past Unicode: the reference is U+FFFD
			}
			s.digitsFrom(int(c.end), d, base, nv, n+1, min, max, greedy, out)
		}
	}
	if n >= min && (!greedy || stops) {
		out.add(hexRead{v, int32(p)})
	}
}

// percent reads what follows a '%' at p: two hex digits (a byte), or
// JavaScript's escape()'s %uXXXX (a character).
func (s *scanner) percent(p, d int) {
	hs := s.digits(p, d-1, 16, 2, 2, false)
	for _, h := range hs.a[:hs.n] {
		s.emit(d, byteUnit(h.v, h.end))
	}
	for _, u := range s.comps(p, d-1) {
		if u.c == 'u' || u.c == 'U' {
			hs := s.digits(int(u.end), d-1, 16, 4, 4, false)
			for _, h := range hs.a[:hs.n] {
				s.emit(d, runeUnit(rune(h.v), h.end))
			}
		}
	}
}

// quotedPrintable reads what follows a '=' at p: two hex digits (a byte),
// or a soft line break (nothing), after any spaces or tabs.
func (s *scanner) quotedPrintable(p, d int) {
	hs := s.digits(p, d-1, 16, 2, 2, false)
	for _, h := range hs.a[:hs.n] {
		s.emit(d, byteUnit(h.v, h.end))
	}
	s.softBreak(p, d, 0)
}

func (s *scanner) softBreak(p, d, spaces int) {
	for _, c := range s.comps(p, d-1) {
		switch c.c {
		case ' ', '\t':
			if spaces < 8 {
				s.softBreak(int(c.end), d, spaces+1)
			}
		case '\n':
			s.emit(d, unit{end: c.end, kind: kEps, dec: true})
		case '\r':
			for _, lf := range s.comps(int(c.end), d-1) {
				if lf.c == '\n' {
					s.emit(d, unit{end: lf.end, kind: kEps, dec: true})
				}
			}
		}
	}
}
