package ingress

import (
	"net/url"
	"strings"
	"testing"
)

var presentedTests = []struct {
	name  string
	auth  []string
	query string
	token string
	cred  credential
	rest  string
}{
	{"nothing", nil, "", "", credNone, ""},
	{"other params only", nil, "mode=view&x=1", "", credNone, "mode=view&x=1"},
	{"bearer", []string{"Bearer abc"}, "", "abc", credToken, ""},
	{"bearer any case", []string{"bEaReR abc"}, "", "abc", credToken, ""},
	{"bearer extra spaces", []string{"  Bearer   abc  "}, "", "abc", credToken, ""},
	{"bearer without token", []string{"Bearer"}, "", "", credMalformed, ""},
	{"bearer blank token", []string{"Bearer   "}, "", "", credMalformed, ""},
	{"bearer two words", []string{"Bearer abc def"}, "", "", credMalformed, ""},
	{"bearer tab inside", []string{"Bearer abc\tdef"}, "", "", credMalformed, ""},
	{"basic", []string{"Basic YTpi"}, "", "", credMalformed, ""},
	{"two headers", []string{"Bearer abc", "Bearer abc"}, "", "", credMalformed, ""},
	{"query", nil, "token=abc", "abc", credToken, ""},
	{"query kept order", nil, "a=1&token=abc&b=2", "abc", credToken, "a=1&b=2"},
	{"query escaped", nil, "token=a%2Bb", "a+b", credToken, ""},
	{"query plus is space", nil, "token=a+b", "a b", credToken, ""},
	{"query escaped key", nil, "tok%65n=abc&x=%zz", "abc", credToken, "x=%zz"},
	{"query empty", nil, "token=", "", credMalformed, ""},
	{"query no value", nil, "token", "", credMalformed, ""},
	{"query twice", nil, "token=a&token=a", "", credMalformed, ""},
	{"query bad escape", nil, "token=%zz&mode=view", "", credMalformed, "mode=view"},
	{"query not token", nil, "tokens=abc&xtoken=1", "", credNone, "tokens=abc&xtoken=1"},
	{"header and same query", []string{"Bearer abc"}, "token=abc", "abc", credToken, ""},
	{"header and other query", []string{"Bearer abc"}, "token=xyz", "", credMalformed, ""},
	{"bad header strips query", []string{"Basic x"}, "token=abc&a=1", "", credMalformed, "a=1"},
	{"too long", []string{"Bearer " + strings.Repeat("a", maxTokenBytes+1)}, "", "", credMalformed, ""},
	{"longest", nil, "token=" + strings.Repeat("a", maxTokenBytes), strings.Repeat("a", maxTokenBytes), credToken, ""},
}

func TestPresentedToken(t *testing.T) {
	for _, tt := range presentedTests {
		t.Run(tt.name, func(t *testing.T) {
			token, cred, rest := presentedToken(tt.auth, tt.query)
			if token != tt.token || cred != tt.cred || rest != tt.rest {
				t.Errorf("presentedToken(%q, %q) = %q, %d, %q; want %q, %d, %q", tt.auth, tt.query, token, cred, rest, tt.token, tt.cred, tt.rest)
			}
		})
	}
}

func FuzzPresentedToken(f *testing.F) {
	for _, tt := range presentedTests {
		h := ""
		if len(tt.auth) > 0 {
			h = tt.auth[0]
		}
		f.Add(h, len(tt.auth) > 1, tt.query)
	}
	f.Fuzz(func(t *testing.T, header string, twice bool, query string) {
		var auth []string
		if header != "" {
			auth = []string{header}
			if twice {
				auth = append(auth, header)
			}
		}
		token, cred, rest := presentedToken(auth, query)
		switch cred {
		case credToken:
			if token == "" || len(token) > maxTokenBytes {
				t.Fatalf("token %q accepted", token)
			}
		default:
			if token != "" {
				t.Fatalf("credential %d with token %q", cred, token)
			}
		}
		if len(auth) > 1 && cred != credMalformed {
			t.Fatalf("two Authorization headers gave %d", cred)
		}
		// Nothing downstream can find a token in what is passed on.
		if _, n, _, again := queryToken(rest); n != 0 || again != rest {
			t.Fatalf("rest %q still has a token parameter", rest)
		}
		if v, err := url.ParseQuery(rest); err == nil && v.Has(queryParam) {
			t.Fatalf("rest %q parses with a token", rest)
		}
		// Every other parameter is kept, in order.
		var kept []string
		if query != "" {
			for p := range strings.SplitSeq(query, "&") {
				k, _, _ := strings.Cut(p, "=")
				if key, err := url.QueryUnescape(k); err != nil || key != queryParam {
					kept = append(kept, p)
				}
			}
		}
		if want := strings.Join(kept, "&"); rest != want {
			t.Fatalf("rest = %q, want %q", rest, want)
		}
	})
}
