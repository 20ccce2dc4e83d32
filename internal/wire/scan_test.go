package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func nested(open, close string, n int) string {
	return strings.Repeat(open, n) + strings.Repeat(close, n)
}

// nestedObj builds {"a":{"a":...{}...}} with n objects.
func nestedObj(n int) string {
	return strings.Repeat(`{"a":`, n-1) + "{}" + strings.Repeat("}", n-1)
}

var validTests = []struct {
	name string
	in   string
	ok   bool
}{
	// numbers
	{"zero", `0`, true},
	{"minus zero", `-0`, true},
	{"minus zero fraction", `-0.0`, true},
	{"int", `123`, true},
	{"negative", `-123`, true},
	{"fraction", `1.5`, true},
	{"exponent", `1e3`, true},
	{"exponent upper plus", `1E+3`, true},
	{"exponent minus", `1e-3`, true},
	{"exponent leading zeros", `1e007`, true},
	{"zero exponent", `0e0`, true},
	{"full number", `-12.34e+56`, true},
	{"huge", `123456789012345678901234567890`, true},
	{"leading zero", `01`, false},
	{"negative leading zero", `-01`, false},
	{"zero zero", `00`, false},
	{"trailing dot", `1.`, false},
	{"dot exponent", `1.e3`, false},
	{"bare exponent", `1e`, false},
	{"exponent sign only", `1e+`, false},
	{"exponent minus only", `1E-`, false},
	{"leading dot", `.5`, false},
	{"minus only", `-`, false},
	{"minus dot", `-.5`, false},
	{"plus", `+1`, false},
	{"double minus", `--1`, false},
	{"hex", `0x1`, false},
	{"NaN", `NaN`, false},
	{"Infinity", `Infinity`, false},
	{"negative Infinity", `-Infinity`, false},
	{"minus space", `- 1`, false},
	{"two numbers", `1 2`, false},

	// literals
	{"true", `true`, true},
	{"false", `false`, true},
	{"null", `null`, true},
	{"short true", `tru`, false},
	{"capital true", `True`, false},
	{"nul", `nul`, false},
	{"nulll", `nulll`, false},
	{"truex", `truex`, false},
	{"literal in array glued", `[truefalse]`, false},

	// strings
	{"empty string", `""`, true},
	{"string", `"abc"`, true},
	{"simple escapes", `"\"\\\/\b\f\n\r\t"`, true},
	{"unicode escape", `"\u0041"`, true},
	{"unicode escape upper hex", `"\u00E9\uABCD"`, true},
	{"surrogate pair", `"\uD83D\uDE00"`, true},
	{"lone high surrogate", `"\uD800"`, true},
	{"lone low surrogate", `"\uDC00"`, true},
	{"escaped NUL", `"\u0000"`, true},
	{"raw DEL", "\"\x7f\"", true},
	{"raw UTF-8", `"é€😀"`, true},
	{"raw U+2028", "\"\u2028\"", true},
	{"unterminated", `"abc`, false},
	{"unterminated after escape", `"\"`, false},
	{"backslash at end", `"\`, false},
	{"bad escape x", `"\x41"`, false},
	{"bad escape quote", `"\'"`, false},
	{"bad escape U", `"\U0041"`, false},
	{"bad escape a", `"\a"`, false},
	{"short u escape", `"\u12"`, false},
	{"short u escape at end", `"\u12`, false},
	{"bad hex", `"\u12g4"`, false},
	{"raw NUL", "\"\x00\"", false},
	{"raw control 0x01", "\"\x01\"", false},
	{"raw control 0x1f", "\"\x1f\"", false},
	{"raw newline", "\"a\nb\"", false},
	{"raw tab", "\"a\tb\"", false},
	{"single quotes", `'a'`, false},

	// invalid UTF-8
	{"invalid byte", "\"\xff\"", false},
	{"truncated sequence", "\"\xc3\"", false},
	{"overlong slash", "\"\xc0\xaf\"", false},
	{"encoded surrogate", "\"\xed\xa0\x80\"", false},
	{"above U+10FFFF", "\"\xf4\x90\x80\x80\"", false},
	{"invalid byte outside string", "[1,\xff]", false},
	{"invalid byte in key", "{\"\xfe\":1}", false},
	{"BOM", "\xef\xbb\xbf{}", false},

	// whitespace and trailing data
	{"all whitespace kinds", " \t\r\n{ \"a\" :\t[ 1 ,\r\n2 ] } \n", true},
	{"empty", ``, false},
	{"whitespace only", " \t\r\n", false},
	{"vertical tab", "\v{}", false},
	{"form feed", "\f{}", false},
	{"NBSP", "\u00a0{}", false},
	{"trailing NUL", "{}\x00", false},
	{"trailing brace", `{}}`, false},
	{"trailing value", `{} {}`, false},
	{"trailing garbage", `{}x`, false},
	{"trailing whitespace", "{}\r\n\t ", true},

	// arrays and objects
	{"empty array", `[]`, true},
	{"empty object", `{}`, true},
	{"spaced empty array", `[ ]`, true},
	{"spaced empty object", "{ \n}", true},
	{"array", `[1,"a",true,null,{},[]]`, true},
	{"object", `{"a":1,"b":[{"c":null}]}`, true},
	{"duplicate keys", `{"a":1,"a":2}`, true},
	{"escaped key", `{"\u0061":1}`, true},
	{"empty key", `{"":1}`, true},
	{"array trailing comma", `[1,]`, false},
	{"array leading comma", `[,1]`, false},
	{"array double comma", `[1,,2]`, false},
	{"array missing comma", `[1 2]`, false},
	{"array unterminated", `[1`, false},
	{"array unterminated after comma", `[1,`, false},
	{"open bracket", `[`, false},
	{"close bracket", `]`, false},
	{"array closed by brace", `[1}`, false},
	{"object trailing comma", `{"a":1,}`, false},
	{"object missing value", `{"a"}`, false},
	{"object missing colon", `{"a" 1}`, false},
	{"object empty value", `{"a":}`, false},
	{"object unquoted key", `{a:1}`, false},
	{"object single quoted key", `{'a':1}`, false},
	{"object number key", `{1:1}`, false},
	{"object missing comma", `{"a":1 "b":2}`, false},
	{"object unterminated", `{"a":1`, false},
	{"object unterminated key", `{"a`, false},
	{"object unterminated after colon", `{"a":`, false},
	{"object closed by bracket", `{"a":1]`, false},
	{"object double colon", `{"a"::1}`, false},
	{"open brace", `{`, false},

	// nesting
	{"arrays at MaxDepth-1", nested("[", "]", MaxDepth-1), true},
	{"arrays at MaxDepth", nested("[", "]", MaxDepth), true},
	{"arrays at MaxDepth+1", nested("[", "]", MaxDepth+1), false},
	{"objects at MaxDepth-1", nestedObj(MaxDepth - 1), true},
	{"objects at MaxDepth", nestedObj(MaxDepth), true},
	{"objects at MaxDepth+1", nestedObj(MaxDepth + 1), false},
	{"deep but unterminated", strings.Repeat("[", MaxDepth), false},
	{"very deep", nested("[", "]", 100*MaxDepth), false},
}

func TestValid(t *testing.T) {
	for _, tt := range validTests {
		t.Run(tt.name, func(t *testing.T) {
			err := Valid([]byte(tt.in))
			if (err == nil) != tt.ok {
				t.Fatalf("Valid(%.80q) = %v, want ok=%v", tt.in, err, tt.ok)
			}
			if err != nil {
				var se *SyntaxError
				if !errors.As(err, &se) {
					t.Fatalf("error %T %v is not a *SyntaxError", err, err)
				}
				if se.Offset < 0 || se.Offset > len(tt.in) {
					t.Errorf("offset %d outside [0,%d]", se.Offset, len(tt.in))
				}
			}
			// The table stays within encoding/json's own nesting limit, so
			// apart from the MaxDepth cases the two must agree.
			if depthOf([]byte(tt.in)) <= MaxDepth {
				want := json.Valid([]byte(tt.in)) && utf8.ValidString(tt.in)
				if want != tt.ok {
					t.Errorf("table says ok=%v, encoding/json says %v", tt.ok, want)
				}
			}
		})
	}
}

func TestSyntaxErrorOffset(t *testing.T) {
	tests := []struct {
		in  string
		off int
	}{
		{`[1,]`, 3},
		{`{"a":1,}`, 7},
		{`{} x`, 2},
		{"\"a\x01\"", 2},
		{`"\q"`, 1},
		{`01`, 1},
		{`{"a" 1}`, 5},
		{"\"a\xff\"", 2},
		{"[1,\xff]", 3},
		{"\"é\xed\xa0\x80\"", 3},
		{"\xc3", 0},
		{"[\"ok\"]\xc3", 6},
	}
	for _, tt := range tests {
		err := Valid([]byte(tt.in))
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("Valid(%q) = %v, want *SyntaxError", tt.in, err)
			continue
		}
		if se.Offset != tt.off {
			t.Errorf("Valid(%q) offset = %d, want %d (%v)", tt.in, se.Offset, tt.off, err)
		}
		if !strings.Contains(se.Error(), "offset") {
			t.Errorf("Error() = %q lacks the offset", se.Error())
		}
	}
}

