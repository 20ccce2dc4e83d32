package main

import (
	"net"
	"net/http"
	"time"
)

// soakPage is the page every tab of the soak shows: a button whose clicks
// the page counts (so that a click delivered twice shows), and, with
// ?anim in its URL, an animation that keeps the live view's frames coming.
const soakPage = `<!doctype html>
<html><head><meta charset="utf-8"><title>soak</title>
<style>
#spin{width:60px;height:60px;margin:20px;background:#2a6fdb}
.anim #spin{animation:turn 2s linear infinite}
@keyframes turn{to{transform:rotate(360deg)}}
</style></head>
<body>
<div id="spin"></div>
<button id="inc" onclick="window.__clicks=(window.__clicks||0)+1">+1</button>
<script>if (location.search.includes('anim')) document.body.className = 'anim';</script>
</body></html>`

// servePages serves the soak page on a loopback port and returns its URL.
func servePages() (url string, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/soak.html", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.Write([]byte(soakPage))
	})
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(ln)
	return "http://" + ln.Addr().String() + "/soak.html", func() { hs.Close() }, nil
}
