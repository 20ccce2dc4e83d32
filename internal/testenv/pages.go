package testenv

import (
	"fmt"
	"net"
	"net/http"
	"strings"
)

// Pages serves test pages on three loopback origins, so that a frame from
// one is cross-site to another and Chrome puts it in its own process (an
// out-of-process iframe with its own CDP session).
type Pages struct {
	Main   string // http://127.0.0.1:<port>
	Other  string // http://127.0.0.2:<port>, another site
	Third  string // http://127.0.0.3:<port>, a third site
	srvs   []*http.Server
	hits   hits
	bodies bodies
	hops   hops
	seen   seen
	site   Site
}

// StartPages starts the three origins.
func StartPages() (*Pages, error) {
	p := &Pages{}
	var err error
	if p.Main, err = p.serve("127.0.0.1:0"); err != nil {
		return nil, err
	}
	if p.Other, err = p.serve("127.0.0.2:0"); err != nil {
		p.Close()
		return nil, err
	}
	if p.Third, err = p.serve("127.0.0.3:0"); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

func (p *Pages) serve(addr string) (string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", err
	}
	base := "http://" + ln.Addr().String()
	srv := &http.Server{Handler: p.handler()}
	p.srvs = append(p.srvs, srv)
	go srv.Serve(ln)
	return base, nil
}

// DownloadBody is the content of /files/report.csv, which /download.html
// links to and which is served as an attachment.
const DownloadBody = "name,value\nrelay,42\n"

// Close stops the origins.
func (p *Pages) Close() {
	for _, s := range p.srvs {
		s.Close()
	}
}

func (p *Pages) handler() http.Handler {
	mux := http.NewServeMux()
	p.policyPages(mux)
	p.hostilePages(mux)
	p.secretPages(mux)
	p.personPages(mux)
	p.tierPages(mux)
	p.lockPages(mux)
	html := func(w http.ResponseWriter, body string) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, body)
	}
	mux.HandleFunc("/form.html", func(w http.ResponseWriter, r *http.Request) {
		html(w, `<!doctype html><title>Form</title>
<h1 id="out">nothing yet</h1>
<input id="name" autocomplete="off">
<button id="go" onclick="document.getElementById('out').textContent = 'Hello, ' + document.getElementById('name').value">Go</button>
<button id="open" onclick="window.open('/popup.html')">Open popup</button>`)
	})
	// A login form: a password manager's inline menu comes to its password
	// field (standins.go).
	mux.HandleFunc("/login.html", func(w http.ResponseWriter, r *http.Request) {
		html(w, `<!doctype html><title>Login</title>
<h1 id="out">not signed in</h1>
<form id="form" onsubmit="event.preventDefault(); document.getElementById('out').textContent = 'Hello, ' + document.getElementById('user').value + ' (' + document.getElementById('pw').value.length + ')'">
<input id="user" name="user" autocomplete="username"> <input id="pw" name="pw" type="password" autocomplete="current-password">
<button id="go">Sign in</button></form>`)
	})
	mux.HandleFunc("/download.html", func(w http.ResponseWriter, r *http.Request) {
		html(w, `<!doctype html><title>Download</title><a id="dl" href="/files/report.csv">Download the report</a>`)
	})
	mux.HandleFunc("/files/report.csv", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/csv")
		w.Header().Set("Content-Disposition", `attachment; filename="report.csv"`)
		fmt.Fprint(w, DownloadBody)
	})
	mux.HandleFunc("/popup.html", func(w http.ResponseWriter, r *http.Request) {
		html(w, `<!doctype html><title>Popup</title><p id="p">I am the popup</p>`)
	})
	mux.HandleFunc("/frames.html", func(w http.ResponseWriter, r *http.Request) {
		other := r.URL.Query().Get("other")
		html(w, `<!doctype html><title>Frames</title><h1>Top</h1>
<iframe id="f" src="`+strings.ReplaceAll(other, `"`, "")+`/inner.html" width="400" height="200"></iframe>`)
	})
	mux.HandleFunc("/inner.html", func(w http.ResponseWriter, r *http.Request) {
		html(w, `<!doctype html><title>Inner</title>
<p id="where">inner frame at `+r.Host+`</p>
<button id="b" onclick="this.textContent = 'clicked in frame'">Click me</button>`)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		html(w, `<!doctype html><title>cdprelay test page</title><p>hello</p>`)
	})
	return mux
}
