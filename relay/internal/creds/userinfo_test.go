package creds

import (
	"strings"
	"testing"
)

func TestURLPasswordBefore(t *testing.T) {
	for _, tc := range []struct{ msg, want string }{
		{`{"url":"http://user:s3cret@127.0.0.1/x"}`, "s3cret"},
		{`{"url":"https://u:p%40ss%3Aw@h.example/"}`, "p%40ss%3Aw"},
		{`{"url":"http://user@h.example/"}`, ""},    // no password
		{`{"text":"mail me: a:b@c.example"}`, ""},   // not a URL
		{`{"url":"http://h.example/@x:y"}`, ""},     // '@' in the path
		{`{"url":"http://h.example/?u=a:b@c"}`, ""}, // '@' in the query
		{`{"u":"ftp://:only@h"}`, "only"},           // empty user
		{`{"u":"x://a:b\"@h"}`, ""},                 // a quote ends it
		{`@`, ""},
		{`://@`, ""},
	} {
		at := strings.IndexByte(tc.msg, '@')
		for i := strings.IndexByte(tc.msg, '@'); i >= 0; {
			if got := string(URLPasswordBefore([]byte(tc.msg), i)); got != "" {
				at = i
				break
			}
			j := strings.IndexByte(tc.msg[i+1:], '@')
			if j < 0 {
				break
			}
			i += 1 + j
		}
		if got := string(URLPasswordBefore([]byte(tc.msg), at)); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.msg, got, tc.want)
		}
	}
}

func TestScrubURLPasswords(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":"http://u:pw@h/","b":"x@y"}`:      `{"a":"http://u:{{secret:url-password}}@h/","b":"x@y"}`,
		`https://u:p%40ss@h/ and ftp://v:qq@k/`: `https://u:{{secret:url-password}}@h/ and ftp://v:{{secret:url-password}}@k/`,
		`no url here@all`:                       `no url here@all`,
		`http://user@h/ has no password`:        `http://user@h/ has no password`,
		`@@@ http://a:b@c@d/`:                   `@@@ http://a:{{secret:url-password}}@c@d/`,
	} {
		if got := string(ScrubURLPasswords(nil, []byte(in))); got != want {
			t.Errorf("%s → %s, want %s", in, got, want)
		}
	}
}
