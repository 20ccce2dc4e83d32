package denylist

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
)

// corpusConfigs are the configurations testdata/urls.tsv refers to.
var corpusConfigs = map[string]Config{
	"any":           {},
	"example":       {AllowedHosts: []string{".example.com", "example.org"}},
	"private-block": {BlockPrivateAddresses: true},
	"ip":            {AllowedHosts: []string{"127.0.0.1", "::1", "192.168.1.0/24"}},
	"glob":          {AllowedHosts: []string{"*.example.com", "api-*.example.net"}},
	"idn":           {AllowedHosts: []string{"bücher.de", ".xn--exmple-qta.com"}},
	"blocked":       {BlockedHosts: []string{".evil.net", "10.0.0.0/8", "127.0.0.1", "ads-*.example.com"}},
	"both": {
		AllowedHosts:          []string{".example.com", "127.0.0.1"},
		BlockedHosts:          []string{"secret.example.com"},
		BlockPrivateAddresses: true,
	},
	"view-source": {AllowedSchemes: []string{"http", "https", "view-source"}, AllowedHosts: []string{".example.com"}},
	"ws":          {AllowedSchemes: []string{"https", "ws", "wss"}, AllowedHosts: []string{".example.com"}},
	"data":        {AllowedSchemes: []string{"https", "data"}},
	"about":       {AllowedSchemes: []string{"http", "https", "about"}},
}

type corpusCase struct {
	line    int
	verdict string // "allow" or "deny:<rule>"
	config  string
	url     string
	comment string
}

