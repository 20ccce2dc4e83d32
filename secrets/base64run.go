package secrets

import (
	"encoding/base64"
)

// Base64 text in a message.
//
// Chrome gives bodies, stream pieces, a saved page's parts and
// screenshots as base64; a page's data: URLs and a form's fields carry
// it too. A value in base64 is not found by reading characters: the lock
// decodes the base64 text it finds (from where a run of the alphabet
// starts, across the line breaks a MIME part has, JSON's \/ and a form's
// %2B, %2F and %3D), looks for values in what it decodes, every way, and
// when it replaces one there, encodes the text again as it was written.
// (A value as it is inside base64 at any alignment is also one of the
// lock's plain patterns: lock.go.)

// maxB64Depth bounds base64 within base64.
const maxB64Depth = 2

// b64run is a run of base64 text in a message.
type b64run struct {
	start, end int    // where the run is in the message, line breaks and padding included
	text       []byte // its alphabet characters, escapes read, line breaks left out, no padding
	padded     bool   // it ended with '='
	url        bool   // in the URL alphabet
	slash      bool   // '/' written as JSON's "\/"
	percent    bool   // '+', '/' and '=' written as %2B, %2F and %3D
	line       int    // characters a line, when broken into lines
	sep        string // the line break as written
}

// b64Class: 1 the standard alphabet's, 2 the URL alphabet's, 3 both's.
var b64Class = func() (t [256]uint8) {
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = 3
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = 3
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = 3
	}
	t['+'], t['/'] = 1, 1
	t['-'], t['_'] = 2, 2
	return t
}()

// nextRun returns the first run of base64 text that starts at or after
// from and decodes to at least minBytes bytes, scanning no further than
// stop.
//
// A run that long spans at least minChars bytes of the message, so it
// holds one of the bytes at every minChars-th position from from: only
// there does the scan look, and then at the run around it.
func nextRun(src []byte, from, stop, minBytes int, text []byte) (b64run, bool) {
	minChars := max((minBytes*4+2)/3, 1)
	stop = min(stop, len(src))
	for p := from; p < stop; p += minChars {
		if !inRun(src[p]) {
			continue
		}
		k := p
		for k > from && inRun(src[k-1]) {
			k--
		}
		// The runs from k on, to the one that holds p.
		for i := k; i <= p; {
			if b64Class[src[i]] == 0 {
				i++
				continue
			}
			// Most runs are words, cut short by a character no base64
			// text has: passed over without a copy.
			j := i + 1
			for j < len(src) && b64Class[src[j]] != 0 {
				j++
			}
			if j-i < minChars && (j == len(src) || !inRun(src[j])) {
				i = j
				continue
			}
			r := readRun(src, i, text[:0])
			text = r.text
			if len(r.text) >= minChars {
				return r, true
			}
			i = max(r.end, j)
		}
	}
	return b64run{}, false
}

// inRun reports whether c may be in a run of base64 text: the alphabets,
// and what escapes or breaks a run's lines.
func inRun(c byte) bool { return runBytes[c] }

var runBytes = func() (t [256]bool) {
	for c := range t {
		t[c] = b64Class[c] != 0
	}
	t['\\'], t['%'], t['\r'], t['\n'] = true, true, true, true
	return t
}()

