package relay

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/cdprelay/cdprelay/relay/internal/core"
)

// StockExtensionID is the Chrome Web Store id of the Playwright extension
// ("Playwright Extension"), which speaks the same protocol v2 as ours.
const StockExtensionID = "mmlmfjhmonkocbjadbfplnigmagldckm"

// StockConnectURL is the link that makes the stock Playwright extension
// connect to the extension WebSocket extURL: the person opens it in the
// Chrome that has the extension and picks the tab to share.
func StockConnectURL(extURL, client string) string {
	q := url.Values{}
	q.Set("mcpRelayUrl", extURL)
	q.Set("protocolVersion", "2")
	c, _ := json.Marshal(map[string]string{"name": client})
	q.Set("client", string(c))
	return "chrome-extension://" + StockExtensionID + "/connect.html?" + q.Encode()
}

// NewInstanceInfo is what POST /v1/instances answers.
type NewInstanceInfo struct {
	InstanceID   string `json:"instanceId"`
	Tenant       string `json:"tenant,omitempty"` // whose it is; absent: the operator's
	ExtensionURL string `json:"extensionUrl"`     // the extension's WebSocket
	CDPURL       string `json:"cdpUrl"`           // for clients: ws://…/devtools/browser/<guid>
	HTTPURL      string `json:"httpUrl"`          // for clients that start from /json/version
	ConnectURL   string `json:"connectUrl"`       // opens the stock extension's connect page
}

func httpScheme(r *http.Request) string {
	if r.TLS != nil {
		return "https://"
	}
	return "http://"
}

// adminAllowed decides who may use the admin endpoints. Today that is
// whoever reaches the relay from this machine; a token check belongs here.
func (s *Server) adminAllowed(r *http.Request) bool {
	if s.Cfg.AdminAllowed != nil {
		return s.Cfg.AdminAllowed(r)
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// serveInstances mints an instance: POST /v1/instances. The instance is
// removed if no extension connects to it within the configured
// UnclaimedTTL.
//
// It is the minting token's tenant's; the operator may mint for a tenant
// with ?tenant= and choose a policy profile with ?profile=. A tenant's
// instance gets the profile the operator set for the tenant: a tenant's
// token choosing its own would choose its own policy.
func (s *Server) serveInstances(w http.ResponseWriter, r *http.Request) {
	if !s.adminAllowed(r) {
		http.Error(w, "the admin endpoints answer this machine only", http.StatusForbidden)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "use POST", http.StatusMethodNotAllowed)
		return
	}
	tenant := s.requestTenant(r)
	q := r.URL.Query()
	profile, forTenant := q.Get("profile"), q.Get("tenant")
	switch {
	case len(q["profile"]) > 1 || len(q["tenant"]) > 1:
		http.Error(w, "give profile and tenant once each", http.StatusBadRequest)
		return
	case tenant != "" && profile != "":
		http.Error(w, "a tenant's instances get the policy profile the operator set for the tenant (tenants.profiles); ?profile= is the operator's", http.StatusForbidden)
		return
	case tenant != "" && forTenant != "" && forTenant != tenant:
		http.Error(w, "a tenant's token mints instances for its own tenant only", http.StatusForbidden)
		return
	case tenant == "" && forTenant != "" && !slices.Contains(s.tenantRules().Known, forTenant):
		http.Error(w, fmt.Sprintf("no token names the tenant %.64q: mint for a tenant of the config's tokens", forTenant), http.StatusBadRequest)
		return
	case tenant != "":
		forTenant = tenant
	}
	in, err := s.NewInstanceFor(forTenant, profile)
	switch {
	case errors.Is(err, errTenantFull):
		http.Error(w, err.Error(), http.StatusConflict)
		return
	case err != nil:
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	info := s.InstanceInfo(r, in)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusCreated)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(info)
}

// InstanceInfo is the links of in as the answer to r names them: under
// the public URL, or the scheme and Host r came with.
func (s *Server) InstanceInfo(r *http.Request, in *core.Instance) NewInstanceInfo {
	httpBase, wsBase := s.bases(r)
	if s.public.Http == "" {
		// The stock extension's connect page takes only 127.0.0.1 or [::1].
		if h, port, err := net.SplitHostPort(r.Host); err == nil && strings.EqualFold(h, "localhost") {
			host := net.JoinHostPort("127.0.0.1", port)
			httpBase, wsBase = httpScheme(r)+host, wsScheme(r)+host
		}
	}
	ext := wsBase + "/extension/" + in.Guid
	return NewInstanceInfo{
		InstanceID:   in.Id,
		Tenant:       in.Tenant(),
		ExtensionURL: ext,
		CDPURL:       wsBase + "/devtools/browser/" + in.Guid,
		HTTPURL:      httpBase + "/cdp/" + in.Guid,
		ConnectURL:   StockConnectURL(ext, "cdprelay"),
	}
}
