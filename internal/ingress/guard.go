package ingress

import (
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"

	"github.com/cdprelay/cdprelay/internal/routes"
)

// Options are the parts of a Guard fixed for its life.
type Options struct {
	// Logger receives refusals at Debug (never a token). Default: discard.
	Logger *slog.Logger
	// Metrics counts decisions. Default: counted, not registered.
	Metrics *Metrics
}

// Guard checks every request before the relay sees it: Host, Origin,
// Fetch Metadata, then the token and its scope. What it lets through
// carries its Grant in the request's context, and no longer carries the
// token (neither the Authorization header nor the token parameter).
type Guard struct {
	next    http.Handler          // static
	log     *slog.Logger          // static
	metrics *Metrics              // static
	rules   atomic.Pointer[rules] // swapped by Reload
}

// New returns a guard in front of next.
func New(next http.Handler, cfg Config, opts Options) (*Guard, error) {
	rs, err := compile(cfg)
	if err != nil {
		return nil, err
	}
	g := &Guard{next: next, log: opts.Logger, metrics: opts.Metrics}
	if g.log == nil {
		g.log = slog.New(slog.DiscardHandler)
	}
	if g.metrics == nil {
		g.metrics = NewMetrics(nil)
	}
	g.rules.Store(rs)
	return g, nil
}

// Reload replaces the rules for the requests that follow. On error the
// rules in force stay. Connections already open are not affected.
func (g *Guard) Reload(cfg Config) error {
	rs, err := compile(cfg)
	if err != nil {
		return err
	}
	g.rules.Store(rs)
	return nil
}

// TokensConfigured reports whether the rules in force require tokens.
func (g *Guard) TokensConfigured() bool { return g.rules.Load().tokens != nil }

// ServeHTTP checks r and passes it on, or answers the refusal.
func (g *Guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rs := g.rules.Load()
	rt := rs.routes.Classify(r.Method, r.URL.Path)
	ep := rt.Area
	p := presented(r)
	grant, o := rs.decide(rt, r, p)
	g.metrics.count(ep, o)
	if o != outcomeAllowed {
		g.log.Debug("request refused", "endpoint", ep.String(), "reason", o.String(), "remote", r.RemoteAddr)
		refuse(w, r, rt, o)
		return
	}
	g.next.ServeHTTP(w, forward(r, p, grant))
}

// protocolHeader is Sec-WebSocket-Protocol in its canonical form, which
// the map is read with as it is (no allocation per request).
var protocolHeader = http.CanonicalHeaderKey("Sec-WebSocket-Protocol")

// presentation is what a request presents as its credentials, read once.
type presentation struct {
	token string     // a token, or the person key sent as one
	cred  credential // of token
	query string     // the query without any token parameter
	key   string     // the person key offered as a WebSocket subprotocol
	kcred credential // of key
	// protocols are the subprotocols offered without the key's; keyProto
	// says the handshake offered it, so that the header is rewritten.
	protocols []string
	keyProto  bool
}

func presented(r *http.Request) presentation {
	var p presentation
	p.token, p.cred, p.query = presentedToken(r.Header.Values("Authorization"), r.URL.RawQuery)
	p.key, p.kcred, p.protocols = presentedPersonKey(r.Header[protocolHeader])
	p.keyProto = p.kcred != credNone
	return p
}

// decide is the whole policy, in the order that keeps the answers from
// saying more than they must: the checks that do not depend on the URL's
// secret part first, then the credentials (a token is always hashed and
// compared against every entry), then the scope, then whether the request
// may act as the person.
func (rs *rules) decide(rt routes.Route, r *http.Request, p presentation) (Grant, outcome) {
	if !rs.hosts.allowed(r.Host) {
		return Grant{}, outcomeHost
	}
	if rt.Area == epBadPath {
		return Grant{}, outcomePath
	}
	rule := ruleFor(rt)
	ok, explicit := rs.originAllowed(rule.origin, r)
	if !ok {
		return Grant{}, outcomeOrigin
	}
	if !explicit && !fetchSiteAllowed(rule.origin, rule.navigable, r) {
		return Grant{}, outcomeFetchSite
	}
	if rule.sameOrigin && !sameOriginFetch(r) {
		return Grant{}, outcomeFetchSite
	}
	if p.kcred == credMalformed || (p.kcred == credToken && p.cred != credNone) {
		// Two credentials at once, or a key offered twice: which one
		// counts is refused rather than guessed.
		return Grant{}, outcomeToken
	}
	// The person key, offered as a subprotocol or sent as a token.
	var keyRefused bool
	switch {
	case p.kcred == credToken && rs.person.match(p.key):
		return rs.personKeyGrant(rule, r)
	case p.kcred == credToken:
		keyRefused = true
	case p.cred == credToken && rs.person.match(p.token):
		return rs.personKeyGrant(rule, r)
	}
	grant, o := rs.tokenGrant(rule, r, p)
	grant.KeyRefused = keyRefused
	if o == outcomeAllowed && rule.person && !grant.Person {
		return Grant{}, outcomePerson
	}
	return grant, o
}

