package relay

import (
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"strings"
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
	ExtensionURL string `json:"extensionUrl"` // the extension's WebSocket
	CDPURL       string `json:"cdpUrl"`       // for clients: ws://…/devtools/browser/<guid>
	HTTPURL      string `json:"httpUrl"`      // for clients that start from /json/version
	ConnectURL   string `json:"connectUrl"`   // opens the stock extension's connect page
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
	if s.cfg.AdminAllowed != nil {
		return s.cfg.AdminAllowed(r)
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
	in, err := s.NewInstanceWithProfile(r.URL.Query().Get("profile"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	host := r.Host
	// The stock extension's connect page takes only 127.0.0.1 or [::1].
	if h, port, err := net.SplitHostPort(host); err == nil && strings.EqualFold(h, "localhost") {
		host = net.JoinHostPort("127.0.0.1", port)
	}
	ext := wsScheme(r) + host + "/extension/" + in.guid
	info := NewInstanceInfo{
		InstanceID:   in.id,
		ExtensionURL: ext,
		CDPURL:       wsScheme(r) + host + "/devtools/browser/" + in.guid,
		HTTPURL:      httpScheme(r) + host + "/cdp/" + in.guid,
		ConnectURL:   StockConnectURL(ext, "cdprelay"),
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusCreated)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(info)
}
