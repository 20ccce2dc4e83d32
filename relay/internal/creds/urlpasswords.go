package creds

import (
	"bytes"
	"net/url"

	"github.com/cdprelay/cdprelay/relay/internal/core"
)

// Passwords in URLs (internal/creds): the instance's part, which keeps
// what it has seen in its lock.

// LearnURLPasswords locks the passwords of the URLs with a user-info part
// in b. It costs one byte search on a message without '@'. It reports
// whether b holds one the lock could not take (past maxURLPasswords):
// that message is to go through ScrubURLPasswords.
func LearnURLPasswords(in *core.Instance, b []byte) (untaken bool) {
	for i := bytes.IndexByte(b, '@'); i >= 0; {
		switch pw := URLPasswordBefore(b, i); {
		case len(pw) >= MinURLPassword:
			untaken = !lockURLPassword(in, pw) || untaken
		case len(pw) > 0:
			// Too short to hide alone: hide it with its user name, where
			// the URL has them.
			start := i - len(pw) - 1
			for start > 0 && UserinfoByte(b[start-1]) {
				start--
			}
			untaken = !lockURLPassword(in, b[start:i+1]) || untaken
		}
		j := bytes.IndexByte(b[i+1:], '@')
		if j < 0 {
			return untaken
		}
		i += 1 + j
	}
	return untaken
}

// MaxURLPasswords bounds the URL passwords an instance hides: each one
// adds some eighty forms to the lock, which is built anew for each, so
// text that names ever new ones (a page's, or script's results a client
// asks for) must not grow it without end. A person's browsing names a
// handful.
const MaxURLPasswords = 64

// lockURLPassword hides pw (as the URL writes it, and decoded) from now
// on. It reports false when the lock takes no more: pw is then hidden only
// where a URL names it (ScrubURLPasswords).
func lockURLPassword(in *core.Instance, pw []byte) bool {
	raw := string(pw)
	for {
		old := instanceSlot.Of(in).Locked.Load()
		if old != nil && old.Contains(pw) {
			return true
		}
		if instanceSlot.Of(in).URLPasswords.Load() >= MaxURLPasswords {
			if instanceSlot.Of(in).URLPasswords.CompareAndSwap(MaxURLPasswords, MaxURLPasswords+1) {
				in.Log.Warn("too many passwords in URLs to lock; those seen from now on are hidden in their URLs only", "limit", MaxURLPasswords)
			}
			return false
		}
		l := old.Add(URLPasswordName, []byte(raw))
		if dec, err := url.PathUnescape(raw); err == nil && dec != raw && len(dec) >= MinURLPassword && dec[len(dec)-1] != '@' {
			l = l.Add(URLPasswordName, []byte(dec))
		}
		if instanceSlot.Of(in).Locked.CompareAndSwap(old, l) {
			instanceSlot.Of(in).URLPasswords.Add(1)
			return true
		}
	}
}
