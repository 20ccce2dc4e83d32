package secrets

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/japanese"
)

// The encoder of the tests: it writes a value the ways pages and Chrome
// write text, each character in an escape picked at random (or as told),
// escapes within escapes, and the whole in the layers a message wraps
// text in. It is written from the formats' own rules, not from the lock's
// decoders.

// charset is how a value is turned into bytes before any byte escape.
type charset int

const (
	csUTF8 charset = iota
	cs1252
	csUTF16LE
	csUTF16BE
	csShiftJIS
	numCharsets
)

// bytesOf is r's bytes in cs, and whether cs has it (a legacy charset
// writes one it lacks as &#N;, which the caller does).
func bytesOf(cs charset, r rune) ([]byte, bool) {
	switch cs {
	case csUTF8:
		return []byte(string(r)), true
	case csUTF16LE, csUTF16BE:
		var out []byte
		for _, u := range utf16.Encode([]rune{r}) {
			if cs == csUTF16LE {
				out = append(out, byte(u), byte(u>>8))
			} else {
				out = append(out, byte(u>>8), byte(u))
			}
		}
		return out, true
	case cs1252:
		if r < 0x80 {
			return []byte{byte(r)}, true
		}
		b, err := charmap.Windows1252.NewEncoder().Bytes([]byte(string(r)))
		return b, err == nil && len(b) == 1 && !(b[0] == 0x1a && r != 0x1a)
	case csShiftJIS:
		if r < 0x80 {
			return []byte{byte(r)}, true
		}
		b, err := japanese.ShiftJIS.NewEncoder().Bytes([]byte(string(r)))
		return b, err == nil
	}
	return nil, false
}

// escape is one way to write a character (or a byte).
type escape int

const (
	escLiteral escape = iota
	escEntityDec
	escEntityHex
	escEntityName
	escJSU
	escJSX
	escJSBrace
	escJSIdentity
	escCSS
	escPercent
	escPercentU
	escQP
	escPlus
	numEscapes
)

var escapeNames = [...]string{"literal", "&#N;", "&#xN;", "&name;", `\uXXXX`, `\xXX`, `\u{X}`, `\c`, `\X `, "%XX", "%uXXXX", "=XX", "+"}

func (e escape) String() string { return escapeNames[e] }

// names are named references the encoder knows, as HTML reads them.
var names = map[rune][]string{
	'&': {"amp", "AMP"}, '<': {"lt", "LT"}, '>': {"gt", "GT"}, '"': {"quot", "QUOT"},
	'\'': {"apos;"}, 0xa0: {"nbsp"}, 0xe4: {"auml"}, 0xf6: {"ouml"}, 0xe9: {"eacute"},
	'!': {"excl;"}, '#': {"num;"}, '$': {"dollar;"}, '%': {"percnt;"}, '(': {"lpar;"},
	')': {"rpar;"}, '*': {"ast;"}, '+': {"plus;"}, ',': {"comma;"}, '.': {"period;"},
	'/': {"sol;"}, ':': {"colon;"}, ';': {"semi;"}, '=': {"equals;"}, '?': {"quest;"},
	'@': {"commat;"}, '[': {"lsqb;"}, '\\': {"bsol;"}, ']': {"rsqb;"}, '^': {"Hat;"},
	'_': {"lowbar;"}, '`': {"grave;"}, '{': {"lcub;"}, '|': {"verbar;"}, '}': {"rcub;"},
	0xa9: {"copy"}, 0xdf: {"szlig"}, 0x20ac: {"euro;"},
}

// TestEncoderNames: the encoder's names are HTML's (by the standard
// library's table), and those without a semicolon are HTML's legacy ones.
func TestEncoderNames(t *testing.T) {
	for r, ns := range names {
		for _, n := range ns {
			if got := html.UnescapeString("&" + strings.TrimSuffix(n, ";") + ";"); got != string(r) {
				t.Errorf("&%s; is %q, not %q", n, got, r)
			}
			if !strings.HasSuffix(n, ";") && !isLegacyName([]byte(n)) {
				t.Errorf("%s is not read without its semicolon", n)
			}
		}
	}
	for i, w := range legacyNames {
		if w == 0 {
			continue
		}
		var b []byte
		for ; w != 0; w >>= 8 {
			b = append([]byte{byte(w)}, b...)
		}
		if got := html.UnescapeString("&" + string(b)); utf8.RuneCountInString(got) != 1 {
			t.Errorf("legacy name %d, %s, reads as %q without its semicolon", i, b, got)
		}
	}
}

// isHexDigit reports whether c is one.
func isHexDigit(c byte) bool {
	_, ok := digitVal(c, 16)
	return ok
}

