package relay

import (
	"encoding/json"
	"net/http"

	"github.com/cdprelay/cdprelay/relay/internal/core"

	"github.com/cdprelay/cdprelay/internal/routes"
)

func wsScheme(r *http.Request) string {
	if r.TLS != nil {
		return "wss://"
	}
	return "ws://"
}

// bases are the bases of the URLs handed out in answer to r: the public
// URL's, or the scheme and Host the request came with.
func (s *Server) bases(r *http.Request) (httpBase, wsBase string) {
	if s.public.Http != "" {
		return s.public.Http, s.public.Ws
	}
	return httpScheme(r) + r.Host, wsScheme(r) + r.Host
}

// serveDiscovery answers /json/version and /json/list as Chrome does, with
// URLs that point back at this relay: under its public URL, or the Host
// the client used.
func (s *Server) serveDiscovery(w http.ResponseWriter, r *http.Request, in *core.Instance, rt routes.Route) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "use GET", http.StatusMethodNotAllowed)
		return
	}
	_, base := s.bases(r)
	var v any
	switch rt.Doc {
	case routes.DocProtocol:
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		_, _ = w.Write(protocolJSON())
		return
	case routes.DocVersion:
		info := in.VersionInfo()
		if info.UserAgent == "" {
			// The stock extension does not say: ask a tab, if one is
			// shared, rather than report a browser we do not know.
			st := in.Lock()
			x := st.Ext
			in.Unlock()
			if x != nil && x.IsReady() {
				if learnt, err := in.EnsureInfo(r.Context(), x); err == nil {
					info = learnt
				}
			}
		}
		product := info.Product
		if product == "" {
			product = "Chrome"
		}
		v = map[string]string{
			"Browser":              product,
			"Protocol-Version":     "1.3",
			"User-Agent":           info.UserAgent,
			"V8-Version":           "",
			"WebKit-Version":       "",
			"webSocketDebuggerUrl": base + "/devtools/browser/" + in.Guid,
		}
	default:
		type entry struct {
			Description          string `json:"description"`
			ID                   string `json:"id"`
			Title                string `json:"title"`
			Type                 string `json:"type"`
			URL                  string `json:"url"`
			WebSocketDebuggerURL string `json:"webSocketDebuggerUrl"`
		}
		// A page's own endpoint, under the path the list was asked on: the
		// default instance's pages are also at the root, where Chrome has
		// them.
		pages := base + "/devtools/page/"
		if rt.GUID != "" {
			pages = base + "/cdp/" + in.Guid + "/devtools/page/"
		}
		list := []entry{}
		for _, t := range in.Status().Tabs {
			if t.TargetID == "" {
				continue
			}
			list = append(list, entry{ID: t.TargetID, Title: t.Title, Type: "page", URL: t.URL, WebSocketDebuggerURL: pages + t.TargetID})
		}
		v = list
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "   ")
	_ = enc.Encode(v)
}
