package denylist

import (
	"net/url"
	"regexp"
	"strings"
	"testing"
)

func FuzzURL(f *testing.F) {
	for _, c := range loadCorpus(f) {
		f.Add(c.url)
	}
	policies := compileCorpusConfigs(f)
	example := policies["example"]
	private := policies["private-block"]
	f.Fuzz(func(t *testing.T, raw string) {
		u, perr := ParseURL(raw)
		for name, e := range policies {
			d := e.URL(raw)
			if d != e.URL(raw) {
				t.Fatalf("%s: URL(%q) is not deterministic", name, raw)
			}
			if d.Verdict == Allow && d.Rule != "" || d.Verdict == Deny && (d.Rule == "" || d.Reason == "") || d.Verdict == AckAndDrop {
				t.Fatalf("%s: URL(%q) = %+v: inconsistent decision", name, raw, d)
			}
		}

		// Nothing outside the allow list gets through.
		if d := example.URL(raw); d.Verdict == Allow {
			if perr != nil {
				t.Fatalf("URL(%q) allowed, but ParseURL fails: %v", raw, perr)
			}
			inList := u.Host == "example.com" || strings.HasSuffix(u.Host, ".example.com") || u.Host == "example.org"
			aboutPage := u.Scheme == "about" && (u.Opaque == "blank" || u.Opaque == "srcdoc")
			if !inList && !aboutPage || u.ViewSource {
				t.Fatalf("URL(%q) allowed under example: %+v", raw, u)
			}
			if !aboutPage && u.Scheme != "http" && u.Scheme != "https" {
				t.Fatalf("URL(%q) allowed with scheme %q", raw, u.Scheme)
			}
		}
		if d := private.URL(raw); d.Verdict == Allow && u.Addr.IsValid() && privateKind(u.Addr) != "" {
			t.Fatalf("URL(%q) allowed with private address %v", raw, u.Addr)
		}

		if perr != nil || u.Host == "" {
			return
		}
		// A normalised host is in its final form: parsing it again
		// changes nothing.
		for i := 0; i < len(u.Host); i++ {
			if c := u.Host[i]; !hostByte(c) && !(u.Addr.Is6() && (c == '[' || c == ']' || c == ':')) {
				t.Fatalf("ParseURL(%q).Host = %q has %q", raw, u.Host, c)
			}
		}
		again, err := ParseURL("http://" + u.Host + "/")
		if err != nil || again.Host != u.Host || again.Addr != u.Addr {
			t.Fatalf("host %q of %q does not survive a second parse: %+v %v", u.Host, raw, again, err)
		}
		crossCheckNetURL(t, raw, u)
	})
}

// simpleURL matches URLs on which net/url and the URL standard agree about
// the host: ASCII, no userinfo, no escapes, no backslashes.
var simpleURL = regexp.MustCompile(`^(?i:https?)://([A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*\.?)(?::[0-9]{1,5})?(?:[/?#][A-Za-z0-9/?#=&._-]*)?$`)

func crossCheckNetURL(t *testing.T, raw string, u ParsedURL) {
	m := simpleURL.FindStringSubmatch(raw)
	if m == nil || u.Addr.IsValid() {
		return
	}
	n, err := url.Parse(raw)
	if err != nil {
		return
	}
	want := strings.TrimRight(strings.ToLower(n.Hostname()), ".")
	if u.Host != want {
		t.Fatalf("ParseURL(%q).Host = %q, net/url says %q", raw, u.Host, want)
	}
}

// On simple hosts the two parsers must also agree on refusals: this
// parser refuses only what the standard makes special.
func TestSimpleURLsParse(t *testing.T) {
	for _, raw := range []string{"http://example.com", "https://a-b.c_d.example.com:8080/x?y#z", "HTTP://EXAMPLE.COM./"} {
		if !simpleURL.MatchString(raw) {
			t.Fatalf("%q should be simple", raw)
		}
		u, err := ParseURL(raw)
		if err != nil {
			t.Fatalf("ParseURL(%q): %v", raw, err)
		}
		crossCheckNetURL(t, raw, u)
	}
}

func FuzzMethod(f *testing.F) {
	methods := []string{"Runtime.evaluate", "Page.navigate", "Target.createTarget", "Target.createBrowserContext",
		"Network.loadNetworkResource", "Storage.getCookies", "Browser.setDownloadBehavior", "Network.getCookie", "Browser.close", ""}
	params := []string{``, `{}`, `null`, `{"url":"https://example.com/"}`, `{"url":"file:///etc/passwd"}`,
		`{"proxyServer":"x"}`, `{"url":"a","url":"b"}`, `{"method":"Storage.getCookies"}`, `{"u\u0072l":"javascript:1"}`, `[`, `{"a":{"url":1}}`}
	for _, m := range methods {
		for _, p := range params {
			f.Add(m, []byte(p))
		}
	}
	pol, err := Compile(Config{
		DenyMethods:       []string{"Network.*Cookie*", "DOM.set{FileInputFiles,OuterHTML}"},
		AckAndDropMethods: []string{"Emulation.*"},
		AllowedHosts:      []string{".example.com"},
	}, nil)
	if err != nil {
		f.Fatal(err)
	}
	e := pol.For("")
	f.Fuzz(func(t *testing.T, method string, params []byte) {
		d := e.Method(method, params)
		if again := e.Method(method, params); again != d {
			t.Fatalf("Method(%q, %q) not deterministic: %+v then %+v", method, params, d, again)
		}
		if d.Verdict == Allow && d.Rule != "" || d.Verdict != Allow && (d.Rule == "" || d.Reason == "") {
			t.Fatalf("Method(%q, %q) = %+v: inconsistent decision", method, params, d)
		}
		// A default deny holds whatever the params say.
		if method == "Storage.getCookies" && d.Verdict != Deny {
			t.Fatalf("Storage.getCookies with %q = %+v", params, d)
		}
		// A method without a rule is allowed whatever the params say.
		if _, special := e.methods[method]; !special && !strings.Contains(method, "Cookie") &&
			!strings.HasPrefix(method, "DOM.set") && !strings.HasPrefix(method, "Emulation.") && d.Verdict != Allow {
			t.Fatalf("Method(%q, %q) = %+v, want allow", method, params, d)
		}
		// A URL-bearing command is allowed only for a URL the fence allows.
		if p, ok := urlParams[method]; ok && d.Verdict == Allow {
			u, found, err := paramString(params, "url")
			if u == "" {
				u = p.empty
			}
			if !found && p.optional && err == nil {
				return
			}
			if err != nil || !found || e.URL(u).Verdict != Allow {
				t.Fatalf("Method(%q, %q) allowed: url %q found %v err %v", method, params, u, found, err)
			}
		}
	})
}
