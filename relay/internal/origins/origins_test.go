package origins

import (
	"encoding/json"
	"net"
	"regexp"
	"strconv"
	"testing"

	"github.com/cdprelay/cdprelay/denylist"
	"github.com/cdprelay/cdprelay/relay/internal/cdp"
)

// ownCases are URLs as a client, a page or Chrome may spell them, and
// whether they reach a relay listening on 127.0.0.1:9222 with the public
// URL https://relay.example.com/relay-1.
var ownCases = []struct {
	url string
	own bool
}{
	{"http://127.0.0.1:9222/", true},
	{"http://127.0.0.1:9222", true},
	{"HTTP://127.0.0.1:9222/json/version", true},
	{"http://127.0.0.1:9222/json/version?x#y", true},
	{"ws://127.0.0.1:9222/devtools/browser/x", true},
	{"wss://127.0.0.1:9222/viewer", true},
	{"https://127.0.0.1:9222/", true},
	{"http://127.1:9222/", true},
	{"http://0x7f.1:9222/", true},
	{"http://0x7F.0.0.1:9222/", true},
	{"http://2130706433:9222/", true},
	{"http://0177.0.0.1:9222/", true},
	{"http://127.0.0.1.:9222/", true},
	{"http://127.5.6.7:9222/", true},
	{"http://%31%32%37.0.0.1:9222/", true},
	{"http://localhost:9222/", true},
	{"http://LOCALHOST:9222/", true},
	{"http://localhost.:9222/", true},
	{"http://a.b.localhost:9222/", true},
	{"http://A.Localhost.:9222/", true},
	{"http://localhost6:9222/", true},
	{"http://localhost.localdomain:9222/", true},
	{"http://[::1]:9222/", true},
	{"http://[0:0:0:0:0:0:0:1]:9222/", true},
	{"http://[::ffff:127.0.0.1]:9222/", true},
	{"http://[::ffff:7f00:1]:9222/", true},
	{"http://[::]:9222/", true},
	{"http://0.0.0.0:9222/", true},
	{"http://0:9222/", true},
	{"http://user:pw@127.0.0.1:9222/", true},
	{"http://example.com@127.0.0.1:9222/", true},
	{"http://a@b@localhost:9222/", true},
	{"http://127.0.0.1:09222/", true},
	{"http://127.0.0.1:0009222/x", true},
	{"blob:http://127.0.0.1:9222/0b1e", true},
	{"BLOB:http://localhost:9222/0b1e", true},
	{"filesystem:http://127.0.0.1:9222/temporary/x", true},
	{"view-source:http://127.0.0.1:9222/", true},
	{" \t http://127.0.0.1:9222/ \n", true},
	{"http://127.0.0.1:92\t22/", true},
	{"http:\\\\127.0.0.1:9222\\json", true},
	{"http:127.0.0.1:9222/", true},
	{"https://relay.example.com/", true},
	{"https://relay.example.com/relay-1/", true},
	{"https://RELAY.Example.COM./x", true},
	{"wss://relay.example.com/relay-1/cdp/x", true},
	{"https://relay.example.com:443/", true},
	{"http://relay.example.com:443/", true},
	{"https://user@relay.example.com/", true},

	{"http://127.0.0.1:9223/", false},
	{"http://127.0.0.1/", false},
	{"http://127.0.0.1:80/", false},
	{"http://localhost/", false},
	{"http://128.0.0.1:9222/", false},
	{"http://126.255.255.255:9222/", false},
	{"http://example.com:9222/", false},
	{"http://localhost.example.com:9222/", false},
	{"http://localhostx:9222/", false},
	{"http://127.0.0.1.example.com:9222/", false},
	{"http://[::2]:9222/", false},
	{"http://[::ffff:7f00:1]:9223/", false},
	{"http://10.0.0.1:9222/", false},
	{"https://relay.example.com:8443/", false},
	{"http://relay.example.com/", false},
	{"https://relay.example.org/", false},
	{"https://xrelay.example.com/", false},
	{"https://relay.example.com.evil.net/", false},
	{"https://example.com/?u=http://127.0.0.1:9222/", false},
	{"http://example.com/#127.0.0.1:9222", false},
	{"http://example.com/127.0.0.1:9222/", false},
	{"http://127.0.0.1:9222@example.com/", false},
	{"ftp://127.0.0.1:9222/", false},
	{"about:blank", false},
	{"chrome://version", false},
	{"data:text/html,http://127.0.0.1:9222/", false},
	{"javascript:location='http://127.0.0.1:9222/'", false},
	{"", false},
	{"not a url", false},
	{"/json/version", false},
	{"http://127.0.0.1:99999/", false},
	{"http://[::1/", false},
}

