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
// with a request, the raw header text of a response, and what an Audits
// issue quotes of them. A Redactor copies a message's params (or a
// result), replacing each such value with a marker that keeps its length
// ("cdprelay-redacted:21"), so that tools that show headers still work and
// nothing of the value is left. It rewrites only the members it knows by
// name, wherever they are nested:
//
//   - "headers", "requestHeaders", "responseHeaders": a header map
//     {name: value} or a list [{name, value}] (Fetch's); the values of the
//     headers Sensitive names;
//   - "headersText", "requestHeadersText": raw "Name: value" lines, the
//     same;
//   - "cookie": a cookie object; its value;
//   - "cookies": a list of cookie objects; the values of the HttpOnly ones;
//   - "cookieLine", "rawCookieLine": a raw Set-Cookie line (Network's
//     blocked cookies, an Audits cookie issue); the value of its cookie
//     and of any pair in it that is not a cookie attribute;
//   - "signatureBase": an HTTP message signature base (RFC 9421), which
//     an Audits issue quotes and which may cover any header of the
//     response or, with ";req", of the request; the values of the
//     components Sensitive names.
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
	// Redacted, when set, is told of each header value replaced, decoded,
	// with the member the headers were in ("headers", "requestHeaders",
	// "responseHeaders"): the relay keeps them to restore a paused
	// request's headers, or its response's, when a client sends the
	// markers back, and a request's must not pass for its response's.
	Redacted func(field, name, value []byte)
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

// rewriteText returns the value Rewrite gives header name's value val, in
// raw header text.
func (r *Redactor) rewriteText(name, val []byte) (string, bool) {
	if r.Rewrite == nil {
		return "", false
	}
	return r.Rewrite(name, val)
}

// Marker is the marker of a value of n bytes.
func Marker(n int) string { return RedactedPrefix + strconv.Itoa(n) }

// Redact appends v, rewritten, to dst.
func (r *Redactor) Redact(dst, v []byte) []byte {
	return r.value(dst, v, nil)
}