func loadCorpus(t testing.TB) []corpusCase {
	t.Helper()
	f, err := os.Open("testdata/urls.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []corpusCase
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cols := strings.Split(line, "\t")
		if len(cols) != 4 {
			t.Fatalf("urls.tsv:%d: %d columns, want 4", n, len(cols))
		}
		u, err := strconv.Unquote(`"` + cols[2] + `"`)
		if err != nil {
			t.Fatalf("urls.tsv:%d: url column %q: %v", n, cols[2], err)
		}
		out = append(out, corpusCase{n, cols[0], cols[1], u, cols[3]})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func compileCorpusConfigs(t testing.TB) map[string]*Effective {
	t.Helper()
	out := map[string]*Effective{}
	for name, c := range corpusConfigs {
		p, err := Compile(c, nil)
		if err != nil {
			t.Fatalf("config %s: %v", name, err)
		}
		out[name] = p.For("")
	}
	return out
}

func TestURLCorpus(t *testing.T) {
	cases := loadCorpus(t)
	if len(cases) < 150 {
		t.Fatalf("the corpus has %d URLs, want at least 150", len(cases))
	}
	policies := compileCorpusConfigs(t)
	for _, c := range cases {
		e, ok := policies[c.config]
		if !ok {
			t.Errorf("urls.tsv:%d: unknown config %q", c.line, c.config)
			continue
		}
		d := e.URL(c.url)
		got := "allow"
		if d.Verdict != Allow {
			got = d.Verdict.String() + ":" + strings.TrimPrefix(d.Rule, "url:")
		}
		if got != c.verdict {
			t.Errorf("urls.tsv:%d: URL(%q) under %s = %s (%s), want %s: %s", c.line, c.url, c.config, got, d.Reason, c.verdict, c.comment)
		}
		if d.Verdict != Allow && d.Reason == "" {
			t.Errorf("urls.tsv:%d: refused without a reason", c.line)
		}
	}
}

func TestParseURLNormalises(t *testing.T) {
	tests := []struct {
		in, scheme, host string
		viewSource       bool
	}{
		{"HTTPS://EXAMPLE.COM./x", "https", "example.com", false},
		{"https://user:pw@Example.com:8443/", "https", "example.com", false},
		{"https:\\\\example.com\\evil.net", "https", "example.com", false},
		{"http://ex\u00e1mple.com", "http", "xn--exmple-qta.com", false},
		{"http://example\u3002com", "http", "example.com", false},
		{"http://%65xample%2ecom", "http", "example.com", false},
		{"http://2130706433", "http", "127.0.0.1", false},
		{"http://0x7f.1", "http", "127.0.0.1", false},
		{"http://0177.0.0.1", "http", "127.0.0.1", false},
		{"http://127.1.", "http", "127.0.0.1", false},
		{"http://0xc0a80001", "http", "192.168.0.1", false},
		{"http://1.2.65535", "http", "1.2.255.255", false},
		{"http://[0:0:0:0:0:0:0:1]", "http", "[::1]", false},
		{"http://[::ffff:127.0.0.1]", "http", "[::ffff:7f00:1]", false},
		{"http://[1:0:0:2:0:0:0:3]", "http", "[1:0:0:2::3]", false},
		{"http://[1:0:0:0:2:0:0:3]", "http", "[1::2:0:0:3]", false},
		{"http://[2001:DB8::]", "http", "[2001:db8::]", false},
		{"http://[1:2:3:4:5:6:7:8]", "http", "[1:2:3:4:5:6:7:8]", false},
		{"view-source:https://Example.com", "https", "example.com", true},
		{"\x00 ws://a.example.com \n", "ws", "a.example.com", false},
		{"javascript:alert(1)", "javascript", "", false},
		{"about:blank#x", "about", "", false},
	}
	for _, tt := range tests {
		u, err := ParseURL(tt.in)
		if err != nil {
			t.Errorf("ParseURL(%q): %v", tt.in, err)
			continue
		}
		if u.Scheme != tt.scheme || u.Host != tt.host || u.ViewSource != tt.viewSource {
			t.Errorf("ParseURL(%q) = scheme %q host %q view-source %v, want %q %q %v", tt.in, u.Scheme, u.Host, u.ViewSource, tt.scheme, tt.host, tt.viewSource)
		}
		if strings.HasPrefix(u.Host, "[") || (u.Host != "" && isDigit(u.Host[len(u.Host)-1])) {
			if !u.Addr.IsValid() {
				t.Errorf("ParseURL(%q): IP host %q without Addr", tt.in, u.Host)
			}
		} else if u.Addr.IsValid() {
			t.Errorf("ParseURL(%q): domain %q with Addr %v", tt.in, u.Host, u.Addr)
		}
	}
}

// TestParseURLPort: the port a URL reaches, as Chrome connects.
func TestParseURLPort(t *testing.T) {
	for in, want := range map[string]uint16{
		"http://a.example/":        80,
		"ws://a.example/":          80,
		"https://a.example/":       443,
		"wss://a.example/":         443,
		"ftp://a.example/":         21,
		"http://a.example:/":       80,
		"https://a.example:80/":    80,
		"http://a.example:09222/":  9222,
		"http://u:p@a.example:81/": 81,
		"http://[::1]:8080/":       8080,
		"http://[::1]/":            80,
		"http://a.example:0/":      0,
		"http://a.example:65535/":  65535,
		"http:\\\\a.example:8\\x":  8,
	} {
		u, err := ParseURL(in)
		if err != nil || u.Port != want {
			t.Errorf("ParseURL(%q).Port = %d, %v; want %d", in, u.Port, err, want)
		}
	}
	for _, in := range []string{"http://a.example:65536/", "http://a.example:8a/", "http://[::1]x:80/"} {
		if _, err := ParseURL(in); err == nil {
			t.Errorf("ParseURL(%q) took a bad port", in)
		}
	}
}

func TestAboutOpaque(t *testing.T) {
	for in, want := range map[string]string{"about:blank": "blank", "about:srcdoc?x": "srcdoc", "about:blank#a?b": "blank", "about:": ""} {
		u, err := ParseURL(in)
		if err != nil || u.Opaque != want {
			t.Errorf("ParseURL(%q).Opaque = %q, %v; want %q", in, u.Opaque, err, want)
		}
	}
}

func TestHostEntries(t *testing.T) {
	tests := []struct {
		entry   string
		match   []string
		noMatch []string
	}{
		{"example.com", []string{"example.com", "EXAMPLE.COM.", "%65xample.com"}, []string{"www.example.com", "evil-example.com", "example.com.evil.net"}},
		{".example.com", []string{"example.com", "a.example.com", "a.b.example.com"}, []string{"notexample.com", "example.com.evil.net", "evil-example.com"}},
		{"Example.COM.", []string{"example.com"}, []string{"a.example.com"}},
		{"*.example.com", []string{"a.example.com"}, []string{"example.com", "a.b.example.com", "aexample.com"}},
		{"**.example.com", []string{"a.example.com", "a.b.example.com"}, []string{"example.com", "example.com.evil.net"}},
		{"api-*.example.com", []string{"api-1.example.com", "api-.example.com"}, []string{"api.example.com", "api-1.x.example.com"}},
		{"{a,b}.example.com", []string{"a.example.com", "b.example.com"}, []string{"c.example.com"}},
		{"ex\u00e1mple.com", []string{"xn--exmple-qta.com", "EX\u00c1MPLE.com"}, []string{"example.com"}},
		{"*.b\u00fccher.de", []string{"www.xn--bcher-kva.de"}, []string{"xn--bcher-kva.de"}},
		{"example\u3002org", []string{"example.org"}, nil},
		{"127.0.0.1", []string{"127.0.0.1", "2130706433", "0x7f.1", "[::ffff:127.0.0.1]"}, []string{"127.0.0.2", "[::1]"}},
		{"2130706433", []string{"127.0.0.1"}, nil},
		{"::1", []string{"[::1]", "[0:0::1]"}, []string{"127.0.0.1"}},
		{"[::1]", []string{"[::1]"}, nil},
		{"::ffff:10.0.0.1", []string{"10.0.0.1", "[::ffff:a00:1]"}, nil},
		{"10.0.0.0/8", []string{"10.1.2.3", "012.0.0.1", "[::ffff:10.9.9.9]"}, []string{"11.0.0.1"}},
		{"fd00::/8", []string{"[fd00::1]"}, []string{"[fe80::1]"}},
		{"10.*.*.*", []string{"10.1.2.3", "167772161"}, []string{"11.1.2.3"}},
		{"[ab].example.com", []string{"a.example.com"}, []string{"c.example.com"}},
	}
	for _, tt := range tests {
		var err error
		l := compileHostList([]string{tt.entry}, func(_ int, _ string, e error) { err = e })
		if err != nil {
			t.Errorf("entry %q: %v", tt.entry, err)
			continue
		}
		for _, h := range tt.match {
			u, err := ParseURL("http://" + h + "/")
			if err != nil {
				t.Fatalf("host %q: %v", h, err)
			}
			if _, ok := l.match(u.Host, u.Addr); !ok {
				t.Errorf("entry %q does not match %q (%s)", tt.entry, h, u.Host)
			}
		}
		for _, h := range tt.noMatch {
			u, err := ParseURL("http://" + h + "/")
			if err != nil {
				t.Fatalf("host %q: %v", h, err)
			}
			if _, ok := l.match(u.Host, u.Addr); ok {
				t.Errorf("entry %q matches %q (%s)", tt.entry, h, u.Host)
			}
		}
	}
}

func TestHostEntryErrors(t *testing.T) {
	for _, entry := range []string{
		"", "  ", "https://example.com", "example.com:8080", "example.com/path", ".127.0.0.1",
		"exa mple.com", "*.exa mple.com", "{a,b", "[a-", "*.b\u00fc*.de", "10.0.0.0/33", "fe80::1%eth0",
		"a..b", ".", "xn--abc.com", "fa\u00df.de", "1.2.3.4.5", "example.com@evil.net", "[::1",
	} {
		var err error
		compileHostList([]string{entry}, func(_ int, _ string, e error) { err = e })
		if err == nil {
			t.Errorf("host entry %q compiled, want an error", entry)
		}
	}
}

func TestSchemeEntries(t *testing.T) {
	p, err := Compile(Config{AllowedSchemes: []string{"HTTPS:", " data "}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	e := p.For("")
	for _, u := range []string{"https://a.test/", "data:,x", "about:blank"} {
		if d := e.URL(u); d.Verdict != Allow {
			t.Errorf("URL(%q) = %+v, want allow", u, d)
		}
	}
	if d := e.URL("http://a.test/"); d.Verdict != Deny || d.Rule != RuleURLScheme {
		t.Errorf("http refused by scheme: got %+v", d)
	}
	for _, bad := range []string{"", "https://", "1http", "ht tp", "*"} {
		if _, err := Compile(Config{AllowedSchemes: []string{bad}}, nil); err == nil {
			t.Errorf("scheme entry %q compiled, want an error", bad)
		}
	}
}

func TestURLReasons(t *testing.T) {
	e := mustCompile(t, Config{AllowedHosts: []string{".example.com"}, BlockedHosts: []string{".evil.net"}, BlockPrivateAddresses: true}).For("")
	for u, want := range map[string]string{
		"file:///etc/passwd":       "file: URLs are not allowed (scheme fence)",
		"javascript:alert(1)":      "javascript: URLs are not allowed (scheme fence)",
		"view-source:https://x.co": "view-source: URLs are not allowed (scheme fence)",
		"https://other.net/":       "host other.net is not in the allowed hosts",
		"https://a.evil.net/":      "host a.evil.net is blocked (entry .evil.net)",
		"http://2130706433/":       "host 127.0.0.1 is a loopback address and private addresses are blocked",
		"http://localhost/":        "host localhost is a loopback name and private addresses are blocked",
		"about:version":            "about:version is not allowed: only about:blank and about:srcdoc are",
		"":                         "the URL is empty",
	} {
		d := e.URL(u)
		if d.Reason != want {
			t.Errorf("URL(%q).Reason = %q, want %q", u, d.Reason, want)
		}
		if d.Message() != MessagePrefix+want {
			t.Errorf("URL(%q).Message() = %q", u, d.Message())
		}
	}
	long := "about:" + strings.Repeat("\x01é", 200)
	if r := e.URL(long).Reason; len(r) > 200 || strings.ContainsRune(r, '\x01') {
		t.Errorf("client text in a reason is not clipped: %q", r)
	}
}

func mustCompile(t testing.TB, c Config) *Policy {
	t.Helper()
	p, err := Compile(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
