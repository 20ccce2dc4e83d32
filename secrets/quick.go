package secrets

// The quick look at a marker. Most markers of a message begin nothing a
// value could be in: a URL's '&' and '=' between names and values, a
// page's &amp; and &nbsp;, a JSON message's \" and \n, a percent escape of a
// character no value has. quickSkip tells those from the rest by reading
// the few characters of the escape that follows, without the decoders'
// bookkeeping, and only when none of those characters may itself be
// escaped (a marker): then what the decoders would read there is what is
// read here. What an escape there stands for is looked up in the lock's
// index; a character that begins another escape (&amp; is a '&') is read
// on, once more, as the decoders would.

// jsonSimple are the characters JSON's two-character escapes stand for,
// by their second character, but the backslash's own.
var jsonSimple = [256]rune{'"': '"', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// interesting reports whether character r, read from an escape, is one a
// value holds, or begins another escape.
func (l *Lock) interesting(r rune) bool {
	if r < 0 {
		return false
	}
	if r < 256 && len(l.byByte[r]) > 0 || r < 128 && isMarker[r] {
		return true
	}
	return r >= 128 && len(l.byRune[r]) > 0
}

// char reads the character at i before any escape of the content, for the
// syntax of an escape: its ASCII value and end, or ok false when it may
// stand for another character (a marker), or nothing is there.
func (s *scanner) char(i int) (c byte, end int, ok bool) {
	if i >= len(s.src) {
		return 0, i, false
	}
	c = s.src[i]
	if !isMarker[c] {
		if c >= 0x80 {
			return 0, i + 1, true // past ASCII: no escape's syntax
		}
		return c, i + 1, true
	}
	b := s.base(i)
	if opens(&b) || b.kind != kRune || b.r[0] >= 0x80 {
		return 0, i, false
	}
	return byte(b.r[0]), int(b.end), true
}

// quickSkip reports whether nothing read at marker m can be part of a
// value; false when it cannot tell at a glance.
func (s *scanner) quickSkip(m int) bool {
	src := s.src
	if s.json && src[m] == '\\' && m+1 < len(src) {
		// The escapes of a JSON message's own, most of them \" and \n.
		if r := jsonSimple[src[m+1]]; r != 0 {
			return !s.l.interesting(r)
		}
	}
	b := s.base(m)
	if !opens(&b) {
		// A JSON escape, one way only: \" is a quote.
		return !b.dec || b.kind != kRune || b.n != 1 || !s.l.interesting(b.r[0])
	}
	if b.dec && len(s.l.byByte[b.r[0]]) > 0 {
		return false // a JSON escape of a character a value holds (\\)
	}
	return s.quickAt(byte(b.r[0]), int(b.end), true)
}

// quickAt is quickSkip for the escape character c whose syntax begins at
// i; deep: the escape may be one within another (read on once more).
func (s *scanner) quickAt(c byte, i int, deep bool) bool {
	l := s.l
	// value settles a character v, read from an escape ending at end.
	value := func(v rune, end int) bool {
		if v >= 0 && v < 128 && isMarker[v] {
			if len(l.byByte[v]) > 0 {
				return false // a value holds the character itself
			}
			// It begins another escape, unless escapes are as deep as
			// they are read already.
			return !deep || s.quickAt(byte(v), end, false)
		}
		return !l.interesting(v)
	}
	switch c {
	case '+':
		return !l.interesting(' ')
	case '=', '%':
		x, e1, ok1 := s.char(i)
		if !ok1 {
			return i >= len(s.src)
		}
		if c == '=' && (x == ' ' || x == '\t' || x == '\r' || x == '\n') {
			return false // a soft line break
		}
		if c == '%' && (x == 'u' || x == 'U') {
			v, end, ok := s.quickHex(e1, 4)
			if !ok {
				return false
			}
			if v >= 0 && !value(v, end) {
				return false
			}
		}
		v, end, ok := s.quickHexFrom(x, e1, 1)
		if !ok {
			return false
		}
		return v < 0 || value(v, end)
	case '&':
		return s.quickReference(i, value)
	case '\\':
		return s.quickBackslash(i, value)
	}
	return false
}

// quickHex reads n hex digits at i: the number (or -1: not n digits there)
// and where they end; ok false when a marker is among them.
func (s *scanner) quickHex(i, n int) (v rune, end int, ok bool) {
	for k := 0; k < n; k++ {
		c, e, good := s.char(i)
		if !good {
			if i >= len(s.src) || s.src[i] == '&' && i+1 < len(s.src) && isAlpha(s.src[i+1]) {
				// The end, or a reference by name, which stands for no
				// hex digit: a URL's "=2&sort".
				return -1, i, true
			}
			return 0, i, false
		}
		x, isHex := digitVal(c, 16)
		if !isHex {
			return -1, i, true
		}
		v, i = v<<4|rune(x), e
	}
	return v, i, true
}

// quickHexFrom is quickHex with the first digit, x, read already.
func (s *scanner) quickHexFrom(x byte, i, n int) (v rune, end int, ok bool) {
	a, isHex := digitVal(x, 16)
	if !isHex {
		return -1, i, true
	}
	w, end, ok := s.quickHex(i, n)
	if !ok || w < 0 {
		return w, end, ok
	}
	return rune(a)<<(4*n) | w, end, true
}

// quickReference is quickAt for a '&'.
func (s *scanner) quickReference(i int, value func(rune, int) bool) bool {
	c, e, ok := s.char(i)
	if !ok {
		return i >= len(s.src)
	}
	if c == '#' {
		base := uint32(10)
		if x, e2, ok := s.char(e); !ok {
			return false
		} else if x == 'x' || x == 'X' {
			base, e = 16, e2
		}
		var v uint32
		n := 0
		for ; n < 10; n++ {
			d, e2, ok := s.char(e)
			if !ok {
				if e >= len(s.src) {
					break
				}
				return false // a digit may go on escaped
			}
			x, isDigit := digitVal(d, base)
			if !isDigit {
				break
			}
			v, e = min(v*base+x, 0x110000), e2
		}
		if n == 0 {
			return true
		}
		if n == 10 {
			return false
		}
		ends := [2]int{e, -1}
		if d, e2, ok := s.char(e); ok && d == ';' {
			ends[1] = e2
		} else if !ok && e < len(s.src) {
			return false // an escaped semicolon
		}
		r := numericReference(v)
		for _, end := range ends {
			if end < 0 {
				continue
			}
			if !value(r, end) || r != rune(v) && v < 0x110000 && !value(rune(v), end) {
				return false
			}
		}
		return true
	}
	if !isAlpha(c) {
		return true
	}
	var name [maxEntityName]byte
	n := 0
	for {
		name[n] = c
		n++
		i = e
		if v := lookupEntity(name[:n], false); v.n > 0 && (!value(v.r[0], i) || v.n == 2 && !value(v.r[1], i)) {
			return false
		}
		if n == maxEntityName {
			return false
		}
		c, e, ok = s.char(i)
		if !ok {
			switch {
			case i >= len(s.src), s.src[i] == '+':
				return true
			case s.src[i] == '=' || s.src[i] == '%':
				// The name goes on only through an escaped letter, digit
				// or semicolon, or a soft line break (&sort=desc ends).
				x, e1, ok := s.char(i + 1)
				if !ok || s.src[i] == '=' && (x == ' ' || x == '\t' || x == '\r' || x == '\n') {
					return false
				}
				v, _, ok := s.quickHexFrom(x, e1, 1)
				return ok && !(v >= 0 && v < 128 && (isAlpha(byte(v)) || v >= '0' && v <= '9' || v == ';'))
			}
			return false // an escaped letter, digit or semicolon may follow
		}
		switch {
		case c == ';':
			if v := lookupEntity(name[:n], true); v.n > 0 && (!value(v.r[0], e) || v.n == 2 && !value(v.r[1], e)) {
				return false
			}
			return true
		case isAlpha(c) || c >= '0' && c <= '9':
			continue
		}
		return true
	}
}

// quickBackslash is quickAt for a backslash of the content (script's and
// style sheets' escapes).
func (s *scanner) quickBackslash(i int, value func(rune, int) bool) bool {
	c, e, ok := s.char(i)
	if !ok {
		return i >= len(s.src)
	}
	if _, hex := digitVal(c, 16); hex {
		return false // CSS's escapes, of up to six digits (\f6 is an ö)
	}
	switch c {
	case 'u':
		if x, _, ok := s.char(e); !ok || x == '{' {
			return false
		}
		v, end, ok := s.quickHex(e, 4)
		if !ok || v >= 0xD800 && v < 0xDC00 {
			return false
		}
		return v < 0 || value(v, end)
	case 'x':
		v, end, ok := s.quickHex(e, 2)
		if !ok {
			return false
		}
		return v < 0 || value(v, end)
	case '\r', '\n':
		return false // a line continuation
	case 'n':
		return value('\n', e)
	case 'r':
		return value('\r', e)
	case 't':
		return value('\t', e)
	case 'v':
		return value('\v', e)
	}
	return value(rune(c), e)
}
