package testenv

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"html"
	"io"
	"net/http"
	"strings"
	"sync"
)

// tierPages are the pages of the tier tests, the same on every origin: a
// site with a marker in its content, controls that leave a trace when the
// automation acts on them, and pages that frame, open or redirect to
// another address. Every request under /tier/act/ is counted (Hits,
// HitsUnder) and its body kept (Received): an act that reached a site, or
// content sent out of one, shows there. The site's API calls are counted
// too: a live page that goes on calling it goes on living.
func (p *Pages) tierPages(mux *http.ServeMux) {
	page := func(w http.ResponseWriter, title, body string) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!doctype html><title>%s</title>\n%s", html.EscapeString(title), body)
	}
	// The site. Its content (title, text, console, API answers) carries
	// TierContent(m), which the address does not hold; the address holds
	// m. With live=1 it keeps changing: a tick every 200 ms writes the
	// title and the text, logs to the console and calls its API, so that a
	// tab on it never stops having events.
	mux.HandleFunc("/tier/site.html", func(w http.ResponseWriter, r *http.Request) {
		p.hits.add(r)
		p.seen.add(r)
		m := r.URL.Query().Get("m")
		c := html.EscapeString(TierContent(m))
		js := strings.NewReplacer(`\`, `\\`, `'`, `\'`, "<", `\x3c`).Replace(TierContent(m))
		live, env := "", ""
		if r.URL.Query().Get("live") == "1" {
			live = `<script>
let n = 0;
setInterval(() => {
  n++;
  document.title = 'Tier ` + js + ` ' + n;
  document.getElementById('tick').textContent = '` + js + ` tick ' + n;
  console.log('` + js + ` console ' + n);
  if (n % 3 === 0) fetch('/tier/api?m=' + encodeURIComponent(new URLSearchParams(location.search).get('m') || '')).then((r) => r.text()).then((t) => { document.getElementById('api').textContent = t; });
}, 200);
</script>`
		}
		if r.URL.Query().Get("csp") == "1" {
			// A site that allows its own script alone: the inline script
			// without the nonce runs only where its policy is bypassed.
			// The one with it says, as the document starts, what the page
			// is told of its browser (TierEnv).
			w.Header().Set("Content-Security-Policy", "script-src 'nonce-tierenv'")
			live += `<script>navigator.sendBeacon('/tier/act/csp-bypassed', 'the page ran script its policy forbids');</script>`
			env = `<script nonce="tierenv">navigator.sendBeacon('/tier/act/env?m=' + encodeURIComponent(new URLSearchParams(location.search).get('m') || ''), JSON.stringify({
  ua: navigator.userAgent, width: innerWidth, timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
  locale: Intl.DateTimeFormat().resolvedOptions().locale, binding: typeof window.plantedBinding, script: typeof window.__plantedScript,
  touch: navigator.maxTouchPoints, reducedMotion: matchMedia('(prefers-reduced-motion: reduce)').matches,
  cookie: (document.cookie = 'tierenv=1', document.cookie.includes('tierenv=1')),
}));</script>`
		}
		page(w, "Tier "+TierContent(m), env+`<h1 id="marker">`+c+`</h1>
<p id="out">untouched</p>
<p id="tick" data-secret="`+c+`">no tick yet</p>
<p id="api">no answer yet</p>
<input id="name" autocomplete="off" oninput="document.getElementById('out').textContent = 'typed ' + this.value" onkeydown="if (event.key === 'Enter') document.getElementById('out').textContent = 'pressed Enter'">
<input id="agree" type="checkbox" onchange="document.getElementById('out').textContent = 'checked ' + this.checked">
<select id="pick" onchange="document.getElementById('out').textContent = 'selected ' + this.value"><option value="a">a</option><option value="b">b</option></select>
<input id="file" type="file" onchange="document.getElementById('out').textContent = 'file ' + (this.files[0] ? this.files[0].name : '')">
<button id="change" style="display:block;width:200px;height:40px" onclick="document.getElementById('out').textContent = 'changed by a click'">Change</button>
<form id="form" method="post" action="/tier/act/submit"><input name="q" value="1"><button id="submit" style="display:block;width:200px;height:40px">Send</button></form>
<a id="away" href="/tier/act/link">Away</a>
`+live)
	})
	mux.HandleFunc("/tier/api", func(w http.ResponseWriter, r *http.Request) {
		p.hits.add(r)
		if r.Header.Get("X-Forged") != "" {
			// A request a client changed on its way: counted as an act.
			r.URL.Path = "/tier/act/forged-header"
			p.hits.add(r)
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"content":%q}`, TierContent(r.URL.Query().Get("m")))
	})
	// Where an act lands: a form sent, a link followed, a page that a
	// script sent something to.
	mux.HandleFunc("/tier/act/", func(w http.ResponseWriter, r *http.Request) {
		p.hits.add(r)
		b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		p.bodies.mu.Lock()
		p.bodies.b = append(p.bodies.b, append([]byte(r.URL.RawQuery+"\n"), b...))
		p.bodies.mu.Unlock()
		w.Header().Set("Access-Control-Allow-Origin", "*")
		page(w, "Acted", `<p id="marker">acted</p>`)
	})
	// A page of the origin that frames another address.
	mux.HandleFunc("/tier/frame.html", func(w http.ResponseWriter, r *http.Request) {
		p.hits.add(r)
		page(w, "Tier parent", `<h1 id="top">the parent</h1>
<p id="pout">untouched</p>
<button id="pchange" style="display:block;width:200px;height:40px" onclick="document.getElementById('pout').textContent = 'changed by a click'">Change</button>
<iframe id="f" src="`+html.EscapeString(r.URL.Query().Get("src"))+`" width="600" height="300"></iframe>`)
	})
	// A page with a link to another address, in this tab and in a new one.
	mux.HandleFunc("/tier/links.html", func(w http.ResponseWriter, r *http.Request) {
		p.hits.add(r)
		to := html.EscapeString(r.URL.Query().Get("to"))
		page(w, "Tier links", `<a id="here" href="`+to+`" style="display:block;width:200px;height:40px">Follow</a>
<a id="blank" href="`+to+`" target="_blank" style="display:block;width:200px;height:40px">New tab</a>`)
	})
	// A hop to the site under a marker the server makes up: what follows
	// it, only the site itself knows (Hops).
	mux.HandleFunc("/tier/hop", func(w http.ResponseWriter, r *http.Request) {
		p.hits.add(r)
		b := make([]byte, 8)
		rand.Read(b)
		m := "tierhop" + hex.EncodeToString(b)
		p.hops.mu.Lock()
		p.hops.m = append(p.hops.m, m)
		p.hops.mu.Unlock()
		to := "/tier/site.html?m=" + m
		if r.URL.Query().Get("live") == "1" {
			to += "&live=1"
		}
		http.Redirect(w, r, to, http.StatusFound)
	})
	// Every way a page sends its tab on to another address, each to
	// ?to=: an HTTP redirect (?code=, 302 by default), a Refresh header, a
	// meta refresh, a script's location, a form the page posts, a link
	// the page clicks.
	mux.HandleFunc("/tier/redirect", func(w http.ResponseWriter, r *http.Request) {
		p.hits.add(r)
		p.seen.add(r)
		code := http.StatusFound
		switch r.URL.Query().Get("code") {
		case "301":
			code = http.StatusMovedPermanently
		case "303":
			code = http.StatusSeeOther
		case "307":
			code = http.StatusTemporaryRedirect
		case "308":
			code = http.StatusPermanentRedirect
		}
		// Never cached: a test runs the same redirect more than once.
		w.Header().Set("Cache-Control", "no-store")
		http.Redirect(w, r, r.URL.Query().Get("to"), code)
	})
	mux.HandleFunc("/tier/refresh", func(w http.ResponseWriter, r *http.Request) {
		p.hits.add(r)
		w.Header().Set("Refresh", "0; url="+r.URL.Query().Get("to"))
		page(w, "Tier refresh", `<p>on its way</p>`)
	})
	to := func(r *http.Request) (attr, js string) {
		u := r.URL.Query().Get("to")
		return html.EscapeString(u), strings.NewReplacer(`\`, `\\`, `'`, `\'`, "<", `\x3c`).Replace(u)
	}
	mux.HandleFunc("/tier/meta", func(w http.ResponseWriter, r *http.Request) {
		p.hits.add(r)
		attr, _ := to(r)
		page(w, "Tier meta", `<meta http-equiv="refresh" content="0; url=`+attr+`"><p>on its way</p>`)
	})
	mux.HandleFunc("/tier/script", func(w http.ResponseWriter, r *http.Request) {
		p.hits.add(r)
		_, js := to(r)
		page(w, "Tier script", `<script>setTimeout(() => { location.href = '`+js+`'; }, 50);</script>`)
	})
	mux.HandleFunc("/tier/post", func(w http.ResponseWriter, r *http.Request) {
		p.hits.add(r)
		attr, _ := to(r)
		page(w, "Tier post", `<form id="f" method="post" action="`+attr+`"><input name="q" value="posted"></form>
<script>setTimeout(() => document.getElementById('f').submit(), 50);</script>`)
	})
	mux.HandleFunc("/tier/click", func(w http.ResponseWriter, r *http.Request) {
		p.hits.add(r)
		attr, _ := to(r)
		page(w, "Tier click", `<a id="go" href="`+attr+`">Go</a>
<script>setTimeout(() => document.getElementById('go').click(), 50);</script>`)
	})
}

// TierEnv is what the tier site with ?csp=1 and marker m said of its
// browser as its document started (a JSON object), and whether it has.
func (p *Pages) TierEnv(m string) (string, bool) {
	p.bodies.mu.Lock()
	defer p.bodies.mu.Unlock()
	prefix := []byte("m=" + m + "\n")
	for _, b := range p.bodies.b {
		if bytes.HasPrefix(b, prefix) {
			return string(b[len(prefix):]), true
		}
	}
	return "", false
}

// SeenRequest is a request a tier page served: its address and headers.
type SeenRequest struct {
	Host, Path, Method string
	Header             http.Header
}

// seen keeps the requests of the tier site and its redirects, at most
// maxSeen of them.
type seen struct {
	mu sync.Mutex
	r  []SeenRequest
}

const maxSeen = 4096

func (s *seen) add(r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.r) >= maxSeen {
		s.r = s.r[1:]
	}
	s.r = append(s.r, SeenRequest{Host: r.Host, Path: r.URL.RequestURI(), Method: r.Method, Header: r.Header.Clone()})
}

// Seen returns the requests origin served for the tier site and its
// redirects whose path and query contain part, oldest first.
func (p *Pages) Seen(origin, part string) []SeenRequest {
	p.seen.mu.Lock()
	defer p.seen.mu.Unlock()
	host := strings.TrimPrefix(origin, "http://")
	var out []SeenRequest
	for _, r := range p.seen.r {
		if r.Host == host && strings.Contains(r.Path, part) {
			out = append(out, r)
		}
	}
	return out
}

// hops keeps the markers /tier/hop made up.
type hops struct {
	mu sync.Mutex
	m  []string
}

// Hops returns the markers /tier/hop made up, oldest first.
func (p *Pages) Hops() []string {
	p.hops.mu.Lock()
	defer p.hops.mu.Unlock()
	return append([]string(nil), p.hops.m...)
}

// TierContent is what /tier/site.html?m=<m> shows of itself: its title,
// text, console and API answers carry it; its address does not.
func TierContent(m string) string {
	b := []byte(m)
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
	return "content-" + string(b)
}
