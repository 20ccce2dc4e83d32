package denylist

import (
	"strings"
	"testing"
)

func TestAsk(t *testing.T) {
	p, err := Compile(Config{
		DenyMethods:  []string{"Input.dispatchTouchEvent"},
		AskMethods:   []string{"DOM.setFileInputFiles", "Input.dispatch*Event", "Page.navigate"},
		AskDomains:   []string{".shop.example"},
		AllowedHosts: []string{"shop.example", "*.shop.example", "a.example"},
	}, map[string]Profile{
		"quiet":  {AskMethods: []string{"Page.reload"}, AskDomains: []string{"a.example"}},
		"submit": {AskSubmit: ptr(true)},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		profile, method, params string
		want                    Verdict
		rule                    string
	}{
		{"", "DOM.setFileInputFiles", `{}`, Ask, "ask:method:DOM.setFileInputFiles"},
		{"", "Input.dispatchMouseEvent", `{}`, Ask, "ask:method:Input.dispatch*Event"},
		{"", "Input.dispatchTouchEvent", `{}`, Deny, "method:Input.dispatchTouchEvent"}, // a denial wins
		{"", "Runtime.evaluate", `{}`, Allow, ""},
		{"", "Page.navigate", `{"url":"https://a.example/"}`, Ask, "ask:method:Page.navigate"},
		{"", "Page.navigate", `{"url":"https://evil.example/"}`, Deny, RuleURLHostNotAllowed}, // the fence first
		{"", "Target.createTarget", `{"url":"https://www.shop.example/cart"}`, Ask, RuleAskDomain},
		{"", "Target.createTarget", `{"url":"https://a.example/"}`, Allow, ""},
		{"", "Fetch.continueRequest", `{"requestId":"1","url":"https://shop.example/"}`, Allow, ""}, // not a navigation command
		{"", "Storage.clearCookies", `{}`, Deny, ""},                                                // the default rules still apply
		{"quiet", "Page.reload", `{}`, Ask, "ask:method:Page.reload"},
		{"quiet", "DOM.setFileInputFiles", `{}`, Allow, ""},
		{"quiet", "Page.navigate", `{"url":"https://a.example/x"}`, Ask, RuleAskDomain},
		{"quiet", "Page.navigate", `{"url":"https://shop.example/x"}`, Allow, ""},
	} {
		d := p.For(tc.profile).Method(tc.method, []byte(tc.params))
		if d.Verdict != tc.want || (tc.rule != "" && d.Rule != tc.rule) {
			t.Errorf("%s %s %s: %v %s (%s), want %v %s", tc.profile, tc.method, tc.params, d.Verdict, d.Rule, d.Reason, tc.want, tc.rule)
		}
		// The two-step form the relay uses agrees.
		r := p.For(tc.profile).Rules(tc.method, []byte(tc.params))
		if tc.want == Ask && r.Verdict != Ask && tc.rule != RuleAskDomain {
			t.Errorf("%s %s: Rules %v", tc.profile, tc.method, r.Verdict)
		}
	}
	if p.For("").AsksSubmit() || !p.For("submit").AsksSubmit() {
		t.Error("ask_submit")
	}
	for _, r := range []string{RuleAskDomain, RuleAskSubmit, "ask:method:Input.dispatch*Event", "ask:method:Page.reload"} {
		found := false
		for _, x := range p.Rules() {
			found = found || x == r
		}
		if !found {
			t.Errorf("rule %s not listed in %v", r, p.Rules())
		}
	}
	ex := p.For("").Explain()
	for _, want := range []string{"approvals", "DOM.setFileInputFiles", ".shop.example"} {
		if !strings.Contains(ex, want) {
			t.Errorf("explain lacks %q:\n%s", want, ex)
		}
	}
	for _, bad := range []Config{
		{AskMethods: []string{"navigate"}},
		{AskDomains: []string{"exa mple.com"}},
	} {
		if _, err := Compile(bad, nil); err == nil {
			t.Errorf("%+v compiled", bad)
		}
	}
}

func ptr[T any](v T) *T { return &v }
