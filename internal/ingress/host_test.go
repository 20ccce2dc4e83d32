package ingress

import (
	"strings"
	"testing"
)

func TestHostAllowed(t *testing.T) {
	l, err := compileHosts([]string{"relay.example.com", "Relay2.Example.COM.", "203.0.113.7", "[2001:db8::7]"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		host string
		want bool
	}{
		{"", true},
		{"localhost", true},
		{"localhost:9222", true},
		{"LOCALHOST.:9222", true},
		{"127.0.0.1", true},
		{"127.0.0.1:9222", true},
		{"127.8.9.10:1", true},
		{"[::1]:9222", true},
		{"::1", true},
		{"[::ffff:127.0.0.1]:9222", true},
		{"relay.example.com", true},
		{"relay.example.com:443", true},
		{"RELAY.example.com.", true},
		{"relay2.example.com:8443", true},
		{"203.0.113.7:9222", true},
		{"[2001:db8::7]:9222", true},
		{"[2001:0db8:0::7]", true},

		{"evil.example", false},
		{"evil.example:9222", false},
		{"127.0.0.1.evil.example:9222", false},
		{"localhost.evil.example", false},
		{"foo.localhost", false},
		{"relay.example.com.evil.example", false},
		{"sub.relay.example.com", false},
		{"example.com", false},
		{"0.0.0.0:9222", false},
		{"[::]:9222", false},
		{"10.0.0.1:9222", false},
		{"203.0.113.8", false},
		{"[fe80::1%25lo]:9222", false},
		{"127.1", false},
		{"2130706433", false},
	}
	for _, tt := range tests {
		if got := l.allowed(tt.host); got != tt.want {
			t.Errorf("allowed(%q) = %v, want %v", tt.host, got, tt.want)
		}
	}
}

func TestHostEntries(t *testing.T) {
	good := map[string]string{
		"relay.example.com":  "relay.example.com",
		"Relay.Example.com.": "relay.example.com",
		"xn--bcher-kva.de":   "xn--bcher-kva.de",
		"203.0.113.7":        "203.0.113.7",
		"[::1]":              "::1",
		"2001:db8::7":        "2001:db8::7",
		"my_host":            "my_host",
	}
	for in, want := range good {
		got, err := hostEntry(in)
		if err != nil || got != want {
			t.Errorf("hostEntry(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", ".", "https://relay.example.com", "relay.example.com:443", "relay.example.com/x", "*.example.com", "a..b", "bücher.de", "user@host", strings.Repeat("a", 64) + ".com", "host name"} {
		if got, err := hostEntry(in); err == nil {
			t.Errorf("hostEntry(%q) = %q, want an error", in, got)
		}
	}
}

func FuzzHostAllowed(f *testing.F) {
	for _, h := range []string{"localhost:9222", "127.0.0.1", "[::1]:1", "evil.example", "relay.example.com.", "[::ffff:127.0.0.1]", "0.0.0.0"} {
		f.Add(h)
	}
	l, err := compileHosts([]string{"relay.example.com"})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, host string) {
		got := l.allowed(host)
		// Whatever is allowed names loopback, localhost or the one
		// configured name: the port and the spelling do not matter.
		n := normaliseHost(host)
		if got && host != "" && n != "localhost" && n != "relay.example.com" && !strings.HasPrefix(n, "127.") && n != "::1" {
			t.Fatalf("allowed(%q) (normalised %q)", host, n)
		}
	})
}
