// Package link is the socket layer of the relay's connections: a Peer is
// one WebSocket with a single writer goroutine fed by a bounded queue (a
// message count and a byte budget), which corks bursts into one write to
// the socket (CorkConn) and writes what is queued together as one batch
// frame to a peer that takes them. It owns the pool of outgoing buffers
// (GetBuf, PutBuf), reading one bounded message (ReadFrame), the close for
// a message too big (CloseTooBig), the rate a peer may send at (Rate) and
// the words for why a connection ended (CloseReasonOf). ExtReader is the read loop of an extension
// protocol connection: frames, the read deadline and batch frames, each
// message handed on to its owner.
//
// Ownership: the owner of a Peer (a client or extension connection of the
// relay) is the only reader of its socket; WriteLoop is the only writer
// and closes the socket once Shutdown is called; any goroutine may queue
// (Send, TrySend) and Shutdown. A buffer handed to Send or TrySend belongs
// to the Peer from then on.
//
// link knows nothing of CDP, instances or policy: it must not import
// github.com/cdprelay/cdprelay/relay or any other package under
// relay/internal; it may use internal/wire and internal/wslimit.
package link
