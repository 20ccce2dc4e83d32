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
