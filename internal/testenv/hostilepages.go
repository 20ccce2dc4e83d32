package testenv

import (
	"bytes"
	"fmt"
	"html"
	"io"
	"net/http"
	"strings"
	"sync"
)

// bodies keeps what was posted to /hostile/sink.
type bodies struct {
	mu sync.Mutex
	b  [][]byte
}

// hostilePages are the pages the hostile-client tests attack from: every
// request under /hostile/ is counted (Hits), so that a test can show an
// attack never reached a host, and every body posted to /hostile/sink is
// kept (Received), so that it can show a file never left the machine.
func (p *Pages) hostilePages(mux *http.ServeMux) {
	page := func(w http.ResponseWriter, title, body string) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		// Never from the HTTP cache: a test that counts requests must see
		// every one that the browser would make.
		w.Header().Set("Cache-Control", "no-store")
		fmt.Fprintf(w, "<!doctype html><title>%s</title>\n%s", html.EscapeString(title), body)
	}
	q := func(r *http.Request, name string) string {
		return html.EscapeString(r.URL.Query().Get(name))
	}
	// A landing page, one path per attack: its text is a marker that says
	// the client read this page.
	mux.HandleFunc("/hostile/landing/", func(w http.ResponseWriter, r *http.Request) {
		p.hits.add(r)
		name := strings.TrimPrefix(r.URL.Path, "/hostile/landing/")
		page(w, "Landing "+name, `<p id="marker">`+html.EscapeString(LandingMarker(name))+`</p>`)
	})
	// The same, but fit for the back/forward cache (no Cache-Control:
	// no-store), so that going back to it restores it without a request.
	mux.HandleFunc("/hostile/cached/", func(w http.ResponseWriter, r *http.Request) {
		p.hits.add(r)
		name := strings.TrimPrefix(r.URL.Path, "/hostile/cached/")
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><title>Cached %s</title><p id="marker">%s</p>`, html.EscapeString(name), html.EscapeString(LandingMarker(name)))
	})
	// The same, but never fit for the back/forward cache (an unload
	// handler keeps a page out of it), so that going back to it has to ask
	// the server again.
	mux.HandleFunc("/hostile/unload/", func(w http.ResponseWriter, r *http.Request) {
		p.hits.add(r)
		name := strings.TrimPrefix(r.URL.Path, "/hostile/unload/")
		page(w, "Unload "+name, `<p id="marker">`+html.EscapeString(LandingMarker(name))+`</p>
<script>addEventListener('unload', () => {});</script>`)
	})
	// A page the person is on: a marker that only a click on the button
	// (or an edit of the DOM) changes, links and a form that open new tabs.
	mux.HandleFunc("/hostile/tab.html", func(w http.ResponseWriter, r *http.Request) {
		p.hits.add(r)
		to := q(r, "to")
		page(w, "Person's tab", `<p id="marker">untouched</p>
<button id="change" style="position:absolute;left:10px;top:60px;width:200px;height:40px" onclick="document.getElementById('marker').textContent = 'changed by a click'">Change</button>
<a id="blank" target="_blank" href="`+to+`" style="position:absolute;left:10px;top:120px;width:200px;height:40px;display:block">Open in a new tab</a>
<form id="post" target="_blank" method="post" action="`+to+`"><input name="q" value="1"><button id="submit" style="position:absolute;left:10px;top:180px;width:200px;height:40px">Post</button></form>
<a id="self" href="`+to+`" style="position:absolute;left:10px;top:240px;width:200px;height:40px;display:block">Follow</a>`)
	})
	// An iframe of the given address.
	mux.HandleFunc("/hostile/frame.html", func(w http.ResponseWriter, r *http.Request) {
		p.hits.add(r)
		page(w, "Frame", `<h1>Top</h1><iframe id="f" src="`+q(r, "src")+`" width="400" height="200"></iframe>`)
	})
	// The inside of a frame: a button that changes its own marker.
	mux.HandleFunc("/hostile/inner.html", func(w http.ResponseWriter, r *http.Request) {
		p.hits.add(r)
		page(w, "Inner", `<button id="b" style="position:absolute;left:0;top:0;width:300px;height:100px" onclick="this.textContent = 'clicked in frame'">untouched</button>`)
	})
	// Speculation rules asking the browser to prefetch (or prerender) a URL.
	mux.HandleFunc("/hostile/speculation.html", func(w http.ResponseWriter, r *http.Request) {
		p.hits.add(r)
		kind := r.URL.Query().Get("kind")
		if kind != "prerender" {
			kind = "prefetch"
		}
		urls := strings.ReplaceAll(strings.ReplaceAll(r.URL.Query().Get("url"), `"`, ""), "<", "")
		page(w, "Speculation", `<script type="speculationrules">{"`+kind+`": [{"source": "list", "urls": ["`+urls+`"], "eagerness": "immediate"}]}</script>
<a id="go" href="`+q(r, "url")+`">Go</a>`)
	})
	// A file input in a multipart form that posts to /hostile/sink, and a
	// drop zone that posts the files dropped on it.
	mux.HandleFunc("/hostile/upload.html", func(w http.ResponseWriter, r *http.Request) {
		p.hits.add(r)
		page(w, "Upload", `<form id="form" method="post" enctype="multipart/form-data" action="/hostile/sink">
<input type="file" id="file" name="file"><button id="send">Send</button></form>
<div id="drop" style="position:absolute;left:0;top:100px;width:300px;height:200px;background:#eee">drop here</div>
<p id="dropped">nothing dropped</p>
<script>
const zone = document.getElementById('drop');
zone.addEventListener('dragover', (e) => e.preventDefault());
zone.addEventListener('drop', async (e) => {
  e.preventDefault();
  const fd = new FormData();
  for (const f of e.dataTransfer.files) fd.append('file', f);
  document.getElementById('dropped').textContent = e.dataTransfer.files.length + ' dropped';
  await fetch('/hostile/sink', {method: 'POST', body: fd});
});
</script>`)
	})
	mux.HandleFunc("/hostile/sink", func(w http.ResponseWriter, r *http.Request) {
		p.hits.add(r)
		b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		p.bodies.mu.Lock()
		p.bodies.b = append(p.bodies.b, b)
		p.bodies.mu.Unlock()
		page(w, "Sink", `<p id="marker">received</p>`)
	})
}

// LandingMarker is the text of /hostile/landing/<name>,
// /hostile/cached/<name> and /hostile/unload/<name>.
func LandingMarker(name string) string { return "landed-" + name + "-page" }

// Received reports whether any body posted to /hostile/sink, on either
// origin, contained s.
func (p *Pages) Received(s string) bool {
	p.bodies.mu.Lock()
	defer p.bodies.mu.Unlock()
	for _, b := range p.bodies.b {
		if bytes.Contains(b, []byte(s)) {
			return true
		}
	}
	return false
}

// HitsUnder returns how many requests origin served for paths that start
// with prefix.
func (p *Pages) HitsUnder(origin, prefix string) int {
	p.hits.mu.Lock()
	defer p.hits.mu.Unlock()
	host := strings.TrimPrefix(origin, "http://")
	n := 0
	for k, v := range p.hits.n {
		if strings.HasPrefix(k, host+prefix) {
			n += v
		}
	}
	return n
}
