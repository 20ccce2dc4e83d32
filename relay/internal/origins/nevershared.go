package origins

import "github.com/cdprelay/cdprelay/relay/internal/api"

// ownPage is what the relay says of its own page, wherever it refuses it.
const ownPage = "the relay's own page, which is never shared with automation"

// NeverShared says why a top-level URL is never shared, or "": a page
// that is never shared anywhere (neverSharedURL), or one of this relay's
// own.
func (o *Origins) NeverShared(u string) string {
	if why := neverSharedURL(u); why != "" {
		return why
	}
	if o.Match(u) {
		return ownPage
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

// Refusal is the refusal of a command that would take a tab to u, one of
// the relay's own origins.
func Refusal(u string) api.Decision {
	return api.Decision{Verdict: api.Deny, Rule: RuleOwnOrigin, Message: "cdprelay: " + api.Origin(u) + " is " + ownPage}
}

// Access is the access of a page or frame at u (what: "the tab", "the
// frame") when it is one of the relay's own: blind, as a page that is
// never shared.
func (o *Origins) Access(u, what string) (api.Access, bool) {
	if !o.Match(u) {
		return api.Access{}, false
	}
	return api.Access{Level: api.Blind, Rule: RuleOwnOrigin,
		Why: what + " shows " + api.Origin(u) + ", " + ownPage}, true
}