var unquoteTests = []struct {
	name string
	in   string // a JSON string token
	want string
}{
	{"empty", `""`, ""},
	{"plain", `"Page.enable"`, "Page.enable"},
	{"quote", `"a\"b"`, `a"b`},
	{"backslash", `"a\\b"`, `a\b`},
	{"slash", `"a\/b"`, "a/b"},
	{"backspace", `"\b"`, "\b"},
	{"form feed", `"\f"`, "\f"},
	{"newline", `"\n"`, "\n"},
	{"carriage return", `"\r"`, "\r"},
	{"tab", `"\t"`, "\t"},
	{"all simple escapes", `"\"\\\/\b\f\n\r\t"`, "\"\\/\b\f\n\r\t"},
	{"escaped NUL", `"\u0000"`, "\x00"},
	{"ASCII via u", `"\u0041\u0062"`, "Ab"},
	{"two-byte", `"\u00e9"`, "é"},
	{"three-byte upper hex", `"\u20AC"`, "€"},
	{"U+FFFF", `"\uffff"`, "\uffff"},
	{"surrogate pair", `"\ud83d\ude00"`, "😀"},
	{"surrogate pair upper", `"\uD83D\uDE00"`, "😀"},
	{"surrogate pair then text", `"x\ud83d\ude00y"`, "x😀y"},
	{"max code point", `"\udbff\udfff"`, "\U0010FFFF"},
	{"min supplementary", `"\ud800\udc00"`, "\U00010000"},
	{"lone high at end", `"\ud800"`, "\uFFFD"},
	{"lone high then text", `"\ud800abcdef"`, "\uFFFDabcdef"},
	{"lone low", `"\udc00"`, "\uFFFD"},
	{"low then high", `"\udc00\ud800"`, "\uFFFD\uFFFD"},
	{"high then non-surrogate escape", `"\ud800\u0041"`, "\uFFFDA"},
	{"high then high-low pair", `"\ud800\ud83d\ude00"`, "\uFFFD😀"},
	{"high then escaped backslash u", `"\ud800\\u0041"`, "\uFFFD\\u0041"},
	{"high then simple escape", `"\ud800\n"`, "\uFFFD\n"},
	{"raw multibyte around escape", `"é\né"`, "é\né"},
}

