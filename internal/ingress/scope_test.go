package ingress

import (
	"strings"
	"testing"
)

func TestParseScopes(t *testing.T) {
	tests := []struct {
		in      []string
		want    ScopeSet
		wantErr string
	}{
		{in: []string{"cdp"}, want: ScopeSet(ScopeCDP)},
		{in: []string{"viewer"}, want: ScopeSet(ScopeViewer)},
		{in: []string{"viewer-interactive"}, want: ScopeSet(ScopeViewer | ScopeViewerInteractive)},
		{in: []string{"admin", "extension", "cdp"}, want: ScopeSet(ScopeAdmin | ScopeExtension | ScopeCDP)},
		{in: []string{"cdp", "cdp"}, want: ScopeSet(ScopeCDP)},
		{in: ScopeNames(), want: AllScopes},
		{in: nil, wantErr: "no scopes"},
		{in: []string{}, wantErr: "no scopes"},
		{in: []string{"CDP"}, wantErr: `unknown scope "CDP"`},
		{in: []string{"cdp", "root"}, wantErr: `unknown scope "root"`},
		{in: []string{""}, wantErr: `unknown scope ""`},
	}
	for _, tt := range tests {
		got, err := ParseScopes(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseScopes(%q) = %v, %v; want error %q", tt.in, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseScopes(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestScopeSetHas(t *testing.T) {
	interactive, _ := ParseScopes([]string{"viewer-interactive"})
	viewer, _ := ParseScopes([]string{"viewer"})
	tests := []struct {
		set  ScopeSet
		sc   Scope
		want bool
	}{
		{interactive, ScopeViewer, true},
		{interactive, ScopeViewerInteractive, true},
		{viewer, ScopeViewerInteractive, false},
		{viewer, ScopeViewer, true},
		{AllScopes, ScopeAdmin, true},
		{0, ScopeCDP, false},
		{AllScopes, 0, false},
	}
	for _, tt := range tests {
		if got := tt.set.Has(tt.sc); got != tt.want {
			t.Errorf("%v.Has(%v) = %v", tt.set, tt.sc, got)
		}
	}
	if got := interactive.String(); got != "viewer,viewer-interactive" {
		t.Errorf("String() = %q", got)
	}
}
