package wire

import (
	"bytes"
	"unicode/utf8"
)

// A token's value: an id read as an integer, a string token unquoted.

// parseInt reads a JSON number span as an int64; it refuses fractions,
// exponents and anything outside the range exactly representable in a
// JavaScript number, because ids travel through JavaScript on the way.
// It reads the digits itself: strconv would also take "+1" and "007",
// which are not JSON, through the exported Int, and allocates a
// *NumError for every id it refuses.
func parseInt(v []byte) (int64, bool) {
	d := v
	neg := len(d) > 0 && d[0] == '-'
	if neg {
		d = d[1:]
	}
	// 16 digits hold every safe integer and cannot overflow an int64.
	if len(d) == 0 || len(d) > 16 || d[0] == '0' && len(d) > 1 {
		return 0, false
	}
	var n int64
	for _, c := range d {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if n > maxSafeInt {
		return 0, false
	}
	if neg {
		n = -n
	}
	return n, true
}

const maxSafeInt = 1<<53 - 1

// unquote returns the content of a valid JSON string token. Strings without
// escapes come back as a subslice; the rest are decoded into a new slice.
func unquote(tok []byte) ([]byte, bool) {
	if len(tok) < 2 || tok[0] != '"' || tok[len(tok)-1] != '"' {
		return nil, false
	}
	inner := tok[1 : len(tok)-1]
	if bytes.IndexByte(inner, '\\') >= 0 {
		return decodeEscaped(inner), true
	}
	return inner, true
}

// decodeEscaped decodes the inside of a string token that skipString has
// accepted; it does not check escapes again.
func decodeEscaped(s []byte) []byte {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		i++
		switch s[i] {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r := rune(hexVal(s[i+1 : i+5]))
			i += 4
			if utf16IsHigh(r) && i+6 < len(s) && s[i+1] == '\\' && s[i+2] == 'u' {
				lo := rune(hexVal(s[i+3 : i+7]))
				if utf16IsLow(lo) {
					r = (r-0xD800)<<10 + (lo - 0xDC00) + 0x10000
					i += 6
				}
			}
			if r >= 0xD800 && r <= 0xDFFF {
				r = utf8.RuneError
			}
			out = utf8.AppendRune(out, r)
		default: // '"', '\\', '/'
			out = append(out, s[i])
		}
	}
	return out
}

func utf16IsHigh(r rune) bool { return r >= 0xD800 && r < 0xDC00 }
func utf16IsLow(r rune) bool  { return r >= 0xDC00 && r < 0xE000 }

func hexVal(h []byte) int {
	v := 0
	for _, c := range h {
		v <<= 4
		switch {
		case '0' <= c && c <= '9':
			v |= int(c - '0')
		case 'a' <= c && c <= 'f':
			v |= int(c-'a') + 10
		default:
			v |= int(c-'A') + 10
		}
	}
	return v
}
