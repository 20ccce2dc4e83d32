package creds

import "bytes"

// Passwords in URLs.
//
// A person who opens http://user:password@host/ leaves the pair in the
// tab's URL, and Chrome repeats it wherever it reports the URL: target
// info, frame trees and navigations, a document's URL and base URL, the
// history. The relay hides such a password the way it hides a typed
// secret: the first time it sees one in anything it is about to send, the
// password joins the instance's lock (secrets.Lock), and from then on
// every form of it is replaced by its reference, {{secret:url-password}}.

// URLPasswordName is the reference a password found in a URL is hidden
// behind.
const URLPasswordName = "url-password"

// MinURLPassword is the shortest password the lock takes: a shorter one
// would hide every occurrence of too common a string.
const MinURLPassword = 4

// ScrubURLPasswords appends b to dst with the password of every URL with a
// user-info part replaced by the reference: for the passwords the lock no
// longer takes, each hidden where a URL names it.
func ScrubURLPasswords(dst, b []byte) []byte {
	start := 0
	for i := bytes.IndexByte(b, '@'); i >= 0; {
		if pw := URLPasswordBefore(b, i); len(pw) > 0 {
			dst = append(dst, b[start:i-len(pw)]...)
			dst = append(dst, "{{secret:"+URLPasswordName+"}}"...)
			start = i
		}
		j := bytes.IndexByte(b[i+1:], '@')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return append(dst, b[start:]...)
}

// URLPasswordBefore returns the password of the URL whose user-info part
// ends at b[at] ('@'), if it is one: "scheme://user:password@".
func URLPasswordBefore(b []byte, at int) []byte {
	j := at
	for j > 0 && UserinfoByte(b[j-1]) {
		j--
	}
	if j < 3 || string(b[j-3:j]) != "://" {
		return nil
	}
	info := b[j:at]
	k := bytes.IndexByte(info, ':')
	if k < 0 {
		return nil
	}
	return info[k+1:]
}

// UserinfoByte reports whether c may be part of a URL's user-info as it
// appears in JSON text.
func UserinfoByte(c byte) bool {
	switch c {
	case '/', '?', '#', '@', '"', '\\', '<', '>', ' ', '\t', '\n', '\r', '[', ']':
		return false
	}
	return c > ' ' && c < 0x7f
}
