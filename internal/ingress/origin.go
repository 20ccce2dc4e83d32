package ingress

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// PlaywrightExtensionID is the id of Playwright's own MV3 relay extension,
// which speaks to the same kind of endpoint as ours.
const PlaywrightExtensionID = "mmlmfjhmonkocbjadbfplnigmagldckm"

// originPolicy is how an endpoint judges a request's Origin header.
type originPolicy uint8

const (
	// originCDP: none, or one the operator listed. CDP clients outside
	// browsers send none; Chrome's own port refuses any other unless
	// started with --remote-allow-origins.
	originCDP originPolicy = iota
	// originExtension: none, or chrome-extension://<an allowed id>.
	originExtension
	// originSelf: none, or the relay's own (the live-view page).
	originSelf
)

// normaliseOrigin returns an origin in the form compared (lowercase
// scheme and host, no default port), or "" when s is not a tuple origin
// ("null", a URL with a path, garbage).
func normaliseOrigin(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" || u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return ""
	}
	scheme := strings.ToLower(u.Scheme)
	return scheme + "://" + hostWithoutDefaultPort(scheme, u.Host)
}

func hostWithoutDefaultPort(scheme, host string) string {
	host = strings.ToLower(host)
	switch {
	case scheme == "http" && strings.HasSuffix(host, ":80"):
		return strings.TrimSuffix(host, ":80")
	case scheme == "https" && strings.HasSuffix(host, ":443"):
		return strings.TrimSuffix(host, ":443")
	}
	return host
}

func compileOrigins(field string, origins []string) (map[string]bool, error) {
	out := make(map[string]bool, len(origins))
	for i, o := range origins {
		n := normaliseOrigin(o)
		if n == "" || (!strings.HasPrefix(n, "http://") && !strings.HasPrefix(n, "https://")) {
			return nil, fmt.Errorf("%s[%d] %q: an origin is scheme://host[:port] with scheme http or https", field, i, o)
		}
		out[n] = true
	}
	return out, nil
}

func compileExtensionIDs(ids []string) (map[string]bool, error) {
	out := make(map[string]bool, len(ids))
	for i, id := range ids {
		if !validExtensionID(id) {
			return nil, fmt.Errorf("origins.extension_ids[%d] %q: an extension id is 32 letters a-p", i, id)
		}
		out[id] = true
	}
	return out, nil
}

func validExtensionID(id string) bool {
	if len(id) != 32 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] < 'a' || id[i] > 'p' {
			return false
		}
	}
	return true
}

// selfOrigin is the origin of the relay as the request reached it.
func selfOrigin(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + hostWithoutDefaultPort(scheme, r.Host)
}

// originAllowed judges the Origin header. explicit is true when the
// operator listed this very origin: such a request is cross-site by
// design and Sec-Fetch-Site must not undo the operator's choice.
func (rs *rules) originAllowed(p originPolicy, r *http.Request) (ok, explicit bool) {
	vals := r.Header.Values("Origin")
	if len(vals) == 0 {
		return true, false
	}
	if len(vals) > 1 {
		return false, false
	}
	switch p {
	case originCDP:
		n := normaliseOrigin(vals[0])
		ok := n != "" && rs.cdpOrigins[n]
		return ok, ok
	case originExtension:
		id, found := strings.CutPrefix(vals[0], "chrome-extension://")
		return found && rs.extensionIDs[id], false
	default:
		n := normaliseOrigin(vals[0])
		return n != "" && (n == selfOrigin(r) || rs.selfOrigins[n]), false
	}
}

// fetchSiteAllowed applies Fetch Metadata, which browsers send and other
// clients do not: a cross-site request is refused, as a page elsewhere
// has no business here, except a top-level navigation to the page shell
// (a link to the live view).
func fetchSiteAllowed(p originPolicy, navigable bool, r *http.Request) bool {
	if p == originExtension {
		// What a service worker's WebSocket reports varies across Chrome
		// versions; the Origin check above is the one that holds there.
		return true
	}
	if r.Header.Get("Sec-Fetch-Site") != "cross-site" {
		return true
	}
	return navigable && r.Header.Get("Sec-Fetch-Mode") == "navigate" && r.Header.Get("Sec-Fetch-Dest") == "document"
}
