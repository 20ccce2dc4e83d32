package denylist

import "testing"

func TestTiers(t *testing.T) {
	p, err := Compile(Config{Tiers: []TierRule{
		{Hosts: []string{".bank.example", "vault.example.net"}, Tier: "blind"},
		{Hosts: []string{"mail.example.com", ".bank.example"}, Tier: "read-only"},
		{Hosts: []string{"10.0.0.0/8"}, Tier: "read-only"},
	}}, map[string]Profile{
		"strict": {DefaultTier: "read-only"},
		"other":  {Tiers: []TierRule{{Hosts: []string{"a.test"}, Tier: "blind"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		profile, url, tier, host string
	}{
		{"", "https://bank.example/login", TierBlind, "bank.example"},
		{"", "https://www.BANK.example./x", TierBlind, "www.bank.example"},
		{"", "https://vault.example.net/", TierBlind, "vault.example.net"},
		{"", "https://x.vault.example.net/", TierFull, "x.vault.example.net"},
		{"", "https://mail.example.com/inbox", TierReadOnly, "mail.example.com"},
		{"", "http://10.1.2.3:8080/", TierReadOnly, "10.1.2.3"},
		{"", "https://example.com/", TierFull, "example.com"},
		{"", "https://bank.example.evil.test/", TierFull, "bank.example.evil.test"},
		{"", "blob:https://bank.example/5e1f-2a", TierBlind, "bank.example"},
		{"", "Filesystem:https://mail.example.com/temporary/x", TierReadOnly, "mail.example.com"},
		{"", "blob:null/5e1f", TierFull, ""},
		{"", "about:blank", TierFull, ""},
		{"", "chrome-error://chromewebdata/", TierFull, ""},
		{"", "wss://bank.example/", TierFull, ""},
		{"strict", "https://example.com/", TierReadOnly, "example.com"},
		{"strict", "https://bank.example/", TierBlind, "bank.example"},
		{"other", "https://a.test/", TierBlind, "a.test"},
		{"other", "https://bank.example/", TierFull, "bank.example"},
	} {
		tier, rule, host := p.For(tc.profile).Tier(tc.url)
		if tier != tc.tier || host != tc.host {
			t.Errorf("%s %s: %s %s %s, want %s %s", tc.profile, tc.url, tier, rule, host, tc.tier, tc.host)
		}
		if (tier == TierFull) != (rule == "") {
			t.Errorf("%s: rule %q for tier %s", tc.url, rule, tier)
		}
	}
	for _, bad := range []Config{
		{Tiers: []TierRule{{Hosts: []string{"a.test"}, Tier: "full"}}},
		{Tiers: []TierRule{{Hosts: []string{"a.test"}, Tier: "hidden"}}},
		{Tiers: []TierRule{{Tier: "blind"}}},
		{Tiers: []TierRule{{Hosts: []string{"https://a.test/"}, Tier: "blind"}}},
		{DefaultTier: "secret"},
	} {
		if _, err := Compile(bad, nil); err == nil {
			t.Errorf("accepted %+v", bad)
		}
	}
}

func FuzzTier(f *testing.F) {
	for _, s := range []string{"https://bank.example/", "https://a.bank.example.:443/", "http://[::1]/", "https://BANK.example/", "https://bank.example@evil.test/"} {
		f.Add(s)
	}
	p, err := Compile(Config{Tiers: []TierRule{{Hosts: []string{".bank.example"}, Tier: "blind"}}}, nil)
	if err != nil {
		f.Fatal(err)
	}
	e := p.For("")
	f.Fuzz(func(t *testing.T, raw string) {
		tier, _, host := e.Tier(raw)
		// A page the fence would call bank.example, or a subdomain, is blind.
		u, err := ParseURL(raw)
		if err == nil && (u.Scheme == "http" || u.Scheme == "https") && (u.Host == "bank.example" || len(u.Host) > 13 && u.Host[len(u.Host)-13:] == ".bank.example") {
			if tier != TierBlind || host != u.Host {
				t.Fatalf("%q: %s %s", raw, tier, host)
			}
		}
	})
}
