// Package relaybench measures a command's round trip through a relay over
// real loopback WebSockets, against an extension peer that answers at once
// (fakeext.Quick). The figure includes both peers' own socket work, so it
// is the relay's cost as a client sees it with the browser taken out: the
// part of a round trip that the relay's code can change.
package relaybench
