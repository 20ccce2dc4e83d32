package testenv

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
)

// hits counts requests by host and path, so that a test can show that a
// refused navigation never left the browser.
type hits struct {
	mu sync.Mutex
	n  map[string]int
}

func (h *hits) add(r *http.Request) { h.addPath(r.Host + r.URL.Path) }

func (h *hits) addPath(key string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.n == nil {
		h.n = make(map[string]int)
	}
	h.n[key]++
}

// Hits returns how many requests origin (as in Main or Other) served for
// path.
func (p *Pages) Hits(origin, path string) int {
	p.hits.mu.Lock()
	defer p.hits.mu.Unlock()
	return p.hits.n[strings.TrimPrefix(origin, "http://")+path]
}

// policyPages are the pages the navigation fence is tried on: a link and a
// form to another origin, a redirect, and a JSON endpoint for routes.
func (p *Pages) policyPages(mux *http.ServeMux) {
	html := func(w http.ResponseWriter, body string) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, body)
	}
	mux.HandleFunc("/links.html", func(w http.ResponseWriter, r *http.Request) {
		p.hits.add(r)
		other := strings.ReplaceAll(r.URL.Query().Get("other"), `"`, "")
		html(w, `<!doctype html><title>Links</title>
<a id="away" href="`+other+`/target.html">Elsewhere</a>
<form id="post" method="post" action="`+other+`/target.html"><button id="submit">Post</button></form>
<a id="redirect" href="/redirect?to=`+other+`/target.html">Redirect</a>`)
	})
	mux.HandleFunc("/target.html", func(w http.ResponseWriter, r *http.Request) {
		p.hits.add(r)
		html(w, `<!doctype html><title>Target</title><p id="t">reached</p>`)
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		p.hits.add(r)
		http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
	})
	mux.HandleFunc("/api/data", func(w http.ResponseWriter, r *http.Request) {
		p.hits.add(r)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"from":"server"}`)
	})
}
