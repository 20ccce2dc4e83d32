package denylist

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestDefaultRules(t *testing.T) {
	e := mustCompile(t, Config{}).For("")
	tests := []struct {
		method string
		params string
		want   Verdict
		rule   string
		reason string
	}{
		{"Storage.getCookies", `{}`, Deny, "method:Storage.getCookies", "Storage.getCookies reads the person's cookies"},
		{"Storage.setCookies", `{"cookies":[]}`, Deny, "method:Storage.setCookies", "Storage.setCookies writes the person's cookies"},
		{"Storage.clearCookies", ``, Deny, "method:Storage.clearCookies", "Storage.clearCookies deletes the person's cookies"},
		{"Network.getAllCookies", ``, Deny, "method:Network.getAllCookies", "Network.getAllCookies reads the person's cookies"},
		{"Network.getCookies", `{"urls":["https://a.test"]}`, Deny, "method:Network.getCookies", "Network.getCookies reads the person's cookies"},
		{"Network.setCookie", `{"name":"a","value":"b"}`, Deny, "method:Network.setCookie", "Network.setCookie writes the person's cookies"},
		{"Network.setCookies", `{"cookies":[]}`, Deny, "method:Network.setCookies", "Network.setCookies writes the person's cookies"},
		{"Network.deleteCookies", `{"name":"a"}`, Deny, "method:Network.deleteCookies", "Network.deleteCookies deletes the person's cookies"},
		{"Network.clearBrowserCookies", ``, Deny, "method:Network.clearBrowserCookies", "Network.clearBrowserCookies deletes the person's cookies"},
		{"Browser.close", ``, Deny, "method:Browser.close", "Browser.close would close the person's browser"},
		// The relay answers it itself, with the folders the operator allows.
		{"Browser.setDownloadBehavior", `{"behavior":"allow","downloadPath":"/tmp"}`, Allow, "", ""},
		{"Target.createBrowserContext", `{"proxyServer":"http://proxy.test:8080"}`, Deny, "method:Target.createBrowserContext+proxy", ""},
		{"Target.createBrowserContext", `{"proxyBypassList":"<local>"}`, Deny, "method:Target.createBrowserContext+proxy", ""},
		{"Target.createBrowserContext", `{"proxyServer":null}`, Deny, "method:Target.createBrowserContext+proxy", ""},
		{"Target.createBrowserContext", `{"disposeOnDetach":true,"proxy\u0053erver":"x"}`, Deny, "method:Target.createBrowserContext+proxy", ""},
		{"Target.createBrowserContext", `{"proxyServer":"x","proxyServer":"y"}`, Deny, "method:Target.createBrowserContext+proxy", ""},
		{"Target.createBrowserContext", `[1]`, Deny, "method:Target.createBrowserContext+proxy", ""},
		{"Target.createBrowserContext", `{"disposeOnDetach":true}`, Allow, "", ""},
		{"Target.createBrowserContext", ``, Allow, "", ""},
		{"Target.createBrowserContext", `null`, Allow, "", ""},
		{"Target.createBrowserContext", `{"ProxyServer":"x"}`, Allow, "", ""},
		{"Target.createBrowserContext", `{"options":{"proxyServer":"x"}}`, Allow, "", ""},
		{"Runtime.evaluate", `{"expression":"1"}`, Allow, "", ""},
		{"Browser.getVersion", ``, Allow, "", ""},
		{"storage.getCookies", ``, Allow, "", ""}, // Chrome dispatches case-sensitively: no such method
		{"Storage.getCookies ", ``, Allow, "", ""},
		{"", ``, Allow, "", ""},
	}
	for _, tt := range tests {
		d := e.Method(tt.method, []byte(tt.params))
		if d.Verdict != tt.want || d.Rule != tt.rule {
			t.Errorf("Method(%q, %s) = %v %q (%s), want %v %q", tt.method, tt.params, d.Verdict, d.Rule, d.Reason, tt.want, tt.rule)
		}
		if tt.reason != "" && d.Reason != tt.reason {
			t.Errorf("Method(%q).Reason = %q, want %q", tt.method, d.Reason, tt.reason)
		}
		if d.Verdict != Allow && d.Reason == "" {
			t.Errorf("Method(%q): refused without a reason", tt.method)
		}
	}
	for _, r := range DefaultMethodRules() {
		if d := e.Method(r.Method, triggers(r.Method)); d.Verdict != r.Verdict || d.Rule != r.Rule || d.Reason != r.Reason {
			t.Errorf("default rule %s: got %+v", r.Method, d)
		}
	}
	// The conditional rules hold only when their condition does.
	for _, tc := range []struct {
		method, params string
		want           Verdict
	}{
		{"Network.setExtraHTTPHeaders", `{"headers":{"X-Test":"1"}}`, Allow},
		{"Network.setExtraHTTPHeaders", `{"headers":{"COOKIE":"sid=1"}}`, Deny},
		{"Network.setExtraHTTPHeaders", `{"headers":{" cookie ":"sid=1"}}`, Deny},
		{"Storage.clearDataForOrigin", `{"origin":"https://a.test","storageTypes":"local_storage,indexeddb"}`, Allow},
		{"Storage.clearDataForOrigin", `{"origin":"https://a.test","storageTypes":"local_storage, cookies"}`, Deny},
		{"Storage.clearDataForStorageKey", `{"storageKey":"x","storageTypes":"all"}`, Deny},
		{"Storage.clearDataForOrigin", `{"storageTypes":"cookies","storageTypes":"local_storage"}`, Deny},
	} {
		if d := e.Method(tc.method, []byte(tc.params)); d.Verdict != tc.want {
			t.Errorf("Method(%s, %s) = %+v, want %v", tc.method, tc.params, d, tc.want)
		}
	}
}