func TestUnquote(t *testing.T) {
	for _, tt := range unquoteTests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := unquote([]byte(tt.in))
			if !ok || string(got) != tt.want {
				t.Fatalf("unquote(%s) = %q, %v; want %q", tt.in, got, ok, tt.want)
			}
			var ref string
			if err := json.Unmarshal([]byte(tt.in), &ref); err != nil {
				t.Fatal(err)
			}
			if ref != tt.want {
				t.Errorf("encoding/json decodes %s as %q, table says %q", tt.in, ref, tt.want)
			}
			inner := tt.in[1 : len(tt.in)-1]
			if got2 := decodeEscaped([]byte(inner)); string(got2) != tt.want {
				t.Errorf("decodeEscaped(%s) = %q, want %q", inner, got2, tt.want)
			}
		})
	}
}

func TestUnquoteAliases(t *testing.T) {
	tok := []byte(`"Runtime.evaluate"`)
	got, ok := unquote(tok)
	if !ok || &got[0] != &tok[1] {
		t.Fatal("an unescaped string must come back as a subslice of its token")
	}
}

func TestUnquoteRejects(t *testing.T) {
	// Unquote is exported and may meet bytes that never went through Valid.
	for _, in := range []string{
		``, `"`, `x`, `ab`, `'a'`, `"abc`, `abc"`, `"\"`, `"\`, `"a\"`,
		`"\u12"`, `"\u12g4"`, `"\x"`, `"a"b"`, "\"\x01\"", `"a" `, ` "a"`,
	} {
		if got, ok := Unquote([]byte(in)); ok {
			t.Errorf("Unquote(%q) = %q, true; want false", in, got)
		}
	}
	for _, tt := range unquoteTests {
		if got, ok := Unquote([]byte(tt.in)); !ok || string(got) != tt.want {
			t.Errorf("Unquote(%s) = %q, %v; want %q", tt.in, got, ok, tt.want)
		}
	}
}

