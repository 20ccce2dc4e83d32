package wire

import (
	"bytes"
	"strconv"
)

// Redaction of credentials in what the relay sends a client.
//
// Chrome reports the person's session cookies and credentials in a few
// places a script in the page could never read: the Cookie, Set-Cookie and
// Authorization headers of requests and responses, the cookies associated
// with a request, the raw header text of a response. A Redactor copies a
// message's params (or a result), replacing each such value with a marker
// that keeps its length ("cdprelay-redacted:21"), so that tools that show
// headers still work and nothing of the value is left. It rewrites only
// the members it knows by name, wherever they are nested:
//
//   - "headers", "requestHeaders", "responseHeaders": a header map
//     {name: value} or a list [{name, value}] (Fetch's); the values of the
//     headers Sensitive names;
//   - "headersText", "requestHeadersText": raw "Name: value" lines, the
//     same;
//   - "cookie": a cookie object; its value;
//   - "cookies": a list of cookie objects; the values of the HttpOnly ones;
//   - "cookieLine": a raw Set-Cookie line; its value.
//
// Everything else is copied as it is. The input must be valid JSON (the
// relay's frames are validated on the way in).

// RedactedPrefix starts every marker.
const RedactedPrefix = "cdprelay-redacted:"

// Redactor rewrites credentials. Its zero value redacts nothing.
type Redactor struct {
	// Sensitive reports whether a header name (as written, any case) is a
	// credential.
	Sensitive func(name []byte) bool
	// Redacted, when set, is told of each header value replaced, decoded:
	// the relay keeps them to restore a request's headers when a client
	// sends the markers back.
	Redacted func(name, value []byte)
	// Rewrite, when set, may give a header that is not a credential
	// another value (decoded): a redirect's Location that names a page the
	// client may not see, say.
	Rewrite func(name, value []byte) (string, bool)
}

// rewritten returns the value Rewrite gives the string token tok of
// header name.
func (r *Redactor) rewritten(name, tok []byte) (string, bool) {
	if r.Rewrite == nil || len(tok) == 0 || tok[0] != '"' {
		return "", false
	}
	s, ok := unquote(tok)
	if !ok {
		return "", false
	}
	return r.Rewrite(name, s)
}

// Marker is the marker of a value of n bytes.
func Marker(n int) string { return RedactedPrefix + strconv.Itoa(n) }

// Redact appends v, rewritten, to dst.
func (r *Redactor) Redact(dst, v []byte) []byte {
	return r.value(dst, v, "")
}

// value copies v; key is the member name v is the value of ("" in an
// array or at the top).
func (r *Redactor) value(dst, v []byte, key string) []byte {
	if len(v) == 0 {
		return dst
	}
	switch v[0] {
	case '{':
		switch key {
		case "headers", "requestHeaders", "responseHeaders":
			return r.headerMap(dst, v)
		case "cookie":
			return r.cookie(dst, v, true)
		}
		return r.object(dst, v)
	case '[':
		switch key {
		case "headers", "requestHeaders", "responseHeaders":
			return r.headerList(dst, v)
		case "cookies":
			return r.array(dst, v, "cookies")
		}
		return r.array(dst, v, "")
	case '"':
		switch key {
		case "headersText", "requestHeadersText":
			return r.headerText(dst, v)
		case "cookieLine":
			return r.cookieLine(dst, v)
		}
	}
	return append(dst, v...)
}

