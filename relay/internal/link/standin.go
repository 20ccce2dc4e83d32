package link

// A peer without a socket, in tests and benchmarks: what stands in for
// its writer.

// Outgoing is the queue itself, for a stand-in writer where no WriteLoop
// runs (tests and benchmarks without a socket). Whoever receives a message
// owns it and returns it with PutBuf; the queue's counts are not updated.
// Nothing may receive from it while WriteLoop runs.
func (p *Peer) Outgoing() <-chan *[]byte { return p.out }

// Discard drops what is queued, as it is queued, until stop is closed:
// the writer of a peer that has no socket (a benchmark's). What it takes
// leaves the byte budget, as what WriteLoop writes does, so that senders
// never wait for room.
func (p *Peer) Discard(stop <-chan struct{}) {
	for {
		select {
		case b := <-p.out:
			p.dequeued(b)
			PutBuf(b)
		case <-stop:
			return
		}
	}
}
