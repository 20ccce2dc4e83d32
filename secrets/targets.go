package secrets

import (
	"bytes"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/encoding/korean"
	"golang.org/x/text/encoding/simplifiedchinese"
	"golang.org/x/text/encoding/traditionalchinese"
)

// A target is one byte string a value is before any escape or transfer
// encoding is applied to it: its UTF-8 bytes, its bytes in a page's
// legacy charset (a form posted from a windows-1252 page, percent-encoded
// in Latin-1), its UTF-16 bytes (a part of a saved page). The decoders of
// match.go read a message character by character, each character in
// whatever escape it comes in, and the lock looks for its targets in what
// they read.
type target struct {
	b   []byte
	ref []byte // the reference the value is shown as
	// utf8: b is the value's UTF-8, and a character an escape decodes to
	// (&#228;, \u00e4) matches the bytes of that character. In the other
	// targets a decoded character below 256 stands for a byte (how a
	// binary string shows bytes: "\u0000", "%E4").
	utf8 bool
	// chars[i] is the character that starts at b[i], or -1 where b[i] is
	// inside one or not UTF-8 (utf8 targets only).
	chars []rune
}

// legacyCharsets are the charsets of pages a browser still posts forms in
// and escapes URLs in: the single-byte windows and ISO code pages, KOI8,
// and the CJK multi-byte ones. A character a charset lacks is written as
// a decimal character reference (&#26085;), as a browser does.
var legacyCharsets = []encoding.Encoding{
	charmap.Windows1252, charmap.Windows1250, charmap.Windows1251, charmap.Windows1253,
	charmap.Windows1254, charmap.Windows1255, charmap.Windows1256, charmap.Windows1257,
	charmap.Windows1258, charmap.Windows874,
	charmap.ISO8859_2, charmap.ISO8859_3, charmap.ISO8859_4, charmap.ISO8859_5, charmap.ISO8859_6,
	charmap.ISO8859_7, charmap.ISO8859_8, charmap.ISO8859_10, charmap.ISO8859_13, charmap.ISO8859_14,
	charmap.ISO8859_15, charmap.ISO8859_16, charmap.KOI8R, charmap.KOI8U, charmap.Macintosh,
	charmap.CodePage866,
	japanese.ShiftJIS, japanese.EUCJP, korean.EUCKR, simplifiedchinese.GBK,
	simplifiedchinese.GB18030, traditionalchinese.Big5,
}

// targetsOf returns the byte strings value is, for its reference ref.
func targetsOf(value, ref []byte) []target {
	out := []target{newUTF8Target(value, ref)}
	add := func(b []byte) {
		if len(b) == 0 {
			return
		}
		for _, t := range out {
			if bytes.Equal(t.b, b) {
				return
			}
		}
		out = append(out, target{b: b, ref: ref})
	}
	if !utf8.Valid(value) {
		return out
	}
	runes := []rune(string(value))
	ascii := len(runes) == len(value)
	if !ascii {
		// Latin-1 proper (what ISO-8859-1 labels mean in a decoder that is
		// not a browser's), then every legacy charset.
		var l1 []byte
		for _, r := range runes {
			if r < 256 {
				l1 = append(l1, byte(r))
			} else {
				l1 = append(l1, "&#"+strconv.Itoa(int(r))+";"...)
			}
		}
		add(l1)
		for _, cs := range legacyCharsets {
			add(encodeLegacy(cs, runes))
		}
	}
	le, be := make([]byte, 0, 2*len(runes)), make([]byte, 0, 2*len(runes))
	for _, u := range utf16.Encode(runes) {
		le = append(le, byte(u), byte(u>>8))
		be = append(be, byte(u>>8), byte(u))
	}
	add(le)
	add(be)
	return out
}

func newUTF8Target(value, ref []byte) target {
	t := target{b: value, ref: ref, utf8: true, chars: make([]rune, len(value))}
	for i := range t.chars {
		t.chars[i] = -1
	}
	for i := 0; i < len(value); {
		r, n := utf8.DecodeRune(value[i:])
		if r != utf8.RuneError || n > 1 {
			t.chars[i] = r
		}
		i += n
	}
	return t
}

// encodeLegacy encodes runes in cs, each one it lacks as a decimal
// character reference.
func encodeLegacy(cs encoding.Encoding, runes []rune) []byte {
	enc := cs.NewEncoder()
	var out []byte
	var buf [8]byte
	for _, r := range runes {
		enc.Reset()
		n, _, err := enc.Transform(buf[:], []byte(string(r)), true)
		if err != nil || n == 0 || r != '?' && n == 1 && buf[0] == '?' || r != 0x1a && n == 1 && buf[0] == 0x1a {
			out = append(out, "&#"+strconv.Itoa(int(r))+";"...)
			continue
		}
		out = append(out, buf[:n]...)
	}
	return out
}

// advance returns where t goes on from j when the next thing a message
// holds is u: up to two places (a character that is also a byte, as in
// a binary string), or none (-1).
func (t *target) advance(j int, u *unit) (a, b int) {
	switch u.kind {
	case kByte:
		if j < len(t.b) && t.b[j] == byte(u.r[0]) {
			return j + 1, -1
		}
		return -1, -1
	case kEps:
		return j, -1
	}
	a, b = t.char(j, u.r[0])
	if u.n < 2 {
		return a, b
	}
	// A character reference for two characters (a few named ones).
	a2, b2 := -1, -1
	for _, at := range [2]int{a, b} {
		if at < 0 {
			continue
		}
		x, y := t.char(at, u.r[1])
		for _, v := range [2]int{x, y} {
			switch {
			case v < 0 || v == a2:
			case a2 < 0:
				a2 = v
			default:
				b2 = v
			}
		}
	}
	return a2, b2
}

// char returns where t goes on from j when the next character is r.
func (t *target) char(j int, r rune) (a, b int) {
	a, b = -1, -1
	if j >= len(t.b) {
		return a, b
	}
	if t.utf8 && t.chars[j] == r {
		a = j + utf8.RuneLen(r)
	}
	if r < 256 && t.b[j] == byte(r) && a != j+1 {
		if a < 0 {
			a = j + 1
		} else {
			b = j + 1
		}
	}
	return a, b
}