// triggers are params that make a default rule apply.
func triggers(method string) []byte {
	switch method {
	case "Network.setExtraHTTPHeaders":
		return []byte(`{"headers":{"Cookie":"a=b"}}`)
	case "Storage.clearDataForOrigin", "Storage.clearDataForStorageKey":
		return []byte(`{"storageTypes":"cookies"}`)
	}
	return []byte(`{"proxyServer":"x"}`)
}

func TestDefaultMethodRulesIsACopy(t *testing.T) {
	proxy := func(rules []MethodRule) *MethodRule {
		for i := range rules {
			if len(rules[i].WhenParams) > 0 {
				return &rules[i]
			}
		}
		t.Fatal("no rule with WhenParams")
		return nil
	}
	rules := DefaultMethodRules()
	rules[0].Verdict = Allow
	proxy(rules).WhenParams[0] = "x"
	again := DefaultMethodRules()
	if again[0].Verdict != Deny || proxy(again).WhenParams[0] != "proxyServer" {
		t.Fatal("DefaultMethodRules shares its table with the caller")
	}
}

func TestNoDefaults(t *testing.T) {
	e := mustCompile(t, Config{NoDefaults: true}).For("")
	for _, r := range DefaultMethodRules() {
		if d := e.Method(r.Method, triggers(r.Method)); d.Verdict != Allow {
			t.Errorf("NoDefaults: %s = %+v, want allow", r.Method, d)
		}
	}
	if d := e.Method("Page.navigate", []byte(`{"url":"file:///etc/passwd"}`)); d.Verdict != Deny {
		t.Errorf("NoDefaults turned the URL fence off: %+v", d)
	}
}

