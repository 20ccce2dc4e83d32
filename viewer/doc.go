// Package viewer is the live view's server side: the viewer WebSocket
// protocol (PROTOCOL.md in this folder), one screencast tap per watched
// tab, the input allow-list, and human take-over.
//
// What a viewer may do to a tab is decided in two places. Map is a pure
// function from an Input to the one CDP method it stands for, out of a
// closed list (Methods): nothing a viewer sends can reach Runtime.* or
// any other domain. Before Map, the connection checks that the viewer is
// interactive and holds control of the tab, and a navigation passes the
// URL fence. Interactive means the person in charge, which only the
// relay's Config.Interactive grants (for the person's credential): a
// viewer is view-only by default, wherever it connects from. Taking control goes through the relay, which then refuses the
// CDP client's input and navigation on that tab until the viewer hands it
// back or disconnects.
//
// A viewer's frames come through its screencast subscriber, whose slot
// keeps only the newest frame: a slow viewer loses frames, and never slows
// the tab, the CDP client or other viewers. Everything else a viewer is
// sent goes through a bounded queue that is never dropped from; a viewer
// that lets it fill is closed.
package viewer
