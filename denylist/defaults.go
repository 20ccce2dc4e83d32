package denylist

import (
	"encoding/json"
	"slices"
	"strings"
)

// MethodRule is one entry of the default method table.
type MethodRule struct {
	// Method is the exact CDP method name.
	Method string
	// Verdict is Deny or AckAndDrop.
	Verdict Verdict
	// WhenParams, when not empty, limits the rule to commands whose params
	// carry at least one of these top-level keys.
	WhenParams []string
	// When, when set, limits the rule to commands whose params it reports
	// true for; Condition says which, for people.
	When      func(params []byte) (bool, error)
	Condition string
	// Rule is the rule id reported in Decision.Rule.
	Rule string
	// Reason is the text reported in Decision.Reason.
	Reason string
}

// defaultRules protect the person whose browser is shared: their cookies
// are their logged-in sessions, their browser is not the automation's to
// close, and a proxied context would carry their traffic elsewhere.
var defaultRules = []MethodRule{
	cookieRule("Storage.getCookies", "reads"),
	cookieRule("Storage.setCookies", "writes"),
	cookieRule("Storage.clearCookies", "deletes"),
	cookieRule("Network.getAllCookies", "reads"),
	cookieRule("Network.getCookies", "reads"),
	cookieRule("Network.setCookie", "writes"),
	cookieRule("Network.setCookies", "writes"),
	cookieRule("Network.deleteCookies", "deletes"),
	cookieRule("Network.clearBrowserCookies", "deletes"),
	{
		Method:  "Browser.close",
		Verdict: Deny,
		Rule:    "method:Browser.close",
		Reason:  "Browser.close would close the person's browser",
	},
	{
		Method:     "Target.createBrowserContext",
		Verdict:    Deny,
		WhenParams: []string{"proxyServer", "proxyBypassList"},
		Rule:       "method:Target.createBrowserContext+proxy",
		Reason:     "Target.createBrowserContext with a proxy would send the person's traffic through another server",
	},
	{
		// A header the client sets on every request of a tab: a Cookie
		// there is the client's own cookie sent as the person.
		Method:    "Network.setExtraHTTPHeaders",
		Verdict:   Deny,
		When:      headersHaveCookie,
		Condition: "its headers carry a Cookie",
		Rule:      "method:Network.setExtraHTTPHeaders+Cookie",
		Reason:    "Network.setExtraHTTPHeaders with a Cookie header would send a cookie of the client's as the person",
	},
	clearCookiesRule("Storage.clearDataForOrigin"),
	clearCookiesRule("Storage.clearDataForStorageKey"),
}

func clearCookiesRule(method string) MethodRule {
	return MethodRule{
		Method:    method,
		Verdict:   Deny,
		When:      storageTypesHaveCookies,
		Condition: "its storageTypes include cookies or all",
		Rule:      "method:" + method + "+cookies",
		Reason:    method + " with cookies would delete the person's cookies",
	}
}

// headersHaveCookie reports whether params.headers has a Cookie entry, in
// any case.
func headersHaveCookie(params []byte) (bool, error) {
	var p struct {
		Headers map[string]json.RawMessage `json:"headers"`
	}
	if len(params) == 0 {
		return false, nil
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return false, errParamsNotObject
	}
	for k := range p.Headers {
		if strings.EqualFold(strings.TrimSpace(k), "cookie") {
			return true, nil
		}
	}
	return false, nil
}

// storageTypesHaveCookies reports whether params.storageTypes (a comma
// separated list) names cookies, or all.
func storageTypesHaveCookies(params []byte) (bool, error) {
	v, found, err := paramString(params, "storageTypes")
	if err != nil || !found {
		return false, err
	}
	for _, t := range strings.Split(v, ",") {
		switch strings.ToLower(strings.TrimSpace(t)) {
		case "cookies", "all":
			return true, nil
		}
	}
	return false, nil
}

func cookieRule(method, verb string) MethodRule {
	return MethodRule{
		Method:  method,
		Verdict: Deny,
		Rule:    "method:" + method,
		Reason:  method + " " + verb + " the person's cookies",
	}
}

// DefaultMethodRules returns the default method rules, the ones that
// Config.NoDefaults drops.
func DefaultMethodRules() []MethodRule {
	out := slices.Clone(defaultRules)
	for i := range out {
		out[i].WhenParams = slices.Clone(out[i].WhenParams)
	}
	return out
}

// urlParams names the params field that carries the URL of each command
// the URL fence judges. Page.navigateToHistoryEntry is absent: it names an
// entry, not a URL; the relay looks the entry up and judges its URL.
var urlParams = map[string]urlParam{
	"Page.navigate": {name: "url", navigates: true},
	// The protocol reads an empty url as about:blank; the relay, which
	// opens the tab itself, has to do the same.
	"Target.createTarget": {name: "url", empty: "about:blank", navigates: true},
	// It fetches with the page's network stack, optionally with the
	// person's credentials, and hands the body to the client.
	"Network.loadNetworkResource": {name: "url"},
	// A paused request continued with a new URL goes there instead, a
	// navigation nobody announced. Without a url it goes where it was
	// going, which the backstop has judged already.
	"Fetch.continueRequest": {name: "url", optional: true},
}

type urlParam struct {
	name     string
	empty    string // what an empty string stands for, if anything
	optional bool   // a command without it carries no URL to judge
	// navigates: the command takes a tab to the URL (what AskDomains
	// asks about).
	navigates bool
}

// URLParam says whether method carries a URL that the fence judges: the
// name of its params field, what an empty string there stands for ("" if
// nothing: an empty URL is refused), and whether the field may be absent
// (then there is nothing to judge; otherwise its absence is refused). A
// caller that reads the value itself must read it as Chrome does: the key
// exactly, after escapes are decoded, and never a key given twice.
func URLParam(method string) (name, empty string, optional, ok bool) {
	p, ok := urlParams[method]
	return p.name, p.empty, p.optional, ok
}

// URLMethods returns the methods whose URL parameter goes through the URL
// fence, sorted.
func URLMethods() []string {
	out := make([]string, 0, len(urlParams))
	for m := range urlParams {
		out = append(out, m)
	}
	slices.Sort(out)
	return out
}