func (r *Redactor) object(dst, v []byte) []byte {
	it, _ := newMembers(v)
	dst = append(dst, '{')
	first := true
	for {
		k, esc, val, ok := it.next()
		if !ok {
			break
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = appendKey(dst, k)
		name := k
		if esc {
			name = decodeEscaped(k)
		}
		dst = r.value(dst, val, string(name))
	}
	return append(dst, '}')
}

func (r *Redactor) array(dst, v []byte, of string) []byte {
	it, _ := newElements(v)
	dst = append(dst, '[')
	first := true
	for {
		el, ok := it.next()
		if !ok {
			break
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		if of == "cookies" && len(el) > 0 && el[0] == '{' {
			dst = r.cookie(dst, el, false)
			continue
		}
		dst = r.value(dst, el, "")
	}
	return append(dst, ']')
}

func appendKey(dst, raw []byte) []byte {
	dst = append(dst, '"')
	dst = append(dst, raw...)
	return append(dst, '"', ':')
}

func (r *Redactor) sensitive(name []byte) bool {
	return r.Sensitive != nil && r.Sensitive(name)
}

// marker appends the marker of the string token tok, telling Redacted of
// it under name.
func (r *Redactor) marker(dst, name, tok []byte) []byte {
	s, ok := unquote(tok)
	if !ok {
		return append(dst, `""`...)
	}
	if r.Redacted != nil {
		r.Redacted(name, s)
	}
	dst = append(dst, '"')
	dst = append(dst, Marker(len(s))...)
	return append(dst, '"')
}

// headerMap rewrites {name: value}.
func (r *Redactor) headerMap(dst, v []byte) []byte {
	it, _ := newMembers(v)
	dst = append(dst, '{')
	first := true
	for {
		k, esc, val, ok := it.next()
		if !ok {
			break
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = appendKey(dst, k)
		name := k
		if esc {
			name = decodeEscaped(k)
		}
		if len(val) > 0 && val[0] == '"' && r.sensitive(name) {
			dst = r.marker(dst, name, val)
			continue
		}
		if nv, ok := r.rewritten(name, val); ok {
			dst = appendString(dst, []byte(nv))
			continue
		}
		dst = append(dst, val...)
	}
	return append(dst, '}')
}

// headerList rewrites [{name, value}].
func (r *Redactor) headerList(dst, v []byte) []byte {
	it, _ := newElements(v)
	dst = append(dst, '[')
	first := true
	for {
		el, ok := it.next()
		if !ok {
			break
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		name := StringField(el, "name")
		if len(el) == 0 || el[0] != '{' || name == nil {
			dst = append(dst, el...)
			continue
		}
		sensitive := r.sensitive(name)
		nv, rewrite := "", false
		if !sensitive {
			if nv, rewrite = r.rewritten(name, Field(el, "value")); !rewrite {
				dst = append(dst, el...)
				continue
			}
		}
		mi, _ := newMembers(el)
		dst = append(dst, '{')
		f := true
		for {
			k, esc, val, ok := mi.next()
			if !ok {
				break
			}
			if !f {
				dst = append(dst, ',')
			}
			f = false
			dst = appendKey(dst, k)
			kn := k
			if esc {
				kn = decodeEscaped(k)
			}
			if string(kn) == "value" && len(val) > 0 && val[0] == '"' {
				if rewrite {
					dst = appendString(dst, []byte(nv))
				} else {
					dst = r.marker(dst, name, val)
				}
				continue
			}
			dst = append(dst, val...)
		}
		dst = append(dst, '}')
	}
	return append(dst, ']')
}

// cookie rewrites a cookie object's value: always, or only when it is
// HttpOnly.
func (r *Redactor) cookie(dst, v []byte, always bool) []byte {
	if !always && string(Field(v, "httpOnly")) != "true" {
		return r.object(dst, v)
	}
	it, _ := newMembers(v)
	dst = append(dst, '{')
	first := true
	for {
		k, esc, val, ok := it.next()
		if !ok {
			break
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = appendKey(dst, k)
		kn := k
		if esc {
			kn = decodeEscaped(k)
		}
		if string(kn) == "value" && len(val) > 0 && val[0] == '"' {
			s, _ := unquote(val)
			dst = append(dst, '"')
			dst = append(dst, Marker(len(s))...)
			dst = append(dst, '"')
			continue
		}
		dst = r.value(dst, val, string(kn))
	}
	return append(dst, '}')
}

// headerText rewrites raw "Name: value" lines.
func (r *Redactor) headerText(dst, tok []byte) []byte {
	s, ok := unquote(tok)
	if !ok {
		return append(dst, tok...)
	}
	var out []byte
	changed := false
	for len(s) > 0 {
		line := s
		nl := bytes.IndexByte(s, '\n')
		if nl >= 0 {
			line, s = s[:nl+1], s[nl+1:]
		} else {
			s = nil
		}
		body := bytes.TrimRight(line, "\r\n")
		if c := bytes.IndexByte(body, ':'); c > 0 && r.sensitive(bytes.TrimSpace(body[:c])) {
			val := bytes.TrimSpace(body[c+1:])
			out = append(out, body[:c+1]...)
			out = append(out, ' ')
			out = append(out, Marker(len(val))...)
			out = append(out, line[len(body):]...)
			changed = true
			continue
		} else if c > 0 && r.Rewrite != nil {
			if nv, ok := r.Rewrite(bytes.TrimSpace(body[:c]), bytes.TrimSpace(body[c+1:])); ok {
				out = append(out, body[:c+1]...)
				out = append(out, ' ')
				out = append(out, nv...)
				out = append(out, line[len(body):]...)
				changed = true
				continue
			}
		}
		out = append(out, line...)
	}
	if !changed {
		return append(dst, tok...)
	}
	return appendString(dst, out)
}

// cookieLine rewrites "name=value; attributes".
func (r *Redactor) cookieLine(dst, tok []byte) []byte {
	s, ok := unquote(tok)
	if !ok {
		return append(dst, tok...)
	}
	eq := bytes.IndexByte(s, '=')
	if eq < 0 {
		return append(dst, `"`+Marker(len(s))+`"`...)
	}
	end := bytes.IndexByte(s[eq:], ';')
	if end < 0 {
		end = len(s) - eq
	}
	out := append([]byte(nil), s[:eq+1]...)
	out = append(out, Marker(end-1)...)
	out = append(out, s[eq+end:]...)
	return appendString(dst, out)
}