func TestMethodGlobs(t *testing.T) {
	e := mustCompile(t, Config{
		NoDefaults:        true,
		DenyMethods:       []string{"Network.*Cookie*", "Runtime*", "Browser.close", "DOM.set{FileInputFiles,OuterHTML}", "Page.navigate"},
		AckAndDropMethods: []string{"Browser.*", "Emulation.set?ouchEmulationEnabled", "Target.createTarget"},
	}).For("")
	tests := []struct {
		method string
		want   Verdict
		rule   string
	}{
		{"Network.getCookies", Deny, "method:Network.*Cookie*"},
		{"Network.getAllCookies", Deny, "method:Network.*Cookie*"},
		{"Network.setCookie", Deny, "method:Network.*Cookie*"},
		{"Network.clearBrowserCookies", Deny, "method:Network.*Cookie*"},
		{"Network.enable", Allow, ""},
		{"Network.cookie", Allow, ""}, // case-sensitive
		{"Runtime.evaluate", Deny, "method:Runtime*"},
		{"RuntimeX", Deny, "method:Runtime*"},
		{"DOM.setFileInputFiles", Deny, "method:DOM.set{FileInputFiles,OuterHTML}"},
		{"DOM.setOuterHTML", Deny, "method:DOM.set{FileInputFiles,OuterHTML}"},
		{"DOM.setAttributeValue", Allow, ""},
		{"Browser.close", Deny, "method:Browser.close"}, // deny wins over the ack glob
		{"Browser.getVersion", AckAndDrop, "method:Browser.*"},
		{"Browser.setDownloadBehavior", AckAndDrop, "method:Browser.*"},
		{"Emulation.setTouchEmulationEnabled", AckAndDrop, "method:Emulation.set?ouchEmulationEnabled"},
		{"Page.navigate", Deny, "method:Page.navigate"},                   // an exact deny beats the URL fence
		{"Target.createTarget", AckAndDrop, "method:Target.createTarget"}, // so does an exact ack
		{"Storage.getCookies", Allow, ""},
	}
	for _, tt := range tests {
		d := e.Method(tt.method, []byte(`{"url":"https://a.test/"}`))
		if d.Verdict != tt.want || d.Rule != tt.rule {
			t.Errorf("Method(%q) = %v %q, want %v %q", tt.method, d.Verdict, d.Rule, tt.want, tt.rule)
		}
	}
	if r := e.Method("Network.getCookies", nil).Reason; r != "Network.getCookies matches Network.*Cookie* and is denied" {
		t.Errorf("glob reason = %q", r)
	}
}

func TestGlobsOverSpecialMethods(t *testing.T) {
	e := mustCompile(t, Config{DenyMethods: []string{"Page.*", "Browser.set*", "Storage.*"}, AckAndDropMethods: []string{"Target.*"}}).For("")
	tests := []struct {
		method, params string
		want           Verdict
		rule           string
	}{
		{"Page.navigate", `{"url":"https://a.test/"}`, Deny, "method:Page.*"},
		{"Browser.setDownloadBehavior", `{}`, Deny, "method:Browser.set*"},
		{"Target.createTarget", `{"url":"file:///"}`, AckAndDrop, "method:Target.*"},
		{"Target.createBrowserContext", `{"proxyServer":"x"}`, AckAndDrop, "method:Target.*"},
		{"Storage.getCookies", `{}`, Deny, "method:Storage.getCookies"}, // the default keeps its own rule id
		{"Storage.clearDataForOrigin", `{}`, Deny, "method:Storage.*"},
		{"Network.loadNetworkResource", `{"url":"file:///etc/passwd"}`, Deny, RuleURLScheme},
	}
	for _, tt := range tests {
		d := e.Method(tt.method, []byte(tt.params))
		if d.Verdict != tt.want || d.Rule != tt.rule {
			t.Errorf("Method(%q, %s) = %v %q, want %v %q", tt.method, tt.params, d.Verdict, d.Rule, tt.want, tt.rule)
		}
	}
}

