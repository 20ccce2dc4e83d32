package denylist

import (
	"bufio"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// dnrVerdict evaluates rules the way Chrome's declarativeNetRequest does
// for a main-frame request to url with canonical host host: the matching
// rule of highest priority decides (allow before block at equal
// priority); no matching rule lets the request through.
func dnrVerdict(t testing.TB, rules []DNRRule, url, host string) bool {
	best, bestAllow, found := -1, false, false
	for _, r := range rules {
		c := r.Condition
		if !slices.Contains(c.ResourceTypes, "main_frame") {
			continue
		}
		if len(c.RequestDomains) > 0 {
			in := false
			for _, d := range c.RequestDomains {
				if host == d || strings.HasSuffix(host, "."+d) {
					in = true
				}
			}
			if !in {
				continue
			}
		}
		if c.RegexFilter != "" {
			re, err := regexp.Compile(c.RegexFilter)
			if err != nil {
				t.Fatalf("rule %d: %v", r.ID, err)
			}
			if !re.MatchString(url) {
				continue
			}
		}
		allow := r.Action.Type == "allow"
		if !found || r.Priority > best || r.Priority == best && allow && !bestAllow {
			best, bestAllow, found = r.Priority, allow, true
		}
	}
	return !found || bestAllow
}

var dnrConfigs = map[string]Config{
	"allow-list": {AllowedHosts: []string{"example.com", ".example.org", "*.example.net", "**.deep.test", "api-?.svc.test", "{a,b}.alt.test", "127.0.0.1", "10.1.0.0/16", "::1", "[2001:db8::]/32"}, BlockedHosts: []string{"admin.example.org", "10.1.2.0/24", "*.evil.example.net"}},
	"block-list": {BlockedHosts: []string{"evil.com", ".bad.org", "192.168.0.0/16", "fd00::/8", "x*.glob.test"}},
	"private":    {BlockPrivateAddresses: true, AllowedHosts: []string{".example.com", "10.0.0.0/8"}},
}

// The first-request rules never let through what the fence refuses, on
// the canonical form of every URL of the corpus and of hosts made up from
// the configurations, with and without userinfo, port and trailing dot.
func TestNetworkRulesNeverLooser(t *testing.T) {
	var hosts []string
	f, err := os.Open("testdata/urls.tsv")
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		if len(cols) < 3 || strings.HasPrefix(cols[0], "#") {
			continue
		}
		raw, err := strconv.Unquote(`"` + strings.ReplaceAll(cols[2], `"`, `\"`) + `"`)
		if err != nil {
			continue
		}
		if u, err := ParseURL(raw); err == nil && u.Host != "" {
			hosts = append(hosts, u.Host)
		}
	}
	f.Close()
	hosts = append(hosts, "example.com", "www.example.com", "example.org", "a.b.example.org", "admin.example.org", "x.admin.example.org",
		"example.net", "a.example.net", "a.b.example.net", "x.evil.example.net", "deep.test", "a.deep.test", "a.b.deep.test",
		"api-1.svc.test", "api-12.svc.test", "a.alt.test", "c.alt.test", "127.0.0.1", "127.0.0.2", "10.1.0.1", "10.1.2.3", "10.2.0.1",
		"[::1]", "[::2]", "[2001:db8::1]", "evil.com", "www.evil.com", "bad.org", "a.bad.org", "192.168.1.1", "[fd00::1]",
		"x1.glob.test", "y.glob.test", "localhost", "a.localhost", "10.9.9.9", "172.16.0.1", "8.8.8.8", "[::ffff:7f00:1]")
	for name, cfg := range dnrConfigs {
		p, err := Compile(cfg, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		e := p.For("")
		rules := e.NetworkRules()
		if len(rules) == 0 {
			t.Fatalf("%s: no rules", name)
		}
		for _, h := range hosts {
			for _, form := range []string{"https://" + h + "/", "http://u:p@" + h + ":8080/x?y#z", "https://" + h + "./"} {
				fence := e.URL(form).Verdict == Allow
				first := dnrVerdict(t, rules, form, strings.Trim(strings.TrimSuffix(h, "."), "[]"))
				if first && !fence {
					t.Errorf("%s: %s: the first-request rules let through what the fence refuses", name, form)
				}
				// The other way is allowed only for what the rules cannot
				// say: IPv6 prefixes (widened to every IPv6 literal in a
				// block list, left out of an allow list) and IPv4-mapped
				// IPv6 literals, which the fence reads as IPv4.
				if fence && !first && !strings.HasPrefix(h, "[") {
					t.Errorf("%s: %s: the first-request rules refuse what the fence allows", name, form)
				}
			}
		}
	}
}

func TestNetworkRulesOnlyWhenFencing(t *testing.T) {
	p, err := Compile(Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r := p.For("").NetworkRules(); r != nil {
		t.Fatalf("rules for a policy that refuses no host: %v", r)
	}
}

func TestGlobRegex(t *testing.T) {
	for _, tc := range []struct {
		glob string
		ok   []string
		not  []string
	}{
		{"*.example.net", []string{"a.example.net"}, []string{"example.net", "a.b.example.net", "aexample.net"}},
		{"**.example.net", []string{"a.example.net", "a.b.example.net"}, []string{"example.net"}},
		{"api-?.svc", []string{"api-1.svc"}, []string{"api-12.svc", "api-.svc"}},
		{"{a,b}.alt", []string{"a.alt", "b.alt"}, []string{"c.alt"}},
		{"[!x]y.z", []string{"ay.z"}, []string{"xy.z"}},
	} {
		re, ok := globRegex(tc.glob)
		if !ok {
			t.Fatalf("%s: not translated", tc.glob)
		}
		rx := regexp.MustCompile("^" + re + "$")
		for _, h := range tc.ok {
			if !rx.MatchString(h) {
				t.Errorf("%s should match %s (regex %s)", tc.glob, h, re)
			}
		}
		for _, h := range tc.not {
			if rx.MatchString(h) {
				t.Errorf("%s should not match %s (regex %s)", tc.glob, h, re)
			}
		}
	}
}
