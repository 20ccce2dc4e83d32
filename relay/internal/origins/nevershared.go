package origins

import "github.com/cdprelay/cdprelay/relay/internal/api"

// NeverShared says why a top-level URL is never shared, or "": a page
// that is never shared anywhere (neverSharedURL), or one of this relay's
// own.
func (o *Origins) NeverShared(u string) string {
	if why := neverSharedURL(u); why != "" {
		return why
	}
	if o.Match(u) {
		return "the relay's own page, which is never shared with automation"
	}
	return ""
}

// neverSharedURL says why a top-level URL is never shared, or "".
func neverSharedURL(u string) string {
	if web, special := api.PageScheme(u); web || special {
		return ""
	}
	return api.SchemeOf(u) + " page, which is never shared with automation"
}