// escapeRune writes r with e, rand choosing the details; ok is false
// when e cannot write r (the caller picks another).
func escapeRune(rng *rand.Rand, e escape, r, next rune) (string, bool) {
	upper := rng.IntN(2) == 0
	hexs := func(v uint32, width int) string {
		s := strconv.FormatUint(uint64(v), 16)
		for len(s) < width {
			s = "0" + s
		}
		if upper {
			s = strings.ToUpper(s)
		}
		return s
	}
	// A numeric reference without its semicolon reads on through the
	// digits after it (&#114 and a 2 are &#1142): HTML needs the
	// semicolon there.
	semi := rng.IntN(3) > 0 || next < 0 || next < 0x80 && (isAlpha(byte(next)) || next >= '0' && next <= '9' || next == ';')
	zeros := strings.Repeat("0", rng.IntN(3))
	switch e {
	case escLiteral:
		return string(r), true
	case escEntityDec:
		if r == 0 || r >= 0x80 && r < 0xa0 {
			return "", false // HTML reads these as other characters
		}
		s := "&#" + zeros + strconv.Itoa(int(r))
		if semi {
			s += ";"
		}
		return s, true
	case escEntityHex:
		if r == 0 || r >= 0x80 && r < 0xa0 {
			return "", false
		}
		x := "x"
		if rng.IntN(2) == 0 {
			x = "X"
		}
		s := "&#" + x + zeros + hexs(uint32(r), 1)
		if semi {
			s += ";"
		}
		return s, true
	case escEntityName:
		ns := names[r]
		if len(ns) == 0 {
			return "", false
		}
		n := ns[rng.IntN(len(ns))]
		if !strings.HasSuffix(n, ";") && semi {
			n += ";"
		}
		return "&" + n, true
	case escJSU:
		var s string
		for _, u := range utf16.Encode([]rune{r}) {
			s += `\u` + hexs(uint32(u), 4)
		}
		return s, true
	case escJSX:
		if r > 0xff {
			return "", false
		}
		return `\x` + hexs(uint32(r), 2), true
	case escJSBrace:
		return `\u{` + zeros + hexs(uint32(r), 1) + "}", true
	case escJSIdentity:
		// Script escapes punctuation so (\" \' \/ \\), not letters.
		if r >= 0x80 || isHexDigit(byte(r)) || strings.ContainsRune("bfnrtvux0123456789\n\r", r) || r < 0x20 {
			return "", false
		}
		return `\` + string(r), true
	case escCSS:
		if r == 0 || r >= 0xD800 && r < 0xE000 {
			return "", false
		}
		// Always with the one space after, which a character that follows
		// may need.
		return `\` + zeros[:min(len(zeros), 6-len(hexs(uint32(r), 1)))] + hexs(uint32(r), 1) + " ", true
	case escPercentU:
		if r > 0xffff {
			return "", false
		}
		return "%u" + hexs(uint32(r), 4), true
	case escPlus:
		if r != ' ' {
			return "", false
		}
		return "+", true
	}
	return "", false
}

// escapeByte writes byte b with e (a percent or quoted-printable escape).
func escapeByte(rng *rand.Rand, e escape, b byte) (string, bool) {
	h := fmt.Sprintf("%02X", b)
	if rng.IntN(2) == 0 && e == escPercent {
		h = strings.ToLower(h)
	}
	switch e {
	case escPercent:
		return "%" + h, true
	case escQP:
		return "=" + h, true
	}
	return "", false
}

// encoding is how a value is written: its charset, the escapes its
// characters may be in (nil: any), and how deep escapes may nest.
type textEncoding struct {
	cs      charset
	escapes []escape
	depth   int // escapes within escapes, 1 or more
}

// encodeValue writes value as enc says, each character in a random escape
// (and, deeper, the escape's own characters too).
func encodeValue(rng *rand.Rand, enc textEncoding, value string) string {
	var b strings.Builder
	runes := []rune(value)
	for i, r := range runes {
		// What is written next, as far as a reference without its
		// semicolon cares: the next character, or in a charset of bytes
		// its first byte.
		next := rune(-1)
		if i+1 < len(runes) {
			next = runes[i+1]
			if nb, ok := bytesOf(enc.cs, next); enc.cs != csUTF8 && ok && len(nb) > 0 && nb[0] < 0x80 {
				next = rune(nb[0])
			} else if enc.cs != csUTF8 {
				next = -1
			}
		}
		bs, ok := bytesOf(enc.cs, r)
		if !ok {
			// A legacy charset's form: the character as a reference.
			ref := "&#" + strconv.Itoa(int(r)) + ";"
			for k, c := range ref {
				nc := rune(-1)
				if k+1 < len(ref) {
					nc = rune(ref[k+1])
				}
				if enc.depth < 2 {
					// The reference is an escape deep already.
					b.WriteRune(c)
					continue
				}
				b.WriteString(encodeChar(rng, enc, csUTF8, c, nc, []byte{byte(c)}, enc.depth-1))
			}
			continue
		}
		b.WriteString(encodeChar(rng, enc, enc.cs, r, next, bs, enc.depth))
	}
	return b.String()
}

// encodeChar writes character r, whose bytes in cs are bs.
func encodeChar(rng *rand.Rand, enc textEncoding, cs charset, r, next rune, bs []byte, depth int) string {
	pick := func() escape {
		if len(enc.escapes) > 0 {
			return enc.escapes[rng.IntN(len(enc.escapes))]
		}
		return escape(rng.IntN(int(numEscapes)))
	}
	// A character whose bytes are its characters (UTF-8, or ASCII in a
	// legacy charset) may be written by any escape; otherwise by byte
	// escapes only, or, for the bytes below 0x80 of UTF-16, each byte as
	// a character.
	asChar := cs == csUTF8 || len(bs) == 1 && bs[0] < 0x80 && r < 0x80
	for try := 0; try < 8; try++ {
		e := pick()
		var out string
		ok := false
		switch {
		case e == escPercent || e == escQP:
			var sb strings.Builder
			for _, c := range bs {
				s, _ := escapeByte(rng, e, c)
				sb.WriteString(s)
			}
			out, ok = sb.String(), true
		case asChar:
			out, ok = escapeRune(rng, e, r, next)
		default:
			// Bytes as characters: U+0000-U+00FF, each a byte.
			var sb strings.Builder
			ok = true
			for _, c := range bs {
				if c == 0 || c >= 0x80 {
					s, good := escapeRune(rng, e, rune(c), -1)
					if !good || e == escLiteral || e == escEntityDec || e == escEntityHex {
						// HTML does not read &#0; as a NUL: a byte escape.
						s, _ = escapeByte(rng, escPercent, c)
					}
					sb.WriteString(s)
					continue
				}
				sb.WriteByte(c)
			}
			out = sb.String()
		}
		if !ok {
			continue
		}
		if depth > 1 && e != escLiteral && rng.IntN(2) == 0 {
			// The escape's own characters, escaped in turn.
			var sb strings.Builder
			rs := []rune(out)
			for k, c := range rs {
				nc := next
				if k+1 < len(rs) {
					nc = rs[k+1]
				}
				if c < 0x80 {
					sb.WriteString(encodeChar(rng, enc, csUTF8, c, nc, []byte{byte(c)}, depth-1))
				} else {
					sb.WriteRune(c)
				}
			}
			out = sb.String()
		}
		if len(jsonString(out, 2)) > maxUnit {
			continue // longer than the lock reads one character, in JSON
		}
		return out
	}
	if cs == csUTF8 || asChar {
		return string(r)
	}
	var sb strings.Builder
	for _, c := range bs {
		s, _ := escapeByte(rng, escPercent, c)
		sb.WriteString(s)
	}
	return sb.String()
}

// quotedPrintable writes s quoted-printable as a saved page's part is: '=' and
// bytes past ASCII escaped, and a soft line break after some of its units
// (an escape is one unit).
func quotedPrintable(rng *rand.Rand, s string, every int) string {
	var b strings.Builder
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '=' || c >= 0x80 || c < 0x20 && c != '\t' {
			fmt.Fprintf(&b, "=%02X", c)
		} else {
			b.WriteByte(c)
		}
		if n++; every > 0 && n >= every && rng.IntN(every) == 0 {
			n = 0
			b.WriteString("=\r\n")
		}
	}
	return b.String()
}

// mimeBase64 writes b as base64 in lines of width characters (0: one
// line).
func mimeBase64(b []byte, enc *base64.Encoding, width int) string {
	s := enc.EncodeToString(b)
	if width <= 0 {
		return s
	}
	var out strings.Builder
	for i := 0; i < len(s); i += width {
		if i > 0 {
			out.WriteString("\r\n")
		}
		out.WriteString(s[i:min(len(s), i+width)])
	}
	return out.String()
}

// jsonString writes s as a JSON string's content, one of the three ways
// JSON writers do: JSON.stringify's (Chrome, our extension), Go's (HTML
// characters as \u0026), or ASCII only.
func jsonString(s string, style int) string {
	switch style {
	case 1:
		b, _ := json.Marshal(s)
		return string(b[1 : len(b)-1])
	case 2:
		return jsonEscape(s, true)
	}
	return jsonEscape(s, false)
}

// validUTF8 replaces what is not UTF-8 in s (a JSON message is UTF-8).
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
