// Package screencast taps a tab's screencast for the live view.
//
// One Tap serves one (instance, tab) while at least one viewer watches it.
// The tap starts Page.startScreencast on the tab's own session, acks every
// frame itself and spaces the acks to hold a maximum frame rate: Chrome
// sends a new frame only when fewer than three are unacknowledged, so the
// ack timing is the throttle, and nothing else is needed to pace the
// stream. Each frame is decoded once and handed to every Subscriber
// through a one-frame slot where the newest frame wins: a subscriber that
// does not keep up loses frames, and nobody else notices. Frames of a
// screencast the CDP client runs itself are shown too, but the client
// acks those.
//
// The package knows nothing of the relay: a tab is a Session (anything
// with Call) plus the events its owner passes to HandleEvent.
package screencast
