package ingress

import (
	"net/url"
	"strings"
)

// credential is what a request presents as its token.
type credential uint8

const (
	credNone      credential = iota // no Authorization header, no token parameter
	credToken                       // exactly one token, well formed
	credMalformed                   // something was presented but no usable token
)

// queryParam is the query parameter that carries a token for clients that
// cannot set headers.
const queryParam = "token"

// presentedToken reads the token of a request from its Authorization
// header values and its raw query. It also returns the query without any
// token parameter, for the handlers behind: they never see the secret,
// and those that refuse unknown parameters are not upset by it.
//
// Ambiguity is refused rather than resolved: two Authorization headers,
// two token parameters, or a header and a parameter that disagree.
func presentedToken(authorization []string, rawQuery string) (token string, c credential, rest string) {
	var fromHeader string
	switch len(authorization) {
	case 0:
	case 1:
		t, ok := bearer(authorization[0])
		if !ok {
			return "", credMalformed, stripTokenParams(rawQuery)
		}
		fromHeader = t
	default:
		return "", credMalformed, stripTokenParams(rawQuery)
	}
	fromQuery, n, ok, rest := queryToken(rawQuery)
	switch {
	case !ok || n > 1:
		return "", credMalformed, rest
	case n == 0 && fromHeader == "":
		return "", credNone, rest
	case n == 0:
		token = fromHeader
	case fromHeader != "" && fromHeader != fromQuery:
		return "", credMalformed, rest
	default:
		token = fromQuery
	}
	if token == "" || len(token) > maxTokenBytes {
		return "", credMalformed, rest
	}
	return token, credToken, rest
}

// bearer reads "Bearer <token>" (RFC 6750: the scheme is case-insensitive;
// the token has no spaces).
func bearer(v string) (string, bool) {
	scheme, t, found := strings.Cut(strings.TrimSpace(v), " ")
	if !found || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	t = strings.TrimLeft(t, " ")
	if t == "" || strings.ContainsAny(t, " \t") {
		return "", false
	}
	return t, true
}

// queryToken finds the token parameters in a raw query: n of them, the
// value of the last, ok false when one cannot be unescaped, and the query
// without them. Other parameters are kept byte for byte and in order.
func queryToken(rawQuery string) (value string, n int, ok bool, rest string) {
	if rawQuery == "" {
		return "", 0, true, ""
	}
	ok = true
	kept := make([]string, 0, 4)
	for pair := range strings.SplitSeq(rawQuery, "&") {
		k, v, _ := strings.Cut(pair, "=")
		key, err := url.QueryUnescape(k)
		if err != nil || key != queryParam {
			kept = append(kept, pair)
			continue
		}
		n++
		if value, err = url.QueryUnescape(v); err != nil {
			ok = false
		}
	}
	return value, n, ok, strings.Join(kept, "&")
}

func stripTokenParams(rawQuery string) string {
	_, _, _, rest := queryToken(rawQuery)
	return rest
}
