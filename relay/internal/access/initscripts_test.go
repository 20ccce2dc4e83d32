package access

import (
	"strings"
	"testing"
)

func TestRunsNothing(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want bool
	}{
		{"", true},
		{"  \n\t", true},
		{"//# sourceURL=pptr:internal", true},
		{"/* a */ // b\n  /* c */", true},
		{"// a\nalert(1)", false},
		{"// a\ralert(1)", false},
		{"/* unclosed", false},
		{"/* a */x", false},
		{"/", false},
		{"x", false},
		{"\u2028alert(1)", false},
		{"// a\u2028alert(1)", false},
		{"// a\u2029alert(1)", false},
		{"<!-- html comment\nalert(1)", false},
	} {
		if got := RunsNothing(tc.src); got != tc.want {
			t.Errorf("RunsNothing(%q) = %v", tc.src, got)
		}
	}
}

func FuzzRunsNothing(f *testing.F) {
	for _, s := range []string{"", "// x", "/* */", "a", "//\nb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		if !RunsNothing(src) {
			return
		}
		// What runs nothing has nothing but white space outside its
		// comments: remove them, and nothing is left.
		rest := []byte{}
		for i := 0; i < len(src); i++ {
			switch {
			case src[i] == '/' && i+1 < len(src) && src[i+1] == '/':
				for i < len(src) && src[i] != '\n' && src[i] != '\r' && !strings.HasPrefix(src[i:], "\u2028") && !strings.HasPrefix(src[i:], "\u2029") {
					i++
				}
			case src[i] == '/' && i+1 < len(src) && src[i+1] == '*':
				i += 2
				for i+1 < len(src) && !(src[i] == '*' && src[i+1] == '/') {
					i++
				}
				i++
			default:
				rest = append(rest, src[i])
			}
		}
		for _, c := range rest {
			if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
				t.Fatalf("RunsNothing(%q), yet %q is left", src, rest)
			}
		}
	})
}
