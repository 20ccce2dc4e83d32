// Package web is the live-view page, embedded in the binary: plain HTML,
// CSS and JavaScript served as they are, with no build step. The page
// speaks the viewer protocol of package viewer (viewer/PROTOCOL.md) over
// the WebSocket at /viewer of the origin that served it.
package web
