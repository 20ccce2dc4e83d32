package ingress

import (
	"strings"
	"testing"
)

func TestHashToken(t *testing.T) {
	// sha256("abc"), from FIPS 180-2.
	if got := HashToken("abc"); got != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Errorf("HashToken(abc) = %s", got)
	}
}

func TestGenerateToken(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		tok := GenerateToken()
		if !strings.HasPrefix(tok, tokenPrefix) || len(tok) != len(tokenPrefix)+43 {
			t.Fatalf("GenerateToken() = %q", tok)
		}
		if why := CheckTokenText(tok); why != "" {
			t.Fatalf("generated token %q: %s", tok, why)
		}
		if seen[tok] {
			t.Fatalf("GenerateToken repeated %q", tok)
		}
		seen[tok] = true
	}
}

func TestCheckTokenText(t *testing.T) {
	tests := []struct {
		tok  string
		want string // part of the problem, "" for none
	}{
		{"cdpr_abc-DEF.ghi~jkl_0", ""},
		{"", "empty"},
		{"a b", "escaping"},
		{"a+b", "escaping"},
		{"a/b", "escaping"},
		{"a%20", "escaping"},
		{"é", "escaping"},
		{strings.Repeat("a", maxTokenBytes), ""},
		{strings.Repeat("a", maxTokenBytes+1), "longer"},
	}
	for _, tt := range tests {
		got := CheckTokenText(tt.tok)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("CheckTokenText(%q) = %q, want %q", tt.tok, got, tt.want)
		}
	}
}

func TestCompileTokens(t *testing.T) {
	h1, h2 := HashToken("one"), HashToken("two")
	tests := []struct {
		name    string
		tokens  []Token
		wantErr []string
	}{
		{"ok", []Token{{"a", h1, []string{"cdp"}, ""}, {"b", strings.ToUpper(h2), []string{"viewer", "admin"}, ""}}, nil},
		{"no name", []Token{{"", h1, []string{"cdp"}, ""}}, []string{"tokens[0]: name is required"}},
		{"same name", []Token{{"a", h1, []string{"cdp"}, ""}, {"a", h2, []string{"cdp"}, ""}}, []string{"tokens[1] (a): name used twice"}},
		{"same hash", []Token{{"a", h1, []string{"cdp"}, ""}, {"b", h1, []string{"admin"}, ""}}, []string{"tokens[1] (b): same sha256 as tokens[0] (a)"}},
		{"short hash", []Token{{"a", h1[:62], []string{"cdp"}, ""}}, []string{"64 hex digits"}},
		{"not hex", []Token{{"a", "z" + h1[1:], []string{"cdp"}, ""}}, []string{"64 hex digits"}},
		{"a token, not its hash", []Token{{"a", "cdpr_secret", []string{"cdp"}, ""}}, []string{"64 hex digits"}},
		{"empty token's hash", []Token{{"a", HashToken(""), []string{"cdp"}, ""}}, []string{"hash of the empty token"}},
		{"no scopes", []Token{{"a", h1, nil, ""}}, []string{"scopes: no scopes"}},
		{"bad scope", []Token{{"a", h1, []string{"cdp", "god"}, ""}}, []string{`unknown scope "god"`}},
		{"every error at once", []Token{{"", "x", nil, ""}}, []string{"name is required", "64 hex digits", "no scopes"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tab, err := compileTokens(tt.tokens)
			if len(tt.wantErr) == 0 {
				if err != nil || len(tab.entries) != len(tt.tokens) {
					t.Fatalf("compileTokens: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			for _, want := range tt.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
		})
	}
}

func TestMatch(t *testing.T) {
	tab, err := compileTokens([]Token{
		{"drive", HashToken("t-cdp"), []string{"cdp"}, ""},
		{"watch", HashToken("t-view"), []string{"viewer-interactive"}, ""},
		{"ops", HashToken("t-admin"), []string{"admin", "viewer"}, ""},
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		presented string
		name      string
		scopes    ScopeSet
		ok        bool
	}{
		{"t-cdp", "drive", ScopeSet(ScopeCDP), true},
		{"t-view", "watch", ScopeSet(ScopeViewer | ScopeViewerInteractive), true},
		{"t-admin", "ops", ScopeSet(ScopeAdmin | ScopeViewer), true},
		{"t-cdp ", "", 0, false},
		{"T-CDP", "", 0, false},
		{"", "", 0, false},
		{HashToken("t-cdp"), "", 0, false}, // the hash is not the token
	}
	for _, tt := range tests {
		g, ok := tab.match(tt.presented)
		if g.TokenName != tt.name || g.Scopes != tt.scopes || ok != tt.ok {
			t.Errorf("match(%q) = %q, %v, %v; want %q, %v, %v", tt.presented, g.TokenName, g.Scopes, ok, tt.name, tt.scopes, tt.ok)
		}
	}
}

// TestMatchComparesEveryEntry checks the shape that keeps match's time
// independent of whether and where a token matched: one constant-time
// compare of two 32-byte hashes per entry, on every call.
func TestMatchComparesEveryEntry(t *testing.T) {
	var tokens []Token
	for i := range 8 {
		tokens = append(tokens, Token{Name: string(rune('a' + i)), SHA256: HashToken(string(rune('a' + i))), Scopes: []string{"cdp"}})
	}
	tab, err := compileTokens(tokens)
	if err != nil {
		t.Fatal(err)
	}
	orig := constantTimeCompare
	t.Cleanup(func() { constantTimeCompare = orig })
	calls := 0
	constantTimeCompare = func(x, y []byte) int {
		calls++
		if len(x) != 32 || len(y) != 32 {
			t.Errorf("compared %d and %d bytes, want two SHA-256 sums", len(x), len(y))
		}
		return orig(x, y)
	}
	for _, presented := range []string{"a", "d", "h", "nope", "", strings.Repeat("x", 500)} {
		calls = 0
		tab.match(presented)
		if calls != len(tokens) {
			t.Errorf("match(%.10q) compared %d entries, want all %d", presented, calls, len(tokens))
		}
	}
}