// readRun reads the run of base64 text that starts at i.
func readRun(src []byte, i int, text []byte) b64run {
	r := b64run{start: i}
	lineStart, breaks := 0, 0
	cls := uint8(3)
	last := i // where the last character read begins
	for i < len(src) {
		c := src[i]
		if k := b64Class[c]; k != 0 {
			if k&cls == 0 {
				break // the other alphabet: not one run
			}
			cls &= k
			text, last = append(text, c), i
			i++
			continue
		}
		if c == '\\' && i+1 < len(src) && src[i+1] == '/' && cls&1 != 0 {
			cls, r.slash = 1, true
			text, last = append(text, '/'), i
			i += 2
			continue
		}
		if c == '%' && i+2 < len(src) {
			if v, ok := pctB64(src[i+1], src[i+2]); ok && (v == '=' || b64Class[v]&cls != 0) {
				if v == '=' {
					break
				}
				cls, r.percent = 1, true
				text, last = append(text, v), i
				i += 3
				continue
			}
		}
		if n, sep := lineBreak(src, i); n > 0 && i+n < len(src) && b64Class[src[i+n]] != 0 {
			// A MIME part's lines: the run goes on when they are all as long.
			w := len(text) - lineStart
			if breaks == 0 {
				r.line, r.sep = w, sep
			} else if w != r.line || sep != r.sep {
				break
			}
			breaks++
			lineStart = len(text)
			i += n
			continue
		}
		break
	}
	r.end = i
	if len(text)%4 == 1 {
		// No base64 ends so: its last character is what follows it.
		text, r.end = text[:len(text)-1], last
	}
	// Padding: as much as the text lacks of a multiple of four, no more
	// (an '=' after it may begin what follows, a quoted-printable escape).
	// All of it, or it is not padding.
	pad := (4 - len(text)%4) % 4
	end := r.end
	for k := 0; k < pad && end < len(src); k++ {
		if src[end] == '=' {
			end++
		} else if r.percent && end+2 < len(src) && src[end] == '%' && src[end+1] == '3' && (src[end+2] == 'D' || src[end+2] == 'd') {
			end += 3
		} else {
			end = -1
			break
		}
	}
	if pad > 0 && end > r.end {
		r.end, r.padded = end, true
	}
	r.url = cls == 2
	r.text = text
	return r
}

func pctB64(a, b byte) (byte, bool) {
	switch {
	case a == '2' && (b == 'B' || b == 'b'):
		return '+', true
	case a == '2' && (b == 'F' || b == 'f'):
		return '/', true
	case a == '3' && (b == 'D' || b == 'd'):
		return '=', true
	}
	return 0, false
}

// lineBreak returns the length of the line break at i (JSON-escaped or
// as it is) and how it is written.
func lineBreak(src []byte, i int) (int, string) {
	rest := src[i:]
	switch {
	case len(rest) >= 4 && string(rest[:4]) == `\r\n`:
		return 4, `\r\n`
	case len(rest) >= 2 && string(rest[:2]) == `\n`:
		return 2, `\n`
	case len(rest) >= 2 && string(rest[:2]) == "\r\n":
		return 2, "\r\n"
	case len(rest) >= 1 && rest[0] == '\n':
		return 1, "\n"
	}
	return 0, ""
}

// decode decodes the run into dst.
func (r *b64run) decode(dst []byte) ([]byte, bool) {
	text := r.text
	enc := base64.RawStdEncoding
	if r.url {
		enc = base64.RawURLEncoding
	}
	out, err := enc.AppendDecode(dst, text)
	return out, err == nil
}

// encode appends plain encoded again as the run was written.
func (r *b64run) encode(dst, plain []byte) []byte {
	enc := base64.StdEncoding
	if r.url {
		enc = base64.URLEncoding
	}
	if !r.padded {
		enc = enc.WithPadding(base64.NoPadding)
	}
	text := enc.AppendEncode(nil, plain)
	for i, c := range text {
		if r.line > 0 && i > 0 && i%r.line == 0 {
			dst = append(dst, r.sep...)
		}
		switch {
		case r.percent && c == '+':
			dst = append(dst, "%2B"...)
		case r.percent && c == '/':
			dst = append(dst, "%2F"...)
		case r.percent && c == '=':
			dst = append(dst, "%3D"...)
		case r.slash && c == '/':
			dst = append(dst, `\/`...)
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// isImage reports whether decoded base64 is a compressed image (PNG, JPEG,
// GIF, WebP): a screenshot, a screencast frame, a page's picture. Its
// bytes are pixels compressed, not text, and are not read: at several
// milliseconds a megabyte, every screenshot would pay for it.
func isImage(b []byte) bool {
	switch {
	case len(b) >= 8 && string(b[:8]) == "\x89PNG\r\n\x1a\n",
		len(b) >= 3 && b[0] == 0xFF && b[1] == 0xD8 && b[2] == 0xFF,
		len(b) >= 6 && (string(b[:6]) == "GIF87a" || string(b[:6]) == "GIF89a"),
		len(b) >= 12 && string(b[:4]) == "RIFF" && string(b[8:12]) == "WEBP":
		return true
	}
	return false
}
