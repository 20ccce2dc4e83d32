package testenv

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"html"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/gorilla/websocket"
)

// Site is a small web site with a login, served under /secure/ and
// /basic/ on both origins: what the credential and secret tests attack.
//
//   - /secure/login.html: a login form (#user, #password, #submit) that
//     posts to /secure/login; with ?other=<origin>, a frame of that
//     origin's /secure/iframe.html below it.
//   - POST /secure/login: when the password is the one SetPassword gave,
//     a new session: an HttpOnly cookie "sid" (a fresh value each time).
//   - /secure/home, /secure/api: whether the request came with a live
//     session (#state "logged in" / "logged out"; {"loggedIn":...}).
//   - /secure/rotate: a logged-in request gets a new session id in a
//     Set-Cookie of this response; the old one stops working.
//   - /secure/ws: a WebSocket that says "logged in" or "logged out".
//   - /secure/echo: a page that shows the password it was given (query
//     or form) in #echo.
//   - /secure/iframe.html: sets a cookie of its own origin, "fsid"
//     (HttpOnly, SameSite=None, Secure, Partitioned: Chrome blocks other
//     third-party cookies by default), and has a field (#inner) that
//     posts what is typed in it to /secure/sink.
//   - /basic/: HTTP Basic authentication with the pair SetBasic gave.
//
// Every request under those paths is recorded with its Cookie and
// Authorization headers and body (Requests): a test can show that the
// real cookie reached the site (it still works) or that it did not.
type Site struct {
	mu       sync.Mutex
	password string
	user     string
	pass     string
	live     map[string]string // session id → the host it belongs to
	issued   []string          // every cookie value ever set, rotated ones and frames' included
	reqs     []SiteRequest
}

// SiteRequest is one request the site received.
type SiteRequest struct {
	Host, Method, Path, Query string
	Cookie, Authorization     string
	Body                      string
	LoggedIn                  bool // it carried a live session cookie
}

// Site is the logged-in site of both origins.
func (p *Pages) Site() *Site { return &p.site }

// SetPassword sets the password /secure/login accepts; "" accepts none.
func (s *Site) SetPassword(pw string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.password = pw
}

// Password is the password /secure/login accepts.
func (s *Site) Password() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.password
}

// SetBasic sets the pair /basic/ accepts.
func (s *Site) SetBasic(user, pass string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.user, s.pass = user, pass
}

// Requests returns the requests received for paths starting with prefix,
// in order.
func (s *Site) Requests(prefix string) []SiteRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []SiteRequest
	for _, r := range s.reqs {
		if strings.HasPrefix(r.Path, prefix) {
			out = append(out, r)
		}
	}
	return out
}

// Issued returns every cookie value the site ever set: sessions, rotated
// sessions and frames' cookies.
func (s *Site) Issued() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.issued...)
}

// Live returns the live session ids of host (as in Main, without the
// scheme).
func (s *Site) Live(host string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for id, h := range s.live {
		if h == host {
			out = append(out, id)
		}
	}
	return out
}

func (s *Site) newValue(host string, session bool) string {
	b := make([]byte, 16)
	rand.Read(b)
	v := "v" + hex.EncodeToString(b)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.live == nil {
		s.live = map[string]string{}
	}
	if session {
		s.live[v] = host
	}
	s.issued = append(s.issued, v)
	return v
}

// session returns the live session id r carries, or "".
func (s *Site) session(r *http.Request) string {
	c, err := r.Cookie("sid")
	if err != nil {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.live[c.Value] == r.Host {
		return c.Value
	}
	return ""
}

func (s *Site) record(r *http.Request, body string) {
	loggedIn := s.session(r) != ""
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, SiteRequest{
		Host: r.Host, Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery,
		Cookie: strings.Join(r.Header.Values("Cookie"), "; "), Authorization: r.Header.Get("Authorization"),
		Body: body, LoggedIn: loggedIn,
	})
}

