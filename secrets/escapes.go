package secrets

import (
	"strings"
	"unicode/utf8"
)

// Script's, JSON text's and style sheets' escapes: what follows a
// backslash of the content (a JSON message's own are its base, decode.go).

// backslash reads what follows a backslash at p: JSON's and JavaScript's
// escapes (\n, \uXXXX with its surrogate pair, \u{...}, \xXX, \/ and any
// character escaped as itself), CSS's (one to six hex digits and a space),
// and a line continuation (nothing).
func (s *scanner) backslash(p, d int) {
	for _, b := range s.comps(p, d-1) {
		switch b.c {
		case 'u':
			hs := s.digits(int(b.end), d-1, 16, 4, 4, false)
			for _, h := range hs.a[:hs.n] {
				if h.v >= 0xD800 && h.v < 0xDC00 {
					s.lowSurrogate(h, d)
				}
				s.emit(d, runeUnit(rune(h.v), h.end))
			}
			for _, o := range s.comps(int(b.end), d-1) {
				if o.c != '{' {
					continue
				}
				hs := s.digits(int(o.end), d-1, 16, 1, 8, true)
				for _, h := range hs.a[:hs.n] {
					for _, c := range s.comps(int(h.end), d-1) {
						if c.c == '}' && h.v <= 0x10FFFF {
							s.emit(d, runeUnit(rune(h.v), c.end))
						}
					}
				}
			}
		case 'x':
			hs := s.digits(int(b.end), d-1, 16, 2, 2, false)
			for _, h := range hs.a[:hs.n] {
				s.emit(d, runeUnit(rune(h.v), h.end))
			}
		case 'b':
			s.emit(d, runeUnit('\b', b.end))
		case 'f':
			s.emit(d, runeUnit('\f', b.end))
		case 'n':
			s.emit(d, runeUnit('\n', b.end))
		case 'r':
			s.emit(d, runeUnit('\r', b.end))
		case 't':
			s.emit(d, runeUnit('\t', b.end))
		case 'v':
			s.emit(d, runeUnit('\v', b.end))
		case '0':
			s.emit(d, runeUnit(0, b.end))
		case '\n':
			s.emit(d, unit{end: b.end, kind: kEps, dec: true})
			continue
		case '\r':
			s.emit(d, unit{end: b.end, kind: kEps, dec: true})
			for _, c := range s.comps(int(b.end), d-1) {
				if c.c == '\n' {
					s.emit(d, unit{end: c.end, kind: kEps, dec: true})
				}
			}
			continue
		}
		if _, hex := digitVal(b.c, 16); hex {
			// CSS: up to six hex digits, and one white space after them.
			hs := s.digits(p, d-1, 16, 1, 6, false)
			for _, h := range hs.a[:hs.n] {
				r := rune(h.v)
				if r == 0 || r > 0x10FFFF || r >= 0xD800 && r < 0xE000 {
					r = 0xFFFD
				}
				s.emit(d, runeUnit(r, h.end))
				for _, w := range s.comps(int(h.end), d-1) {
					switch w.c {
					case ' ', '\t', '\n', '\f':
						s.emit(d, runeUnit(r, w.end))
					case '\r':
						s.emit(d, runeUnit(r, w.end))
						for _, lf := range s.comps(int(w.end), d-1) {
							if lf.c == '\n' {
								s.emit(d, runeUnit(r, lf.end))
							}
						}
					}
				}
			}
		}
		// Any other character escaped as itself: \" \\ \/ \' \g (a hex
		// digit or a letter of an escape above is not).
		if _, hex := digitVal(b.c, 16); !hex && !strings.ContainsRune("bfnrtvux", rune(b.c)) {
			s.emit(d, runeUnit(rune(b.c), b.end))
		}
	}
	if p < len(s.src) && s.src[p] >= utf8.RuneSelf {
		// A character past ASCII escaped as itself.
		if u := literal(s.src, p); u.kind == kRune {
			s.emit(d, runeUnit(u.r[0], u.end))
		}
	}
}

// lowSurrogate reads the \uDC00-\uDFFF that completes the high surrogate
// h as one character.
func (s *scanner) lowSurrogate(h hexRead, d int) {
	for _, bs := range s.comps(int(h.end), d-1) {
		if bs.c != '\\' {
			continue
		}
		for _, u := range s.comps(int(bs.end), d-1) {
			if u.c != 'u' {
				continue
			}
			los := s.digits(int(u.end), d-1, 16, 4, 4, false)
			for _, lo := range los.a[:los.n] {
				if lo.v >= 0xDC00 && lo.v < 0xE000 {
					r := 0x10000 + (rune(h.v)-0xD800)<<10 + rune(lo.v) - 0xDC00
					s.emit(d, runeUnit(r, lo.end))
				}
			}
		}
	}
}
