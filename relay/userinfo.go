package relay

import (
	"bytes"
	"net/url"
)

// Passwords in URLs.
//
// A person who opens http://user:password@host/ leaves the pair in the
// tab's URL, and Chrome repeats it wherever it reports the URL: target
// info, frame trees and navigations, a document's URL and base URL, the
// history. The relay hides such a password the way it hides a typed
// secret: the first time it sees one in anything it is about to send, the
// password joins the instance's lock (secrets.go), and from then on every
// form of it is replaced by its reference, {{secret:url-password}}.

// urlPasswordName is the reference a password found in a URL is hidden
// behind.
const urlPasswordName = "url-password"

// minURLPassword is the shortest password the lock takes: a shorter one
// would hide every occurrence of too common a string.
const minURLPassword = 4

// learnURLPasswords locks the passwords of the URLs with a user-info part
// in b. It costs one byte search on a message without '@'. It reports
// whether b holds one the lock could not take (past maxURLPasswords):
// that message is to go through scrubURLPasswords.
func (in *Instance) learnURLPasswords(b []byte) (untaken bool) {
	for i := bytes.IndexByte(b, '@'); i >= 0; {
		switch pw := urlPasswordBefore(b, i); {
		case len(pw) >= minURLPassword:
			untaken = !in.lockURLPassword(pw) || untaken
		case len(pw) > 0:
			// Too short to hide alone: hide it with its user name, where
			// the URL has them.
			start := i - len(pw) - 1
			for start > 0 && userinfoByte(b[start-1]) {
				start--
			}
			untaken = !in.lockURLPassword(b[start:i+1]) || untaken
		}
		j := bytes.IndexByte(b[i+1:], '@')
		if j < 0 {
			return untaken
		}
		i += 1 + j
	}
	return untaken
}

// scrubURLPasswords appends b to dst with the password of every URL with a
// user-info part replaced by the reference: for the passwords the lock no
// longer takes, each hidden where a URL names it.
func scrubURLPasswords(dst, b []byte) []byte {
	start := 0
	for i := bytes.IndexByte(b, '@'); i >= 0; {
		if pw := urlPasswordBefore(b, i); len(pw) > 0 {
			dst = append(dst, b[start:i-len(pw)]...)
			dst = append(dst, "{{secret:"+urlPasswordName+"}}"...)
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

// urlPasswordBefore returns the password of the URL whose user-info part
// ends at b[at] ('@'), if it is one: "scheme://user:password@".
func urlPasswordBefore(b []byte, at int) []byte {
	j := at
	for j > 0 && userinfoByte(b[j-1]) {
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

// userinfoByte reports whether c may be part of a URL's user-info as it
// appears in JSON text.
func userinfoByte(c byte) bool {
	switch c {
	case '/', '?', '#', '@', '"', '\\', '<', '>', ' ', '\t', '\n', '\r', '[', ']':
		return false
	}
	return c > ' ' && c < 0x7f
}

// maxURLPasswords bounds the URL passwords an instance hides: each one
// adds some eighty forms to the lock, which is built anew for each, so
// text that names ever new ones (a page's, or script's results a client
// asks for) must not grow it without end. A person's browsing names a
// handful.
const maxURLPasswords = 64

// lockURLPassword hides pw (as the URL writes it, and decoded) from now
// on. It reports false when the lock takes no more: pw is then hidden only
// where a URL names it (scrubURLPasswords).
func (in *Instance) lockURLPassword(pw []byte) bool {
	raw := string(pw)
	for {
		old := in.locked.Load()
		if old != nil && old.Contains(pw) {
			return true
		}
		if in.urlPasswords.Load() >= maxURLPasswords {
			if in.urlPasswords.CompareAndSwap(maxURLPasswords, maxURLPasswords+1) {
				in.log.Warn("too many passwords in URLs to lock; those seen from now on are hidden in their URLs only", "limit", maxURLPasswords)
			}
			return false
		}
		l := old.Add(urlPasswordName, []byte(raw))
		if dec, err := url.PathUnescape(raw); err == nil && dec != raw && len(dec) >= minURLPassword && dec[len(dec)-1] != '@' {
			l = l.Add(urlPasswordName, []byte(dec))
		}
		if in.locked.CompareAndSwap(old, l) {
			in.urlPasswords.Add(1)
			return true
		}
	}
}