// value copies v; key is the member name v is the value of (nil in an
// array or at the top).
func (r *Redactor) value(dst, v, key []byte) []byte {
	if len(v) == 0 {
		return dst
	}
	switch v[0] {
	case '{':
		switch string(key) {
		case "headers", "requestHeaders", "responseHeaders":
			return r.headerMap(dst, v, key)
		case "cookie":
			return r.cookie(dst, v, true)
		}
		return r.object(dst, v)
	case '[':
		switch string(key) {
		case "headers", "requestHeaders", "responseHeaders":
			return r.headerList(dst, v, key)
		case "cookies":
			return r.array(dst, v, "cookies")
		}
		return r.array(dst, v, "")
	case '"':
		switch string(key) {
		case "headersText", "requestHeadersText":
			return r.headerText(dst, v)
		case "cookieLine", "rawCookieLine":
			return r.cookieLine(dst, v)
		case "signatureBase":
			return r.signatureBase(dst, v)
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
		dst = r.value(dst, val, name)
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
		dst = r.value(dst, el, nil)
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
// it under name, in the headers of member field.
func (r *Redactor) marker(dst, field, name, tok []byte) []byte {
	s, ok := unquote(tok)
	if !ok {
		return append(dst, `""`...)
	}
	if r.Redacted != nil {
		r.Redacted(field, name, s)
	}
	dst = append(dst, '"')
	dst = append(dst, Marker(len(s))...)
	return append(dst, '"')
}

// headerMap rewrites {name: value}, the value of member field.
func (r *Redactor) headerMap(dst, v, field []byte) []byte {
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
			dst = r.marker(dst, field, name, val)
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

// headerList rewrites [{name, value}], the value of member field.
func (r *Redactor) headerList(dst, v, field []byte) []byte {
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
					dst = r.marker(dst, field, name, val)
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
		dst = r.value(dst, val, kn)
	}
	return append(dst, '}')
}

// headerText rewrites raw "Name: value" lines.
func (r *Redactor) headerText(dst, tok []byte) []byte {
	return rewriteLines(dst, tok, func(out, body []byte) ([]byte, bool) {
		c := bytes.IndexByte(body, ':')
		if c <= 0 {
			return out, false
		}
		name, val := bytes.TrimSpace(body[:c]), bytes.TrimSpace(body[c+1:])
		var nv string
		if r.sensitive(name) {
			nv = Marker(len(val))
		} else if v, ok := r.rewriteText(name, val); ok {
			nv = v
		} else {
			return out, false
		}
		out = append(out, body[:c+1]...)
		out = append(out, ' ')
		return append(out, nv...), true
	})
}

// rewriteLines rewrites a JSON string of text lines: line gets each
// line's body (without its line end), appends its rewrite to out and
// reports whether it changed it. A string no line of which changed goes
// out as it came; one that cannot be read goes out empty.
func rewriteLines(dst, tok []byte, line func(out, body []byte) ([]byte, bool)) []byte {
	s, ok := unquote(tok)
	if !ok {
		return append(dst, `""`...)
	}
	var out []byte
	changed := false
	for len(s) > 0 {
		l := s
		if nl := bytes.IndexByte(s, '\n'); nl >= 0 {
			l, s = s[:nl+1], s[nl+1:]
		} else {
			s = nil
		}
		body := bytes.TrimRight(l, "\r\n")
		if o, ok := line(out, body); ok {
			out, changed = append(o, l[len(body):]...), true
			continue
		}
		out = append(out, l...)
	}
	if !changed {
		return append(dst, tok...)
	}
	return appendString(dst, out)
}

// cookieAttributes are the attributes a Set-Cookie line may carry (RFC
// 6265bis, and Chrome's Priority and Partitioned), lower case: their
// values say how the cookie is kept, never what it is.
var cookieAttributes = map[string]bool{
	"expires": true, "max-age": true, "domain": true, "path": true, "secure": true,
	"httponly": true, "samesite": true, "priority": true, "partitioned": true, "sameparty": true,
}

// cookieLine rewrites a raw Set-Cookie line, "name=value; attributes".
// Chrome quotes one when it would not store the cookie, often because the
// line is malformed, so nothing is taken for an attribute that does not
// name one: the first pair is the cookie, and its value becomes a marker;
// of the pairs after it, an attribute stays as it is, and any other pair
// (a second cookie in a line that is not one Set-Cookie, a value with a
// ';' in it) keeps its name, its value a marker; a part with no '=' that
// is not an attribute is all value.
func (r *Redactor) cookieLine(dst, tok []byte) []byte {
	s, ok := unquote(tok)
	if !ok {
		return append(dst, `""`...)
	}
	if len(bytes.Trim(s, " \t")) == 0 {
		return append(dst, tok...)
	}
	var out []byte
	for i, rest := 0, s; ; i++ {
		part := rest
		semi := bytes.IndexByte(rest, ';')
		if semi >= 0 {
			part, rest = rest[:semi], rest[semi+1:]
		}
		name, val, pair := bytes.Cut(part, []byte("="))
		if !pair {
			name, val = nil, part
		}
		if i == 0 || len(bytes.Trim(part, " \t")) > 0 && !isCookieAttribute(name, val, pair) {
			// The value, without the blanks around it, becomes the
			// marker; the blanks stay where they were.
			left := bytes.TrimLeft(val, " \t")
			lead := len(val) - len(left)
			trimmed := bytes.TrimRight(left, " \t")
			if pair {
				out = append(out, name...)
				out = append(out, '=')
			}
			out = append(out, val[:lead]...)
			out = append(out, Marker(len(trimmed))...)
			out = append(out, val[lead+len(trimmed):]...)
		} else {
			out = append(out, part...)
		}
		if semi < 0 {
			break
		}
		out = append(out, ';')
	}
	return appendString(dst, out)
}

// isCookieAttribute reports whether a part of a Set-Cookie line after its
// cookie is an attribute: a known name, with a value or without (Chrome
// takes "Secure=x" for Secure).
func isCookieAttribute(name, val []byte, pair bool) bool {
	if !pair {
		name = val
	}
	var buf [16]byte
	low, ok := LowerASCII(buf[:], bytes.TrimSpace(name))
	return ok && len(low) > 0 && cookieAttributes[string(low)]
}

// LowerASCII writes name into buf with its ASCII letters in lower case and
// returns that part of buf, for a map look-up that allocates nothing; ok
// is false when name is longer than buf.
func LowerASCII(buf, name []byte) (low []byte, ok bool) {
	if len(name) > len(buf) {
		return nil, false
	}
	for i, c := range name {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	return buf[:len(name)], true
}

// signatureBase rewrites an HTTP message signature base (RFC 9421 2.5):
// one line per covered component, `"name";params: value`, and last the
// "@signature-params" line. A component named by Sensitive ("set-cookie",
// or "cookie";req for the request's) keeps its name and parameters, its
// value a marker; derived components ("@path") and the parameters line
// name no header and stay.
func (r *Redactor) signatureBase(dst, tok []byte) []byte {
	return rewriteLines(dst, tok, func(out, body []byte) ([]byte, bool) {
		if len(body) < 2 || body[0] != '"' {
			return out, false
		}
		q := bytes.IndexByte(body[1:], '"')
		if q <= 0 || !r.sensitive(body[1:1+q]) {
			return out, false
		}
		// A header component's parameters (req, sf, bs) hold no ": ", so
		// the first one after the name ends them; a line without one is
		// all value after the name.
		at := 2 + q
		if sep := bytes.Index(body[at:], []byte(": ")); sep >= 0 {
			at += sep + 2
		}
		out = append(out, body[:at]...)
		return append(out, Marker(len(body)-at)...), true
	})
}
