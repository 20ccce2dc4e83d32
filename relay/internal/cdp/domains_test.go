package cdp

import "testing"

func TestDomainOf(t *testing.T) {
	for _, tc := range []struct {
		method string
		want   string
	}{
		{"Page.navigate", "Page"},
		{"Target.attachToTarget", "Target"},
		{"Browser.close", "Browser"},
		{"DOMSnapshot.captureSnapshot", "DOMSnapshot"},
		{"page.navigate", "other"},
		{"Page", "other"},
		{"Made.up", "other"},
		{"Page.a.b", "Page"},
		{".Page", "other"},
		{"", "other"},
	} {
		if got := Domains[DomainOf([]byte(tc.method))]; got != tc.want {
			t.Errorf("DomainOf(%q) is %s, want %s", tc.method, got, tc.want)
		}
	}
	for i, d := range Domains[:DomainOther] {
		if DomainIndex(d) != i {
			t.Errorf("DomainIndex(%q) = %d, want %d", d, DomainIndex(d), i)
		}
	}
	if DomainIndex("Made") != DomainOther || Domains[DomainBrowser] != "Browser" || Domains[DomainTarget] != "Target" {
		t.Error("the named indexes do not name their domains")
	}
}
