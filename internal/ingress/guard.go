package ingress

import (
	"log/slog"
	"net"
	"net/http"
	"net/netip"
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
	token, cred, query := presentedToken(r.Header.Values("Authorization"), r.URL.RawQuery)
	grant, o := rs.decide(rt, r, token, cred)
	g.metrics.count(ep, o)
	if o != outcomeAllowed {
		g.log.Debug("request refused", "endpoint", ep.String(), "reason", o.String(), "remote", r.RemoteAddr)
		refuse(w, r, rt, o)
		return
	}
	g.next.ServeHTTP(w, forward(r, query, grant))
}

// decide is the whole policy, in the order that keeps the answers from
// saying more than they must: the checks that do not depend on the URL's
// secret part first, then the token, always hashed and compared against
// every entry, then the scope.
func (rs *rules) decide(rt routes.Route, r *http.Request, token string, cred credential) (Grant, outcome) {
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
	if rs.tokens == nil {
		// Zero-config: this machine only, as Chrome's own port.
		if loopbackPeer(r.RemoteAddr) {
			return Grant{Scopes: AllScopes}, outcomeAllowed
		}
		if rule.scopes == 0 {
			return Grant{}, outcomeAllowed
		}
		return Grant{}, outcomeToken
	}
	found, matched := rs.tokens.match(token)
	matched = matched && cred == credToken
	var grant Grant
	switch {
	case matched:
		grant = found
	case cred != credNone:
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
	default:
		http.Error(w, "the token does not grant the "+ruleFor(rt).scopes.or()+" scope", http.StatusForbidden)
	}
}

// forward is r with its grant and without its token.
func forward(r *http.Request, query string, g Grant) *http.Request {
	r2 := r.WithContext(withGrant(r.Context(), g))
	if query != r.URL.RawQuery {
		u := *r.URL
		u.RawQuery = query
		r2.URL = &u
		r2.RequestURI = u.RequestURI()
	}
	if _, ok := r.Header["Authorization"]; ok {
		r2.Header = r.Header.Clone()
		r2.Header.Del("Authorization")
	}
	return r2
}