func testOwn(t testing.TB) *Origins {
	t.Helper()
	o, err := NewOrigins("127.0.0.1:9222", "https://relay.example.com/relay-1")
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func TestOwnOriginsMatch(t *testing.T) {
	o := testOwn(t)
	for _, c := range ownCases {
		if got := o.Match(c.url); got != c.own {
			t.Errorf("Match(%q) = %v, want %v", c.url, got, c.own)
		}
	}
}

// TestOwnOriginsListeners: which names reach a listener, by the address it
// listens on.
func TestOwnOriginsListeners(t *testing.T) {
	for _, tc := range []struct {
		listen string
		yes    []string
		no     []string
	}{
		{"[::1]:8000", []string{"http://[::1]:8000/", "http://127.0.0.1:8000/", "http://localhost:8000/"}, []string{"http://[::1]:8001/"}},
		{"localhost:8000", []string{"http://127.0.0.1:8000/", "http://x.localhost:8000/"}, []string{"http://example.com:8000/"}},
		{"LOCALHOST.:8000", []string{"http://[::1]:8000/"}, nil},
		{"0.0.0.0:8000", []string{"http://127.0.0.1:8000/", "http://0.0.0.0:8000/", "http://[::]:8000/", "http://localhost:8000/"}, []string{"http://example.com:8000/", "http://127.0.0.1:8001/"}},
		{":8000", []string{"http://127.0.0.1:8000/", "http://[::1]:8000/"}, []string{"http://example.com:8000/"}},
		{"[::]:80", []string{"http://localhost/", "http://127.0.0.1:80/", "ws://[::1]/"}, []string{"https://localhost/", "http://localhost:8080/"}},
		{"192.0.2.7:8000", []string{"http://192.0.2.7:8000/", "http://[::ffff:192.0.2.7]:8000/"}, []string{"http://127.0.0.1:8000/", "http://localhost:8000/", "http://192.0.2.8:8000/"}},
		{"relay.lan:8000", []string{"http://relay.lan:8000/", "http://RELAY.lan.:8000/"}, []string{"http://127.0.0.1:8000/"}},
		{"127.0.0.1:0", nil, []string{"http://127.0.0.1:0/", "http://127.0.0.1:9222/"}},
	} {
		o, err := NewOrigins(tc.listen, "")
		if err != nil {
			t.Fatalf("%s: %v", tc.listen, err)
		}
		for _, u := range tc.yes {
			if !o.Match(u) {
				t.Errorf("listening on %s: %s is not the relay's", tc.listen, u)
			}
		}
		for _, u := range tc.no {
			if o.Match(u) {
				t.Errorf("listening on %s: %s is the relay's", tc.listen, u)
			}
		}
	}
	for _, bad := range []string{"127.0.0.1", "127.0.0.1:x", "127.0.0.1:70000"} {
		if _, err := NewOrigins(bad, ""); err == nil {
			t.Errorf("NewOrigins(%q) took it", bad)
		}
	}
}

// TestOwnOriginsLearnt: a port 0 and the addresses connections arrive on
// are learnt; nothing is without a listener.
func TestOwnOriginsLearnt(t *testing.T) {
	o, err := NewOrigins("127.0.0.1:0", "")
	if err != nil {
		t.Fatal(err)
	}
	if !o.Learn(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5555}) {
		t.Fatal("a new local address was not learnt")
	}
	if o.Learn(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5555}) {
		t.Error("a known one was learnt again")
	}
	if o.Learn(&net.TCPAddr{IP: net.ParseIP("::1"), Port: 5555}) {
		t.Error("another loopback address at a known port was learnt again")
	}
	for _, u := range []string{"http://localhost:5555/", "http://[::1]:5555/", "ws://127.9.9.9:5555/"} {
		if !o.Match(u) {
			t.Errorf("%s is not the relay's after learning 127.0.0.1:5555", u)
		}
	}
	o.Learn(&net.TCPAddr{IP: net.IPv4(192, 0, 2, 7), Port: 5555})
	if !o.Match("http://192.0.2.7:5555/") || o.Match("http://192.0.2.8:5555/") {
		t.Error("a learnt address is not matched exactly")
	}
	for i := range 2 * maxLearnt {
		o.Learn(&net.TCPAddr{IP: net.IPv4(192, 0, 2, byte(i)), Port: 6000})
	}
	if n := len(*o.learnt.Load()); n > maxLearnt {
		t.Errorf("%d addresses learnt, more than %d", n, maxLearnt)
	}
	none, _ := NewOrigins("", "")
	if none.Learn(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 5555}) || none.Match("http://127.0.0.1:5555/") {
		t.Error("learnt without a listener")
	}
}

