package denylist

import "testing"

var sink Decision

func benchPolicy(b testing.TB, c Config) *Effective {
	p, err := Compile(c, nil)
	if err != nil {
		b.Fatal(err)
	}
	return p.For("")
}

var globConfig = Config{
	DenyMethods:       []string{"Network.*Cookie*", "DOM.set{FileInputFiles,OuterHTML}", "Storage.clearDataFor*"},
	AckAndDropMethods: []string{"Emulation.setGeolocation*"},
}

// The command fence sits on every client message: for a command with no
// URL it must not allocate.
func TestMethodNoURLAllocs(t *testing.T) {
	params := []byte(`{"expression":"document.title","returnByValue":true}`)
	for name, c := range map[string]Config{"default": {}, "globs": globConfig} {
		e := benchPolicy(t, c)
		for _, m := range []string{"Runtime.evaluate", "Storage.getCookies", "Browser.setDownloadBehavior", "Network.getCookie"} {
			if n := testing.AllocsPerRun(100, func() { sink = e.Method(m, params) }); n != 0 && !(name == "globs" && m == "Network.getCookie") {
				t.Errorf("%s: Method(%q) allocates %v times per call", name, m, n)
			}
		}
	}
}

func BenchmarkMethodNoURL(b *testing.B) {
	e := benchPolicy(b, Config{})
	params := []byte(`{"expression":"document.title","returnByValue":true}`)
	b.ReportAllocs()
	for b.Loop() {
		sink = e.Method("Runtime.evaluate", params)
	}
}

func BenchmarkMethodNoURLWithGlobs(b *testing.B) {
	e := benchPolicy(b, globConfig)
	params := []byte(`{"expression":"document.title","returnByValue":true}`)
	b.ReportAllocs()
	for b.Loop() {
		sink = e.Method("Runtime.evaluate", params)
	}
}

func BenchmarkMethodDeniedDefault(b *testing.B) {
	e := benchPolicy(b, Config{})
	b.ReportAllocs()
	for b.Loop() {
		sink = e.Method("Storage.getCookies", nil)
	}
}

func BenchmarkMethodNavigate(b *testing.B) {
	e := benchPolicy(b, Config{AllowedHosts: []string{".example.com"}})
	params := []byte(`{"url":"https://www.example.com/path?q=1","frameId":"5A0F3E2D"}`)
	b.ReportAllocs()
	for b.Loop() {
		sink = e.Method("Page.navigate", params)
	}
}

func BenchmarkURL(b *testing.B) {
	e := benchPolicy(b, Config{AllowedHosts: []string{".example.com", "example.org", "*.cdn.example.net"}, BlockedHosts: []string{".evil.net"}, BlockPrivateAddresses: true})
	for _, bc := range []struct{ name, url string }{
		{"plain", "https://www.example.com/path?q=1"},
		{"upper", "HTTPS://WWW.EXAMPLE.COM/path"},
		{"idn", "https://b\u00fccher.example.com/"},
		{"ipv4", "http://0x7f.1/"},
		{"ipv6", "http://[::ffff:127.0.0.1]/"},
		{"scheme", "javascript:alert(1)"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sink = e.URL(bc.url)
			}
		})
	}
}