// tokenGrant is the grant of a request without the person key: by its
// token, or, without tokens configured, by its address.
func (rs *rules) tokenGrant(rule endpointRule, r *http.Request, p presentation) (Grant, outcome) {
	if rs.tokens == nil {
		// Zero-config: this machine only, as Chrome's own port; but not
		// the person's actions, which the agent on this machine must not
		// take (the person key is for those).
		if loopbackPeer(r.RemoteAddr) {
			return Grant{Scopes: AllScopes}, outcomeAllowed
		}
		if rule.scopes == 0 {
			return Grant{}, outcomeAllowed
		}
		return Grant{}, outcomeToken
	}
	found, matched := rs.tokens.match(p.token)
	matched = matched && p.cred == credToken
	var grant Grant
	switch {
	case matched:
		grant = found
		// What may drive tabs is the agent's: it never acts as the
		// person, whatever else it grants.
		grant.Person = !grant.Scopes.Has(ScopeCDP)
	case p.cred != credNone:
		// A wrong token is refused even where none is needed: whoever
		// sent it would rather know now.
		return Grant{}, outcomeToken
	}
	switch {
	case rule.scopes == 0:
		return grant, outcomeAllowed
	case !matched:
		return Grant{}, outcomeToken
	case !grant.Scopes.HasAny(rule.scopes):
		return Grant{}, outcomeScope
	case rule.operatorOnly && grant.Tenant != "":
		return Grant{}, outcomeOperator
	}
	return grant, outcomeAllowed
}

// personKeyGrant is what the person key grants: the person's actions and
// the viewer's scopes; to a loopback peer of the zero-config relay, every
// scope, as without it. It is the operator's key (no tenant): it is
// minted by, and kept beside, the relay itself.
func (rs *rules) personKeyGrant(rule endpointRule, r *http.Request) (Grant, outcome) {
	g := Grant{Scopes: PersonScopes, Person: true, PersonKey: true}
	if rs.tokens == nil && loopbackPeer(r.RemoteAddr) {
		g.Scopes = AllScopes
	}
	if rule.scopes != 0 && !rule.person && !g.Scopes.HasAny(rule.scopes) {
		return Grant{}, outcomeScope
	}
	return g, outcomeAllowed
}

// sameOriginFetch refuses what a browser says another page sent: a page
// of the same site (another port of the same host) as well as another
// site. A client that is not a browser sends no Fetch Metadata.
func sameOriginFetch(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin", "none":
		return true
	}
	return false
}

func loopbackPeer(remoteAddr string) bool {
	ap, err := netip.ParseAddrPort(remoteAddr)
	if err != nil {
		host, _, err := net.SplitHostPort(remoteAddr)
		if err != nil {
			return false
		}
		a, err := netip.ParseAddr(host)
		return err == nil && a.Unmap().IsLoopback()
	}
	return ap.Addr().Unmap().IsLoopback()
}

// refuse answers a refused request. Past the Host and Origin checks, a
// capability endpoint answers exactly what the relay answers for an
// unknown guid (http.NotFound), so that a wrong token, a token of another
// scope and an unknown guid cannot be told apart.
func refuse(w http.ResponseWriter, r *http.Request, rt routes.Route, o outcome) {
	ep := rt.Area
	switch {
	case o == outcomeHost:
		http.Error(w, "Host header is not an allowed name for this relay", http.StatusForbidden)
	case o == outcomeOrigin:
		http.Error(w, "requests from this Origin are refused on "+ep.String()+" endpoints", http.StatusForbidden)
	case o == outcomeFetchSite:
		http.Error(w, "cross-site requests are refused", http.StatusForbidden)
	case rule(ep).capability:
		http.NotFound(w, r)
	case o == outcomeToken:
		w.Header().Set("WWW-Authenticate", `Bearer realm="cdprelay"`)
		http.Error(w, "a valid token is required: Authorization: Bearer <token>, or ?token=<token>", http.StatusUnauthorized)
	case o == outcomeOperator:
		http.Error(w, "this endpoint is the operator's: a tenant's token cannot use it", http.StatusForbidden)
	case o == outcomePerson:
		http.Error(w, "this is the person's action: it needs the person key (the live-view link cdprelay serve prints carries it; a program sends it as Authorization: Bearer), or a token without the cdp scope", http.StatusForbidden)
	default:
		http.Error(w, "the token does not grant the "+ruleFor(rt).scopes.or()+" scope", http.StatusForbidden)
	}
}

// forward is r with its grant and without its credentials: no token,
// and no person key among its subprotocols.
func forward(r *http.Request, p presentation, g Grant) *http.Request {
	r2 := r.WithContext(withGrant(r.Context(), g))
	if p.query != r.URL.RawQuery {
		u := *r.URL
		u.RawQuery = p.query
		r2.URL = &u
		r2.RequestURI = u.RequestURI()
	}
	_, auth := r.Header["Authorization"]
	if auth || p.keyProto {
		r2.Header = r.Header.Clone()
		r2.Header.Del("Authorization")
		if p.keyProto {
			delete(r2.Header, protocolHeader)
			if len(p.protocols) > 0 {
				r2.Header[protocolHeader] = []string{strings.Join(p.protocols, ", ")}
			}
		}
	}
	return r2
}
