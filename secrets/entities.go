package secrets

import (
	"html"
	"strings"
	"sync/atomic"
	"unicode/utf8"
)

// HTML character references by name. A page's HTML may write a character
// as &name; (any of the two thousand names HTML knows) and, for the
// names HTML inherited from Latin-1, as &name without the semicolon.
// Named references are looked up in the standard library's table
// (html.UnescapeString), and what was looked up is kept.

// legacyNames are the names HTML reads without a semicolon, packed in a
// word each (packName), in a table of their own: a message's '&' is
// looked up once for each letter of what follows it.
var legacyNames [256]uint64

// maxLegacyName is the longest of them.
const maxLegacyName = 6

// packName packs a name of up to eight bytes in a word.
func packName(name []byte) uint64 {
	var w uint64
	for _, c := range name {
		w = w<<8 | uint64(c)
	}
	return w
}

func legacySlot(w uint64) int { return int((w * 0x9E3779B97F4A7C15) >> 56) }

// isLegacyName reports whether name is one of legacyNames.
func isLegacyName(name []byte) bool {
	if len(name) < 2 || len(name) > maxLegacyName {
		return false
	}
	w := packName(name)
	for i := legacySlot(w); legacyNames[i] != 0; i = (i + 1) & 255 {
		if legacyNames[i] == w {
			return true
		}
	}
	return false
}

func init() {
	for _, n := range strings.Fields(`AElig AMP Aacute Acirc Agrave Aring Atilde Auml COPY Ccedil ETH
Eacute Ecirc Egrave Euml GT Iacute Icirc Igrave Iuml LT Ntilde Oacute Ocirc Ograve Oslash Otilde
Ouml QUOT REG THORN Uacute Ucirc Ugrave Uuml Yacute aacute acirc acute aelig agrave amp aring
atilde auml brvbar ccedil cedil cent copy curren deg divide eacute ecirc egrave eth euml frac12
frac14 frac34 gt iacute icirc iexcl igrave iquest iuml laquo lt macr micro middot nbsp not
ntilde oacute ocirc ograve ordf ordm oslash otilde ouml para plusmn pound quot raquo reg sect shy
sup1 sup2 sup3 szlig thorn times uacute ucirc ugrave uml uuml yacute yen yuml`) {
		w := packName([]byte(n))
		i := legacySlot(w)
		for legacyNames[i] != 0 {
			i = (i + 1) & 255
		}
		legacyNames[i] = w
	}
}

// maxEntityName is the longest name of a character reference.
const maxEntityName = 32

// entityValue is what a named reference stands for: one or two
// characters (n), or nothing (n == 0: no such name).
type entityValue struct {
	n uint8
	r [2]rune
}

// entityCache keeps the names looked up, by a hash of the name: a message
// names the same few again and again. A slot holds the last name that
// hashed to it; reading and filling it takes no lock.
var entityCache [1024]atomic.Pointer[cachedEntity]

type cachedEntity struct {
	key string // the name, and ";" when looked up with the semicolon
	v   entityValue
}

func entitySlot(k []byte) int {
	h := uint32(2166136261)
	for _, c := range k {
		h = (h ^ uint32(c)) * 16777619
	}
	return int(h & 1023)
}

// lookupEntity returns what &name stands for, with the semicolon when semi
// (name is then read whole) or without it (legacy names only).
func lookupEntity(name []byte, semi bool) entityValue {
	if !semi {
		if !isLegacyName(name) {
			return entityValue{}
		}
	}
	if semi {
		// The names pages use most, looked up at once.
		switch string(name) {
		case "amp":
			return entityValue{1, [2]rune{'&'}}
		case "lt":
			return entityValue{1, [2]rune{'<'}}
		case "gt":
			return entityValue{1, [2]rune{'>'}}
		case "quot":
			return entityValue{1, [2]rune{'"'}}
		case "apos":
			return entityValue{1, [2]rune{'\''}}
		case "nbsp":
			return entityValue{1, [2]rune{0xa0}}
		}
	}
	var key [maxEntityName + 1]byte
	k := append(key[:0], name...)
	if semi {
		k = append(k, ';')
	}
	slot := &entityCache[entitySlot(k)]
	if c := slot.Load(); c != nil && c.key == string(k) {
		return c.v
	}
	var v entityValue
	src := "&" + string(k)
	dec := html.UnescapeString(src)
	// A name Go reads only in part ("&notit;" is "¬it;") leaves a letter
	// and the semicolon behind, three characters at least: no reference
	// read whole is longer than two.
	if dec != src && utf8.RuneCountInString(dec) <= 2 {
		for _, r := range dec {
			v.r[v.n] = r
			v.n++
		}
	}
	slot.Store(&cachedEntity{key: string(k), v: v})
	return v
}

// reference reads an HTML character reference after its '&' at p: by
// number (&#65; &#x41; &#X41, with or without the semicolon) or by name.
func (s *scanner) reference(p, d int) {
	for _, a := range s.comps(p, d-1) {
		if a.c == '#' {
			numeric := func(from int, base uint32) {
				hs := s.digits(from, d-1, base, 1, 10, true)
				for _, h := range hs.a[:hs.n] {
					r := numericReference(h.v)
					s.emit(d, runeUnit(r, h.end))
					if r != rune(h.v) && h.v < 0x110000 {
						s.emit(d, runeUnit(rune(h.v), h.end))
					}
					for _, c := range s.comps(int(h.end), d-1) {
						if c.c == ';' {
							s.emit(d, runeUnit(r, c.end))
							if r != rune(h.v) && h.v < 0x110000 {
								s.emit(d, runeUnit(rune(h.v), c.end))
							}
						}
					}
				}
			}
			for _, x := range s.comps(int(a.end), d-1) {
				if x.c == 'x' || x.c == 'X' {
					numeric(int(x.end), 16)
				}
			}
			numeric(int(a.end), 10)
			continue
		}
		if isAlpha(a.c) {
			var name [maxEntityName]byte
			name[0] = a.c
			s.entityName(int(a.end), d, name, 1)
		}
	}
}

// numericReference is the character a numeric reference stands for, as
// HTML reads it: 0x80-0x9F as windows-1252, nothing valid as U+FFFD.
func numericReference(v uint32) rune {
	switch {
	case v == 0 || v > 0x10FFFF || v >= 0xD800 && v < 0xE000:
		return 0xFFFD
	case v >= 0x80 && v < 0xA0:
		if r := cp1252High[v-0x80]; r != 0 {
			return r
		}
	}
	return rune(v)
}

// cp1252High are windows-1252's characters at 0x80-0x9F.
var cp1252High = [32]rune{
	0x20AC, 0, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0, 0x017D, 0,
	0, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0, 0x017E, 0x0178,
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// entityName reads the rest of a reference's name, name[:n] read so far,
// from p.
func (s *scanner) entityName(p, d int, name [maxEntityName]byte, n int) {
	s.steps++
	if v := lookupEntity(name[:n], false); v.n > 0 {
		s.emit(d, unit{end: int32(p), kind: kRune, dec: true, n: v.n, r: v.r})
	}
	for _, c := range s.comps(p, d-1) {
		switch {
		case c.c == ';':
			if v := lookupEntity(name[:n], true); v.n > 0 {
				s.emit(d, unit{end: c.end, kind: kRune, dec: true, n: v.n, r: v.r})
			}
		case n < maxEntityName && (isAlpha(c.c) || c.c >= '0' && c.c <= '9'):
			name[n] = c.c
			s.entityName(int(c.end), d, name, n+1)
		}
	}
}