func TestParseInt(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{`0`, 0, true},
		{`-0`, 0, true},
		{`1`, 1, true},
		{`-1`, -1, true},
		{`42`, 42, true},
		{`9007199254740991`, 1<<53 - 1, true},
		{`-9007199254740991`, -(1<<53 - 1), true},
		{`9007199254740992`, 0, false},
		{`-9007199254740992`, 0, false},
		{`9223372036854775807`, 0, false},
		{`99999999999999999999`, 0, false},
		{`1.0`, 0, false},
		{`1.5`, 0, false},
		{`1e3`, 0, false},
		{`1E3`, 0, false},
		{`-1e0`, 0, false},
		{`"1"`, 0, false},
		{`null`, 0, false},
		{`true`, 0, false},
		{`{}`, 0, false},
		{`[1]`, 0, false},
		{``, 0, false},
		{`-`, 0, false},
		{`+1`, 0, false},
		{`01`, 0, false},
		{`-01`, 0, false},
		{`00`, 0, false},
		{` 1`, 0, false},
		{`1 `, 0, false},
		{`0x10`, 0, false},
		{`1_000`, 0, false},
	}
	for _, tt := range tests {
		got, ok := parseInt([]byte(tt.in))
		if ok != tt.ok || got != tt.want {
			t.Errorf("parseInt(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
		}
		if g2, ok2 := Int([]byte(tt.in)); g2 != got || ok2 != ok {
			t.Errorf("Int(%q) disagrees with parseInt", tt.in)
		}
	}
}

func TestMembersAndElements(t *testing.T) {
	obj := []byte(" { \"a\" : 1 , \"b\\n\":[1, 2] ,\"c\":{\"d\":\"}\"} } ")
	m, ok := newMembers(obj)
	if !ok {
		t.Fatal("newMembers refused an object")
	}
	var got []string
	for {
		k, esc, v, ok := m.next()
		if !ok {
			break
		}
		got = append(got, string(k)+"="+string(v)+map[bool]string{true: " (esc)"}[esc])
	}
	want := []string{`a=1`, `b\n=[1, 2] (esc)`, `c={"d":"}"}`}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("members = %q, want %q", got, want)
	}
	if _, ok := newMembers([]byte(`[1]`)); ok {
		t.Error("newMembers accepted an array")
	}

	el, ok := newElements([]byte(" [ 1 , \"]\" ,[ ] , {} ] "))
	if !ok {
		t.Fatal("newElements refused an array")
	}
	var els [][]byte
	for {
		v, ok := el.next()
		if !ok {
			break
		}
		els = append(els, v)
	}
	if g := string(bytes.Join(els, []byte("|"))); g != `1|"]"|[ ]|{}` {
		t.Errorf("elements = %q", g)
	}
	if _, ok := newElements([]byte(`{}`)); ok {
		t.Error("newElements accepted an object")
	}
}

// depthOf returns the deepest nesting of arrays and objects in b, reading
// strings the way JSON does; for malformed input it is only an estimate.
func depthOf(b []byte) int {
	depth, max := 0, 0
	inStr := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inStr {
			switch c {
			case '\\':
				i++
			case '"':
				inStr = false
			}
			continue
		}
		switch c {
		case '"':
			inStr = true
		case '[', '{':
			depth++
			if depth > max {
				max = depth
			}
		case ']', '}':
			depth--
		}
	}
	return max
}
