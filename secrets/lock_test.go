package secrets

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// The lock against every encoding a value takes in a message: the forms
// Chrome gives (a page's HTML serialized, a saved page, a form posted from
// a windows-1252 page, script and style sheet sources, JSON) and a page's
// own (any character in any escape, mixed). Each case is a message a
// client could get; the lock must find the value in it and leave nothing
// of it after Replace.

// a strong password, with what HTML, URLs and JSON escape, a character
// past ASCII and one windows-1252 has at 0x80-0x9F.
const (
	asciiSecret = `S&y"m<b=o>l' %+/\x`
	latinSecret = `Pässwörd€ 1`
)

type encCase struct {
	name   string
	secret string
	msg    string // a message, or its text (JSON-escaped into one, in a string)
	raw    bool   // msg is the whole message
}

func encodingCases() []encCase { return encodingCasesFor(asciiSecret, latinSecret) }

// encodingCasesFor writes an ASCII value and one with characters past
// ASCII (eleven characters as latinSecret has: 'ä' second, 'ö' sixth,
// '€' ninth) in every form.
func encodingCasesFor(pw, latin string) []encCase {
	lr := []rune(latin)
	var form1252, formUTF8 strings.Builder
	for _, r := range lr {
		b, _ := bytesOf(cs1252, r)
		for _, c := range b {
			switch {
			case c == ' ':
				form1252.WriteByte('+')
			case c >= 0x80:
				form1252.WriteString("%" + strings.ToUpper(hexByte(c)))
			default:
				form1252.WriteByte(c)
			}
		}
		for _, c := range []byte(string(r)) {
			switch {
			case c == ' ':
				formUTF8.WriteByte('+')
			case c >= 0x80:
				formUTF8.WriteString("%" + strings.ToUpper(hexByte(c)))
			default:
				formUTF8.WriteByte(c)
			}
		}
	}
	jsU := func(style int) string {
		var b strings.Builder
		for _, r := range lr {
			switch {
			case r < 0x80:
				b.WriteRune(r)
			case style == 0:
				b.WriteString(`\u` + padHex(uint32(r), 4))
			case style == 1:
				b.WriteString(`\u{` + padHex(uint32(r), 1) + `}`)
			default:
				b.WriteString(`\` + padHex(uint32(r), 1) + " ")
			}
		}
		return b.String()
	}
	utf16 := func(s string, be bool) []byte {
		var b []byte
		for _, r := range s {
			if be {
				b = append(b, byte(r>>8), byte(r))
			} else {
				b = append(b, byte(r), byte(r>>8))
			}
		}
		return b
	}
	qpUTF16 := func(s string) string {
		var b strings.Builder
		for _, c := range utf16(s, false) {
			if c >= 0x21 && c < 0x7f && c != '=' {
				b.WriteByte(c)
			} else {
				b.WriteString("=" + strings.ToUpper(hexByte(c)))
			}
		}
		return b.String()
	}
	html := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(pw)
	qp := func(s string, at int) string {
		q := strings.ReplaceAll(s, "=", "=3D")
		if at > 0 && at < len(q) {
			q = q[:at] + "=\r\n" + q[at:]
		}
		return q
	}
	var cases []encCase
	add := func(name, secret, msg string) { cases = append(cases, encCase{name: name, secret: secret, msg: msg}) }
	// DOM.getOuterHTML of an attribute a page mirrors the field into, as
	// Chrome serializes it, and Runtime.getProperties of it.
	add("outerHTML attribute", pw, `<input value="`+strings.ReplaceAll(strings.ReplaceAll(pw, "&", "&amp;"), `"`, "&quot;")+`">`)
	add("outerHTML text", pw, `<p>`+html+`</p>`)
	add("named references, no semicolons", pw, strings.NewReplacer("&", "&amp", "<", "&lt", ">", "&gt", `"`, "&quot").Replace(pw))
	var numeric strings.Builder
	for i, r := range pw {
		switch i % 4 {
		case 0:
			numeric.WriteString("&#" + itoa(int(r)) + ";")
		case 1:
			numeric.WriteString("&#x" + padHex(uint32(r), 1) + ";")
		case 2:
			numeric.WriteString("&#X00" + strings.ToUpper(padHex(uint32(r), 1)))
		default:
			numeric.WriteString("&#0" + itoa(int(r)))
		}
	}
	add("numeric references", pw, numeric.String())
	var mixed strings.Builder
	for i, r := range pw {
		n := names[r]
		switch {
		case i%3 == 0 && len(n) > 0:
			mixed.WriteString("&" + strings.TrimSuffix(n[0], ";") + ";")
		case i%3 == 1:
			mixed.WriteString("&#" + itoa(int(r)) + ";")
		default:
			mixed.WriteRune(r)
		}
	}
	add("mixed references", pw, mixed.String())
	// Page.captureSnapshot: the HTML part quoted-printable, a soft line
	// break anywhere (in a reference too).
	for at := 1; at < 40; at += 3 {
		add("MHTML soft break at "+itoa(at), pw, "Content-Transfer-Encoding: quoted-printable\r\n\r\n<input value=3D\""+qp(html, at)+"\">")
	}
	// A form posted from a windows-1252 page, and its URL.
	add("windows-1252 form", latin, "user=a&password="+form1252.String()+"&next=1")
	add("windows-1252 form, lower case", latin, "password="+regexp.MustCompile(`%[0-9A-F]{2}`).ReplaceAllStringFunc(form1252.String(), strings.ToLower))
	add("UTF-8 form", latin, "password="+formUTF8.String())
	add("encodeURIComponent", pw, "q="+percentEscape(pw, uriComponentSafe, false, false))
	// Script and style sheet sources.
	add(`\u escapes`, latin, `"`+jsU(0)+`"`)
	add(`\u{} escapes`, latin, "`"+jsU(1)+"`")
	add("CSS escapes", latin, `content: "`+jsU(2)+`"`)
	add(`\x and \/ escapes`, pw, "'"+strings.NewReplacer("&", `\x26`, "<", `\x3c`, "=", `\x3D`, ">", `\x3e`, `"`, `\"`, "'", `\'`, "/", `\/`, `\`, `\\`).Replace(pw)+"'")
	// UTF-16 in a saved page's part, quoted-printable and base64.
	add("UTF-16LE quoted-printable", latin, qpUTF16(latin))
	add("UTF-16BE base64 in lines", latin, mimeBase64(append([]byte("<p>"), utf16(latin, true)...), base64.StdEncoding, 8))
	add("UTF-16LE base64", pw, base64.StdEncoding.EncodeToString(utf16(pw, false)))
	// Base64 of the escapes (a form's body in postDataEntries).
	add("base64 of a windows-1252 form", latin, base64.StdEncoding.EncodeToString([]byte("a=1&password="+form1252.String())))
	add("base64 of HTML, URL alphabet", pw, base64.RawURLEncoding.EncodeToString([]byte("<p>"+html+"</p>")))
	add("base64 of a form, percent-escaped in a form", pw, strings.NewReplacer("+", "%2B", "/", "%2F", "=", "%3D").Replace(base64.StdEncoding.EncodeToString([]byte("p="+html+"&x=??>>"))))
	// JSON's own escaping of them (Go's, which writes & < > as \u0026).
	cases = append(cases, encCase{name: "Go JSON of HTML", secret: pw, raw: true, msg: func() string {
		b, _ := json.Marshal(map[string]string{"outerHTML": "<p>" + html + "</p>"})
		return string(b)
	}()})
	cases = append(cases, encCase{name: "JSON body in a JSON string", secret: latin, raw: true, msg: `{"body":"` + jsonString(`{"pw":"`+jsonString(latin, 2)+`"}`, 0) + `"}`})
	cases = append(cases, encCase{name: "a title, not JSON", secret: pw, raw: true, msg: "Welcome " + html})
	return cases
}

// message is c's message: its text in a JSON string, as Chrome sends it.
func (c encCase) message() []byte {
	if c.raw {
		return []byte(c.msg)
	}
	return []byte(`{"id":7,"result":{"value":"` + jsonString(c.msg, 0) + `"}}`)
}

func TestLockEncodings(t *testing.T) {
	for _, c := range encodingCases() {
		t.Run(c.name, func(t *testing.T) {
			l := (*Lock)(nil).Add("site", []byte(c.secret))
			msg := c.message()
			if !l.Contains(msg) {
				t.Fatalf("not found in %s", msg)
			}
			out := l.Replace(nil, msg)
			if !bytes.Contains(out, []byte(Ref("site"))) && !bytes.Contains(out, []byte(base64.StdEncoding.EncodeToString([]byte(Ref("site"))))) {
				t.Logf("no reference in plain sight (inside base64?): %s", out)
			}
			checkHidden(t, l, msg, out)
		})
	}
}

// checkHidden fails when what stands between the references in out still
// holds the value, or out is not JSON where in was.
func checkHidden(t *testing.T, l *Lock, in, out []byte) {
	t.Helper()
	isJSON := looksJSON(in)
	for _, piece := range bytes.Split(out, []byte(Ref("site"))) {
		if l.contains(piece, 0, isJSON) {
			t.Fatalf("still there in %q\nfrom %q\nout %q", piece, in, out)
		}
	}
	if json.Valid(in) && !json.Valid(out) {
		t.Fatalf("replaced into what is not JSON: %q\nfrom %q", out, in)
	}
}

// The lock finds nothing where the value is not, however close: every
// form of values that differ from the locked ones in one character.
func TestLockNearMisses(t *testing.T) {
	l := (*Lock)(nil).Add("site", []byte(asciiSecret)).Add("eu", []byte(latinSecret))
	for _, c := range encodingCasesFor(strings.Replace(asciiSecret, "o", "0", 1), strings.Replace(latinSecret, "w", "v", 1)) {
		if msg := c.message(); l.Contains(msg) {
			t.Errorf("%s: found in %s", c.name, msg)
		}
	}
	for _, msg := range []string{
		`{"url":"https://example.com/api/items?page=2&sort=desc&amp;x=1"}`,
		`{"outerHTML":"<p>S&amp;y&quot;m&lt;b=o&gt;L' %+/\\x</p>"}`,
		`{"text":"S\u0026y\"m\u003cb=o\u003el' %+/\\y"}`,
	} {
		if l.Contains([]byte(msg)) {
			t.Errorf("found in %s", msg)
		}
	}
}

func hexByte(c byte) string { return padHex(uint32(c), 2) }

func padHex(v uint32, width int) string {
	s := ""
	for v > 0 || s == "" {
		s = string("0123456789abcdef"[v&15]) + s
		v >>= 4
	}
	for len(s) < width {
		s = "0" + s
	}
	return s
}

// FuzzLockEncoded: a value written with a random escape for each
// character (escapes within escapes, in a random charset), inside random
// text, in the layers a message wraps text in (a saved page's
// quoted-printable with soft line breaks, base64 in lines, JSON): the lock
// finds it, and after Replace the client reads nothing of it.
func FuzzLockEncoded(f *testing.F) {
	for i, c := range []struct {
		secret, before, after string
		layers                uint16
	}{
		{asciiSecret, "<input value=\"", "\">", 0},
		{latinSecret, "password=", "&x=1", 1 << 0},
		{latinSecret, "", "", 2 << 0},
		{"日本pw-secret", "q=", "", 4 << 0},
		{asciiSecret, "Content-Type: text/html\r\n\r\n", "", 1 << 4},
		{asciiSecret, "", "", 1 << 5},
		{latinSecret, "data:", "", 1<<5 | 1<<6},
		{"hunter2hunter2", "abc", "def", 1 << 7},
		{"  spaces  ", "a+b", "c", 0},
	} {
		for e := escape(0); e < numEscapes; e++ {
			f.Add(c.secret, c.before, c.after, uint64(i*100+int(e)), c.layers|uint16(e)<<8)
		}
	}
	f.Fuzz(func(t *testing.T, secret, before, after string, seed uint64, layers uint16) {
		if len(secret) < 4 || len(secret) > 64 || !utf8ValidNoNUL(secret) || len(before)+len(after) > 256 {
			return
		}
		if strings.ContainsAny(secret, "{}") {
			// The reference's braces next to the page's text could spell
			// such a value across the seam, inside base64 where the check
			// cannot split at the reference: FuzzLock covers those.
			return
		}
		msg, desc := buildMessage(secret, before, after, seed, layers)
		if msg == nil {
			return
		}
		l := (*Lock)(nil).Add("site", []byte(secret))
		if !l.Contains(msg) {
			t.Fatalf("%s: %q not found in %q", desc, secret, msg)
		}
		checkHidden(t, l, msg, l.Replace(nil, msg))
	})
}

func utf8ValidNoNUL(s string) bool {
	return validUTF8(s) == s && !strings.ContainsRune(s, 0) && !strings.ContainsRune(s, 0xFFFD)
}

// buildMessage writes secret inside before and after as layers and seed
// say: bits 0-2 the charset, 3 escapes two deep, 4 a saved page's
// quoted-printable, 5 base64 (6: in lines, 7: the URL alphabet), 8-11 one
// escape for every character (0: any, at random), 12-13 the JSON writer,
// 14 no JSON at all.
func buildMessage(secret, before, after string, seed uint64, layers uint16) ([]byte, string) {
	rng := rand.New(rand.NewPCG(seed, seed^0x9E3779B97F4A7C15))
	enc := textEncoding{cs: charset(int(layers&7) % int(numCharsets)), depth: 1}
	if layers&8 != 0 {
		enc.depth = 2
	}
	qp := layers&(1<<4) != 0
	if qp && enc.depth > 1 {
		enc.depth = 1 // quoted-printable is an escape deep already
	}
	if e := escape(layers>>8&15) % numEscapes; e != 0 {
		enc.escapes = []escape{e, escLiteral}
	}
	value := encodeValue(rng, enc, secret)
	text := before + value + after
	desc := "charset " + itoa(int(enc.cs)) + ", depth " + itoa(enc.depth)
	if qp {
		// Soft line breaks, anywhere, some ten units apart at least (a
		// saved page's lines are 76 long).
		text = quotedPrintable(rng, text, 10+rng.IntN(20))
		desc += ", quoted-printable"
	}
	if layers&(1<<5) != 0 {
		alpha := base64.StdEncoding
		if layers&(1<<7) != 0 {
			alpha = base64.URLEncoding
		}
		width := 0
		if layers&(1<<6) != 0 {
			width = 4 * (1 + rng.IntN(19))
		}
		if isImage([]byte(text)) {
			return nil, "" // not read inside (a screenshot's pixels)
		}
		// Base64 text is read from where its run starts: after a
		// delimiter, as Chrome and a page give it.
		text = "," + mimeBase64([]byte(text), alpha, width) + ","
		desc += ", base64"
	}
	if layers&(1<<14) != 0 {
		return []byte(text), desc + ", not JSON"
	}
	return []byte(`{"id":1,"result":{"value":"` + jsonString(validUTF8(text), int(layers>>12&3)%3) + `"}}`), desc
}

// FuzzQuickSkip: the quick look at a marker passes over it only when the
// decoders, reading every escape there, read nothing a value holds.
func FuzzQuickSkip(f *testing.F) {
	for _, c := range encodingCases() {
		f.Add(c.secret, string(c.message()), true)
		f.Add(c.secret, c.msg, false)
	}
	f.Add("000!", `{"v":"000&excl&semi;0"}`, true)
	f.Add("ab;c", "?a=2&sort=desc&b&#x61%3B=3D&amp=\r\n", false)
	f.Fuzz(func(t *testing.T, secret, msg string, json bool) {
		if len(secret) == 0 || len(secret) > 64 || len(msg) > 1024 {
			return
		}
		l := (*Lock)(nil).Add("s", []byte(secret))
		s := getScanner(l, []byte(msg), 0, json)
		defer putScanner(s)
		for m := range msg {
			if !isMarker[msg[m]] || !s.quickSkip(m) {
				continue
			}
			// Every reading there, escapes within escapes too: none may
			// be a character a value holds, or a soft line break.
			held := func(r rune) bool {
				return r >= 0 && r < 256 && len(l.byByte[r]) > 0 || r >= 128 && len(l.byRune[r]) > 0
			}
			for _, u := range s.units(m, maxDepth) {
				if !u.dec {
					continue
				}
				if u.kind == kEps || held(u.r[0]) || u.n == 2 && held(u.r[1]) {
					t.Fatalf("passed over %q at %d, where %+v is read", msg, m, u)
				}
			}
		}
	})
}

// benchKinds are messages of 1 KiB of other kinds than benchMessage: a
// page's HTML with its escapes, a body in base64, a saved page in
// quoted-printable.
func benchKinds() map[string][]byte {
	page := `<form action="/login?next=%2Fhome&amp;lang=en"><label for="u">User&nbsp;name</label><input id="u" name="user" value="person" class="a b c"><input type="password" name="password" autocomplete="current-password"><p class="hint">Forgot it? &rarr; <a href="/reset?x=1&y=2">reset</a> &copy; 2026 &quot;Example&quot; &amp; Co.</p></form><script>var cfg = {"a":"\u003cb\u003e","url":"https:\/\/example.com\/x?y=1"};</script>`
	kinds := map[string]string{
		"html":   `{"id":12,"result":{"outerHTML":"` + jsonString(page, 0) + `"}}`,
		"base64": `{"id":13,"result":{"body":"` + base64.StdEncoding.EncodeToString([]byte(page)) + `","base64Encoded":true}}`,
		"mhtml":  `{"id":14,"result":{"data":"` + jsonString("Content-Transfer-Encoding: quoted-printable\r\n\r\n"+quotedPrintable(rand.New(rand.NewPCG(1, 2)), page, 76), 0) + `"}}`,
	}
	out := map[string][]byte{}
	for name, m := range kinds {
		msg := []byte(m)
		for len(msg) < 1024 {
			msg = append(msg, ' ')
		}
		out[name] = msg[:1024]
	}
	return out
}

// BenchmarkLockKinds: the scan of 1 KiB messages of other kinds with 20
// locked secrets: a page's HTML with its escapes, a body in base64, a
// saved page in quoted-printable, and Replace on a message that holds a
// value escaped.
func BenchmarkLockKinds(b *testing.B) {
	var l *Lock
	for i := 0; i < 20; i++ {
		l = l.Add("s"+itoa(i), []byte("correct-horse-battery-"+itoa(i*7919)))
	}
	kinds := benchKinds()
	for _, name := range []string{"html", "base64", "mhtml"} {
		msg := kinds[name]
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(msg)))
			b.ReportAllocs()
			for b.Loop() {
				if l.Contains(msg) {
					b.Fatal("found")
				}
			}
		})
	}
	msg := []byte(`{"id":15,"result":{"outerHTML":"<input value=\"correct-horse-battery-` + strings.Repeat("&#x30;", 0) + `&#48;\">` + strings.Repeat(" ", 900) + `"}}`)
	b.Run("replace", func(b *testing.B) {
		b.SetBytes(int64(len(msg)))
		b.ReportAllocs()
		var dst []byte
		for b.Loop() {
			dst = l.Replace(dst[:0], msg)
		}
		if bytes.Contains(dst, []byte("battery-0")) {
			b.Fatalf("not replaced: %s", dst)
		}
	})
}