// canonical is the URL as Chrome would show it in a request: what the
// first-request rules and the backstop's patterns see.
func canonical(u denylist.ParsedURL) string {
	return u.Scheme + "://" + u.Host + ":" + strconv.Itoa(int(u.Port)) + "/x"
}

// canonicalDefault is the same without the port, for a scheme's default.
func canonicalDefault(u denylist.ParsedURL) (string, bool) {
	switch {
	case (u.Scheme == "http" || u.Scheme == "ws") && u.Port == 80, (u.Scheme == "https" || u.Scheme == "wss") && u.Port == 443:
		return u.Scheme + "://" + u.Host + "/x", true
	}
	return "", false
}

// checkRulesAgree checks that the browser-side rules of o block exactly
// what o.Match says of raw, on the URL's canonical forms, and that the
// backstop's patterns pause it.
func checkRulesAgree(t testing.TB, o *Origins, raw string) {
	u, err := denylist.ParseURL(raw)
	if err != nil || u.Host == "" || u.Scheme == "ftp" {
		return
	}
	own := o.Match(raw)
	var res []*regexp.Regexp
	for _, r := range o.dnrRules(1) {
		res = append(res, regexp.MustCompile("(?i)"+r.Condition.RegexFilter))
	}
	forms := []string{canonical(u)}
	if d, ok := canonicalDefault(u); ok {
		forms = append(forms, d)
	}
	for _, form := range forms {
		blocked := false
		for _, re := range res {
			blocked = blocked || re.MatchString(form)
		}
		if blocked != own {
			t.Errorf("%q (as %q): the first-request rules block it: %v; the relay's match: %v", raw, form, blocked, own)
		}
		if own {
			paused := false
			for _, p := range o.FetchPatterns() {
				paused = paused || cdp.WildcardMatch(p.URLPattern, form)
			}
			if !paused {
				t.Errorf("%q (as %q): no backstop pattern pauses it", raw, form)
			}
		}
	}
}

func TestOwnOriginsRulesAgree(t *testing.T) {
	for _, listen := range []string{"127.0.0.1:9222", "0.0.0.0:80", "192.0.2.7:443"} {
		o, err := NewOrigins(listen, "https://relay.example.com/relay-1")
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range ownCases {
			checkRulesAgree(t, o, c.url)
		}
		for _, u := range []string{"http://192.0.2.7:443/", "https://192.0.2.7/", "http://localhost/", "http://[::1]/", "https://127.0.0.1/"} {
			checkRulesAgree(t, o, u)
		}
	}
}

// TestOwnOriginsDNRRules: the rules block every resource type, above the
// policy's rules, numbered after them.
func TestOwnOriginsDNRRules(t *testing.T) {
	o := testOwn(t)
	merged, err := o.WithOwnRules([]byte(`[{"id":1,"priority":1,"action":{"type":"block"},"condition":{"resourceTypes":["main_frame"]}},{"id":7,"priority":2,"action":{"type":"allow"},"condition":{"resourceTypes":["main_frame"]}}]`))
	if err != nil {
		t.Fatal(err)
	}
	var rules []denylist.DNRRule
	if err := json.Unmarshal(merged, &rules); err != nil {
		t.Fatal(err)
	}
	if len(rules) < 3 {
		t.Fatalf("rules: %s", merged)
	}
	for i, r := range rules[2:] {
		if r.ID != 8+i || r.Priority <= 3 || r.Action.Type != "block" || len(r.Condition.ResourceTypes) != len(allResourceTypes) {
			t.Errorf("rule %+v", r)
		}
	}
	if _, err := o.WithOwnRules([]byte(`{"not":"a list"}`)); err == nil {
		t.Error("rules that are not a list were taken")
	}
	none, _ := NewOrigins("", "")
	if got, _ := none.WithOwnRules(nil); got != nil {
		t.Errorf("no own origins and no policy: %s", got)
	}
}

func FuzzOwnOrigins(f *testing.F) {
	for _, c := range ownCases {
		f.Add(c.url)
	}
	o := testOwn(f)
	f.Fuzz(func(t *testing.T, raw string) {
		own := o.Match(raw)
		if u, err := denylist.ParseURL(raw); err == nil && u.Host != "" && u.Scheme != "ftp" {
			if own != o.Match(canonical(u)) {
				t.Errorf("%q is the relay's: %v; its canonical form %q: %v", raw, own, canonical(u), !own)
			}
		} else if own && err != nil {
			t.Errorf("%q cannot be parsed and is the relay's", raw)
		}
		checkRulesAgree(t, o, raw)
	})
}
