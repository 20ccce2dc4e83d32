package testenv

import (
	"io"
	"net/http"
)

// The pages the secret lock's tests type into, on every origin:
//
//   - /lock/mirror.html: a login form whose password field (#password) a
//     script mirrors, as it is typed, into attributes (#echo's data-echo
//     and title, a hidden input's value attribute), as some pages do; a
//     "show password" button (#show) that turns the field into a text
//     field and back, as many pages have; and a text field (#paste).
//   - /lock/legacy.html: a login form on a page in windows-1252, which a
//     browser posts in that charset (to /lock/posted, which says nothing
//     back).
func (p *Pages) lockPages(mux *http.ServeMux) {
	serve := func(w http.ResponseWriter, charset, body string) {
		w.Header().Set("Content-Type", "text/html; charset="+charset)
		w.Header().Set("Cache-Control", "no-store")
		io.WriteString(w, body)
	}
	mux.HandleFunc("/lock/mirror.html", func(w http.ResponseWriter, r *http.Request) {
		serve(w, "utf-8", `<!doctype html><title>Mirror</title>
<form id="login" method="post" action="/lock/posted">
<input id="user" name="user" value="person" autocomplete="off">
<input id="password" name="password" type="password" autocomplete="off" style="font: 16px monospace; width: 30em">
<button id="show" type="button" style="width: 8em; height: 2em">show</button>
<input id="paste" autocomplete="off">
</form>
<div id="echo" data-echo="" title=""></div>
<input id="copy" type="hidden" value="">
<script>
const pw = document.getElementById('password');
pw.addEventListener('input', () => {
  const echo = document.getElementById('echo');
  echo.setAttribute('data-echo', pw.value);
  echo.setAttribute('title', 'typed: ' + pw.value);
  document.getElementById('copy').setAttribute('value', pw.value);
});
document.getElementById('show').addEventListener('click', () => {
  pw.type = pw.type === 'password' ? 'text' : 'password';
});
</script>`)
	})
	mux.HandleFunc("/lock/legacy.html", func(w http.ResponseWriter, r *http.Request) {
		// windows-1252 bytes: "Anmeldung für Gäste".
		serve(w, "windows-1252", "<!doctype html><title>Anmeldung f\xfcr G\xe4ste</title>\n"+
			`<form id="login" method="post" action="/lock/posted">
<input id="user" name="user" value="person" autocomplete="off">
<input id="password" name="password" type="password" autocomplete="off">
<button id="submit" type="submit">Anmelden</button>
</form>`)
	})
	mux.HandleFunc("/lock/posted", func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, io.LimitReader(r.Body, 1<<20))
		serve(w, "utf-8", `<!doctype html><title>Posted</title><p id="state">posted</p>`)
	})
}