func TestURLMethods(t *testing.T) {
	e := mustCompile(t, Config{AllowedHosts: []string{".example.com"}}).For("")
	tests := []struct {
		method, params string
		want           Verdict
		rule           string
	}{
		{"Page.navigate", `{"url":"https://www.example.com/"}`, Allow, ""},
		{"Page.navigate", `{"url":"https://example.com@evil.net/"}`, Deny, RuleURLHostNotAllowed},
		{"Page.navigate", `{"url":"file:///etc/passwd"}`, Deny, RuleURLScheme},
		{"Page.navigate", `{"url":"javascript:alert(document.cookie)"}`, Deny, RuleURLScheme},
		{"Page.navigate", `{"url":"\u0066ile:///etc/passwd"}`, Deny, RuleURLScheme},
		{"Page.navigate", `{"u\u0072l":"file:///etc/passwd"}`, Deny, RuleURLScheme},
		{"Page.navigate", `{"url":"https://www.example.com/","frameId":"F1","referrer":"https://evil.net/"}`, Allow, ""},
		{"Page.navigate", `{"url":"https://www.example.com/","url":"file:///etc/passwd"}`, Deny, RuleURLParams},
		{"Page.navigate", `{"URL":"file:///etc/passwd"}`, Deny, RuleURLParams},
		{"Page.navigate", `{"params":{"url":"https://www.example.com/"}}`, Deny, RuleURLParams},
		{"Page.navigate", `{"url":1}`, Deny, RuleURLParams},
		{"Page.navigate", `{"url":null}`, Deny, RuleURLParams},
		{"Page.navigate", `{"url":["https://www.example.com/"]}`, Deny, RuleURLParams},
		{"Page.navigate", `{"url":""}`, Deny, RuleURLEmpty},
		{"Page.navigate", `{}`, Deny, RuleURLParams},
		{"Page.navigate", ``, Deny, RuleURLParams},
		{"Page.navigate", `"https://www.example.com/"`, Deny, RuleURLParams},
		{"Page.navigate", `{"url":"https://www.example.com/"`, Deny, RuleURLParams},
		{"Page.navigate", `{"url":"https://www.example.com/"} {}`, Deny, RuleURLParams},
		{"Page.navigate", `{"url":"https://www.example.com/","method":"Runtime.evaluate"}`, Allow, ""},
		{"Target.createTarget", `{"url":"about:blank"}`, Allow, ""},
		{"Target.createTarget", `{"url":"about:blank","browserContextId":"C1","newWindow":true}`, Allow, ""},
		{"Target.createTarget", `{"url":"chrome://settings"}`, Deny, RuleURLScheme},
		{"Target.createTarget", `{"url":""}`, Allow, ""}, // the protocol's about:blank
		{"Target.createTarget", `{"url":" "}`, Deny, RuleURLEmpty},
		{"Target.createTarget", `{}`, Deny, RuleURLParams},
		{"Target.createTarget", `{"url":"https://evil.net/"}`, Deny, RuleURLHostNotAllowed},
		{"Network.loadNetworkResource", `{"frameId":"F","url":"https://evil.net/x","options":{"disableCache":true,"includeCredentials":true}}`, Deny, RuleURLHostNotAllowed},
		{"Network.loadNetworkResource", `{"frameId":"F","url":"https://cdn.example.com/app.js.map","options":{}}`, Allow, ""},
		{"Page.navigateToHistoryEntry", `{"entryId":3}`, Allow, ""},
	}
	for _, tt := range tests {
		d := e.Method(tt.method, []byte(tt.params))
		if d.Verdict != tt.want || d.Rule != tt.rule {
			t.Errorf("Method(%q, %s) = %v %q (%s), want %v %q", tt.method, tt.params, d.Verdict, d.Rule, d.Reason, tt.want, tt.rule)
		}
	}
	if got := URLMethods(); !slices.Equal(got, []string{"Fetch.continueRequest", "Network.loadNetworkResource", "Page.navigate", "Target.createTarget"}) {
		t.Errorf("URLMethods() = %v", got)
	}
}

// The relay hands over the envelope's method; whatever params say about a
// method is just data.
func TestParamsCannotSpoofMethod(t *testing.T) {
	e := mustCompile(t, Config{}).For("")
	for _, params := range []string{
		`{"method":"Storage.getCookies"}`,
		`{"method":"Page.navigate","params":{"url":"file:///etc/passwd"}}`,
		`{"expression":"1","method":"Browser.close","id":1}`,
	} {
		if d := e.Method("Runtime.evaluate", []byte(params)); d.Verdict != Allow {
			t.Errorf("Runtime.evaluate with %s = %+v, want allow", params, d)
		}
	}
	if d := e.Method("Storage.getCookies", []byte(`{"method":"Runtime.evaluate"}`)); d.Verdict != Deny {
		t.Errorf("Storage.getCookies with a harmless method param = %+v, want deny", d)
	}
}