// secretPages serves the Site.
func (p *Pages) secretPages(mux *http.ServeMux) {
	s := &p.site
	page := func(w http.ResponseWriter, status int, title, body string) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(status)
		fmt.Fprintf(w, "<!doctype html><title>%s</title>\n%s", html.EscapeString(title), body)
	}
	// read records r with its body and parses its form from that body.
	read := func(r *http.Request) {
		b, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		s.record(r, string(b))
		r.Body = io.NopCloser(strings.NewReader(string(b)))
		r.ParseForm()
	}
	setSession := func(w http.ResponseWriter, r *http.Request) {
		v := s.newValue(r.Host, true)
		w.Header().Add("Set-Cookie", "sid="+v+"; Path=/; HttpOnly; SameSite=Lax")
	}
	state := func(r *http.Request) string {
		if s.session(r) != "" {
			return "logged in"
		}
		return "logged out"
	}
	mux.HandleFunc("/secure/login.html", func(w http.ResponseWriter, r *http.Request) {
		read(r)
		frame := ""
		if o := r.URL.Query().Get("other"); o != "" {
			frame = `<iframe id="f" src="` + html.EscapeString(o) + `/secure/iframe.html" width="400" height="150"></iframe>`
		}
		page(w, 200, "Log in", `<form id="login" method="post" action="/secure/login">
<input id="user" name="user" value="person" autocomplete="off">
<input id="password" name="password" type="password" autocomplete="off">
<button id="submit" type="submit">Log in</button>
</form>
`+frame)
	})
	mux.HandleFunc("/secure/login", func(w http.ResponseWriter, r *http.Request) {
		read(r)
		s.mu.Lock()
		ok := s.password != "" && r.PostForm.Get("password") == s.password
		s.mu.Unlock()
		if r.Method != http.MethodPost || !ok {
			page(w, 403, "Not logged in", `<p id="state">wrong password</p>`)
			return
		}
		setSession(w, r)
		page(w, 200, "Logged in", `<p id="state">logged in</p>`)
	})
	mux.HandleFunc("/secure/home", func(w http.ResponseWriter, r *http.Request) {
		read(r)
		page(w, 200, "Home", `<p id="state">`+state(r)+`</p>`)
	})
	mux.HandleFunc("/secure/api", func(w http.ResponseWriter, r *http.Request) {
		read(r)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		fmt.Fprintf(w, `{"loggedIn":%v}`, s.session(r) != "")
	})
	mux.HandleFunc("/secure/rotate", func(w http.ResponseWriter, r *http.Request) {
		read(r)
		old := s.session(r)
		if old == "" {
			page(w, 403, "Rotate", `<p id="state">logged out</p>`)
			return
		}
		s.mu.Lock()
		delete(s.live, old)
		s.mu.Unlock()
		setSession(w, r)
		page(w, 200, "Rotate", `<p id="state">rotated</p>`)
	})
	up := websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}
	mux.HandleFunc("/secure/ws", func(w http.ResponseWriter, r *http.Request) {
		read(r)
		st := state(r)
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer c.Close()
		c.WriteMessage(websocket.TextMessage, []byte(st))
		c.ReadMessage() // until the page closes it
	})
	mux.HandleFunc("/secure/echo", func(w http.ResponseWriter, r *http.Request) {
		read(r)
		page(w, 200, "Echo", `<p id="echo">`+html.EscapeString(r.Form.Get("password"))+`</p>`)
	})
	mux.HandleFunc("/secure/sink", func(w http.ResponseWriter, r *http.Request) {
		read(r)
		w.Header().Set("Access-Control-Allow-Origin", "*")
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("/secure/iframe.html", func(w http.ResponseWriter, r *http.Request) {
		read(r)
		v := s.newValue(r.Host, false)
		w.Header().Add("Set-Cookie", "fsid="+v+"; Path=/; HttpOnly; SameSite=None; Secure; Partitioned")
		page(w, 200, "Frame", `<p id="where">frame at `+html.EscapeString(r.Host)+`</p>
<input id="inner" autocomplete="off">
<script>
document.getElementById('inner').addEventListener('input', (e) => {
  navigator.sendBeacon('/secure/sink', e.target.value);
});
</script>`)
	})
	mux.HandleFunc("/basic/", func(w http.ResponseWriter, r *http.Request) {
		read(r)
		u, pw, ok := r.BasicAuth()
		s.mu.Lock()
		good := ok && s.user != "" && u == s.user && pw == s.pass
		s.mu.Unlock()
		if !good {
			w.Header().Set("WWW-Authenticate", `Basic realm="cdprelay test"`)
			page(w, 401, "Who are you", `<p id="state">unauthorized</p>`)
			return
		}
		page(w, 200, "Basic", `<p id="state">basic ok</p>`)
	})
}

// BasicHeader is the Authorization header value of a Basic pair.
func BasicHeader(user, pass string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
}
