package testenv

import (
	"fmt"
	"net/http"
	"strings"
)

// personPages are the pages of the person-in-charge tests: a shop whose
// order form asks before it is sent, a page that asks a question, and a
// page of the person's own (a counter, a button, a script) that an
// automation is stopped in, with the beacon its requests go to.
func (p *Pages) personPages(mux *http.ServeMux) {
	html := func(w http.ResponseWriter, body string) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, body)
	}
	mux.HandleFunc("/shop.html", func(w http.ResponseWriter, r *http.Request) {
		html(w, `<!doctype html><title>Checkout</title>
<h1>Your basket</h1><p>One book, 12.00</p>
<form action="/ordered.html" method="post">
<input type="hidden" name="item" value="book">
<button id="buy" type="submit" style="font-size:20px;padding:8px 20px">Place order</button>
</form>
<p><a id="help" href="#help">Help</a></p>`)
	})
	mux.HandleFunc("/ordered.html", func(w http.ResponseWriter, r *http.Request) {
		html(w, `<!doctype html><title>Ordered</title><h1 id="done">Order placed</h1>`)
	})
	mux.HandleFunc("/confirm.html", func(w http.ResponseWriter, r *http.Request) {
		html(w, `<!doctype html><title>Draft</title>
<h1>Draft</h1><p id="out">not answered</p>
<script>
function ask() {
  setTimeout(() => { document.getElementById('out').textContent = confirm('Delete the draft?') ? 'deleted' : 'kept'; }, 0);
}
</script>`)
	})
	mux.HandleFunc("/stop.html", func(w http.ResponseWriter, r *http.Request) {
		html(w, `<!doctype html><title>The person's page</title>
<button id="b" onclick="pressed()" style="position:fixed;left:0;top:0;width:120px;height:80px">Press</button>
<p id="out" style="margin-top:100px">not pressed</p>
<script>
window.ticks = 0;
setInterval(() => { window.ticks++; }, 20);
window.presses = 0;
function pressed() {
  window.presses++;
  document.getElementById('out').textContent = 'pressed ' + window.presses;
}
</script>`)
	})
	// A checkout whose layout, elements, frames and focus can change
	// between an approval card and the approval: the order form posts to
	// the beacon under ?order=, so that a test sees whether it was sent.
	mux.HandleFunc("/approve.html", func(w http.ResponseWriter, r *http.Request) {
		order := strings.ReplaceAll(r.URL.Query().Get("order"), `"`, "")
		html(w, `<!doctype html><title>Checkout</title>
<style>body{margin:0;height:4000px} button{position:absolute;width:200px;height:60px;font-size:18px;margin:0}
#cancel{left:20px;top:20px} #buy{left:20px;top:120px} #confirm{left:20px;top:2020px} input{position:absolute;left:20px;width:200px}
#search{top:220px} #qty{top:260px}</style>
<form id="searchform" onsubmit="event.preventDefault(); document.title = 'searched'"><input id="search" name="q" placeholder="Search"></form>
<form id="order" action="/beacon/`+order+`" method="post"><input id="qty" name="qty" placeholder="Search">
<button id="buy" type="submit">Place order</button><button id="confirm" type="submit">Cancel</button></form>
<button id="cancel" onclick="document.title = 'cancelled'">Cancel</button>
<script>
function shift() { buy.style.top = '20px'; cancel.style.top = '120px'; }
function swap() {
  const b = document.createElement('button');
  b.textContent = 'Cancel'; b.style.cssText = 'left:20px;top:20px';
  b.onclick = () => order.requestSubmit();
  cancel.replaceWith(b);
}
function cover(src) {
  const f = document.createElement('iframe');
  f.src = src; f.style.cssText = 'position:fixed;left:0;top:0;width:400px;height:100px;border:0';
  document.body.append(f);
  return new Promise((r) => { f.onload = r; });
}
function scrollAway() { window.scrollTo(0, 2000); }
function focusOrder() { qty.focus(); }
</script>`)
	})
	// The beacon counts each request by its path (Hits), and once more,
	// under path+"+planted", a request that carries an X-Planted header.
	mux.HandleFunc("/beacon/", func(w http.ResponseWriter, r *http.Request) {
		p.hits.add(r)
		if r.Header.Get("X-Planted") != "" {
			p.hits.addPath(r.Host + r.URL.Path + "+planted")
		}
		w.Header().Set("Access-Control-Allow-Origin", "*")
		fmt.Fprint(w, "ok")
	})
}