func TestProfiles(t *testing.T) {
	yes, no := true, false
	p, err := Compile(Config{
		AllowedHosts:          []string{".example.com"},
		BlockedHosts:          []string{"secret.example.com"},
		DenyMethods:           []string{"Page.printToPDF"},
		BlockPrivateAddresses: true,
	}, map[string]Profile{
		"work":    {AllowedHosts: []string{".work.test"}},
		"lazy":    {},
		"strict":  {DenyMethods: []string{"Runtime.*"}, NoDefaults: &no},
		"open":    {NoDefaults: &yes, BlockPrivateAddresses: &no},
		"schemes": {AllowedSchemes: []string{"https"}},
		"unblock": {BlockedHosts: []string{"other.example.com"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Profiles(); !slices.Equal(got, []string{"lazy", "open", "schemes", "strict", "unblock", "work"}) {
		t.Errorf("Profiles() = %v", got)
	}
	type check struct {
		profile string
		method  string
		params  string
		url     string
		want    Verdict
	}
	for _, c := range []check{
		{profile: "", url: "https://a.example.com/", want: Allow},
		{profile: "", url: "https://a.work.test/", want: Deny},
		{profile: "work", url: "https://a.work.test/", want: Allow},
		{profile: "work", url: "https://a.example.com/", want: Deny}, // the profile list replaces the global one
		{profile: "work", url: "https://secret.work.test/", want: Allow},
		{profile: "work", url: "https://secret.example.com/", want: Deny}, // inherited block list (and not allowed)
		{profile: "work", url: "http://127.0.0.1/", want: Deny},
		{profile: "lazy", url: "https://a.example.com/", want: Allow}, // empty lists inherit
		{profile: "lazy", url: "https://a.work.test/", want: Deny},
		{profile: "lazy", method: "Page.printToPDF", want: Deny},
		{profile: "nobody", url: "https://a.work.test/", want: Deny}, // unknown profile: global
		{profile: "strict", method: "Page.printToPDF", want: Allow},
		{profile: "strict", method: "Runtime.evaluate", want: Deny},
		{profile: "strict", method: "Storage.getCookies", want: Deny},
		{profile: "open", method: "Storage.getCookies", want: Allow},
		{profile: "open", method: "Page.printToPDF", want: Deny},
		{profile: "open", url: "https://127.0.0.1/", want: Deny}, // still not in the allowed hosts
		{profile: "", method: "Storage.getCookies", want: Deny},
		{profile: "schemes", url: "http://a.example.com/", want: Deny},
		{profile: "schemes", url: "https://a.example.com/", want: Allow},
		{profile: "unblock", url: "https://secret.example.com/", want: Allow},
		{profile: "unblock", url: "https://other.example.com/", want: Deny},
	} {
		e := p.For(c.profile)
		var d Decision
		if c.url != "" {
			d = e.URL(c.url)
		} else {
			d = e.Method(c.method, []byte(c.params))
		}
		if d.Verdict != c.want {
			t.Errorf("profile %q: %s%s = %+v, want %v", c.profile, c.method, c.url, d, c.want)
		}
	}
	if p.For("") != p.For("nobody") {
		t.Error("an unknown profile does not get the global policy")
	}
}

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		name     string
		global   Config
		profiles map[string]Profile
		want     []string // each must appear in the error
	}{
		{"bad deny glob", Config{DenyMethods: []string{"Network.{get,set"}}, nil, []string{`deny_methods[0] "Network.{get,set"`, "unclosed"}},
		{"bad ack glob", Config{AckAndDropMethods: []string{"Ok.method", "Browser.[z-a]"}}, nil, []string{`ack_and_drop_methods[1] "Browser.[z-a]"`}},
		{"empty method", Config{DenyMethods: []string{""}}, nil, []string{`deny_methods[0] ""`}},
		{"space in method", Config{DenyMethods: []string{"Page. navigate"}}, nil, []string{`deny_methods[0]`}},
		{"method without domain", Config{DenyMethods: []string{"getCookies"}}, nil, []string{"Domain.method"}},
		{"URL as host", Config{AllowedHosts: []string{"https://example.com"}}, nil, []string{`allowed_hosts[0] "https://example.com"`, "not a URL"}},
		{"port in host", Config{BlockedHosts: []string{"ok.test", "example.com:443"}}, nil, []string{`blocked_hosts[1] "example.com:443"`, "port"}},
		{"bad host glob", Config{AllowedHosts: []string{"*.{a,b"}}, nil, []string{`allowed_hosts[0]`}},
		{"bad scheme", Config{AllowedSchemes: []string{"https://"}}, nil, []string{`allowed_schemes[0] "https://"`}},
		{"profile", Config{}, map[string]Profile{"work": {AllowedHosts: []string{"exa mple.com"}}}, []string{`profile "work": allowed_hosts[0] "exa mple.com"`}},
		{"empty profile name", Config{}, map[string]Profile{"": {}}, []string{"profile needs a name"}},
		{"several", Config{DenyMethods: []string{"{"}, AllowedHosts: []string{"a..b"}}, nil, []string{"deny_methods[0]", "allowed_hosts[0]"}},
	}
	for _, tt := range tests {
		p, err := Compile(tt.global, tt.profiles)
		if err == nil || p != nil {
			t.Errorf("%s: Compile = %v, %v; want an error and no policy", tt.name, p, err)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not mention %q", tt.name, err, w)
			}
		}
	}

	// An inherited bad entry is reported once, for the global policy.
	_, err := Compile(Config{AllowedHosts: []string{"a b"}}, map[string]Profile{"x": {}, "y": {}})
	if n := strings.Count(err.Error(), `"a b"`); n != 1 {
		t.Errorf("inherited error reported %d times: %v", n, err)
	}
	var ee *EntryError
	if !errors.As(err, &ee) || ee.Field != "allowed_hosts" || ee.Index != 0 || ee.Profile != "" {
		t.Errorf("errors.As EntryError: %+v", ee)
	}
}

func TestRulesAndExplain(t *testing.T) {
	p, err := Compile(Config{
		DenyMethods:       []string{"Network.*Cookie*"},
		AckAndDropMethods: []string{"Page.printToPDF"},
		AllowedHosts:      []string{".Example.COM", "ex\u00e1mple.org", "::ffff:10.0.0.1"},
		BlockedHosts:      []string{"10.0.0.0/8"},
	}, map[string]Profile{"work": {NoDefaults: new(true)}})
	if err != nil {
		t.Fatal(err)
	}
	rules := p.Rules()
	for _, r := range append(slices.Clone(urlRules), "method:Network.*Cookie*", "method:Page.printToPDF", "method:Storage.getCookies", "method:Target.createBrowserContext+proxy") {
		if !slices.Contains(rules, r) {
			t.Errorf("Rules() lacks %q: %v", r, rules)
		}
	}
	if !slices.IsSorted(rules) || len(slices.Compact(slices.Clone(rules))) != len(rules) {
		t.Errorf("Rules() not sorted and unique: %v", rules)
	}
	x := p.Explain()
	for _, want := range []string{
		"global policy", `profile "work"`, "Storage.getCookies reads the person's cookies [default]",
		"Network.*Cookie*", "Page.printToPDF", "params.url goes through the URL fence",
		"hosts allowed: only .example.com, xn--exmple-qta.org, 10.0.0.1", "hosts blocked: 10.0.0.0/8",
		"schemes allowed: http, https", "the default method rules are off",
	} {
		if !strings.Contains(x, want) {
			t.Errorf("Explain() lacks %q:\n%s", want, x)
		}
	}
}

func TestVerdictString(t *testing.T) {
	for v, want := range map[Verdict]string{Allow: "allow", Deny: "deny", AckAndDrop: "ack-and-drop", 9: "unknown"} {
		if v.String() != want {
			t.Errorf("%d.String() = %q", v, v.String())
		}
	}
}

// One Effective serves every connection of an instance at once.
func TestConcurrentUse(t *testing.T) {
	e := mustCompile(t, Config{DenyMethods: []string{"Network.*Cookie*"}, AllowedHosts: []string{".example.com", "*.b\u00fccher.de"}}).For("")
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 200 {
				if e.Method("Network.getCookie", nil).Verdict != Deny ||
					e.Method("Page.navigate", []byte(`{"url":"https://www.b\u00fccher.de/"}`)).Verdict != Allow ||
					e.URL("http://0x7f.1/").Verdict != Deny {
					t.Error("inconsistent decision under concurrency")
					return
				}
			}
		})
	}
	wg.Wait()
}
