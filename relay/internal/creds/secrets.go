package creds

import "github.com/cdprelay/cdprelay/secrets"

// Secrets typed by reference: what of their typing is text alone.

// ScrubString returns s as a client may see it: with every value of lock
// l replaced by its reference, and, when untaken (s names a URL password
// the lock did not take), the password of every URL in it too.
func ScrubString(s string, untaken bool, l *secrets.Lock) string {
	if untaken {
		s = string(ScrubURLPasswords(nil, []byte(s)))
	}
	if l != nil && l.Contains([]byte(s)) {
		return string(l.Replace(nil, []byte(s)))
	}
	return s
}

// InsertScript types value where the focus is, in the same task as it
// checks that the focus is still on the element the relay judged (this,
// the chain the relay's focusChain found: the focused element of each
// document from the top one down). It names no global but document, and
// the value comes as an argument. It returns "" once typed, else why not.
const InsertScript = `function (value, anyField) {
  const want = this, last = want.length - 1;
  let doc = document;
  for (let i = 0; i <= last; i++) {
    let el = doc.activeElement;
    while (el && el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
    if (el !== want[i]) return "the focus moved";
    if (i === last) break;
    let inner = null;
    try { inner = el.contentDocument; } catch (e) {}
    if (!inner) return "the focus moved";
    doc = inner;
  }
  const el = want[last];
  if (anyField ? !(el.isContentEditable || el.tagName === "INPUT" || el.tagName === "TEXTAREA") : !(el.tagName === "INPUT" && el.type === "password")) return "the focused field is not one it may go into";
  if (!doc.execCommand("insertText", false, value)) return "the focused field did not take the text";
  return "";
}`
