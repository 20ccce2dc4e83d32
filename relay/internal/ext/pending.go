package ext

import "github.com/cdprelay/cdprelay/relay/internal/core"

// The calls pending on the extension connection: each command sent to the
// extension is registered under an id of its own until its reply, or its
// failure, takes it. A client's command counts in its client's Inflight
// while it is here.

// Register records pc under a fresh id, as a command sent upstream does
// before its frame is queued, saying why not when the connection does not
// take it.
func (x *Conn) Register(pc core.PendingCall) (int64, error) { return x.registerCall(pc) }

// register records pc under a fresh id. It reports false once the
// connection has ended. Every call to the extension goes through register
// and then push.
func (x *Conn) register(pc core.PendingCall) (int64, bool) {
	id, err := x.registerCall(pc)
	return id, err == nil
}

// registerCall is register, saying why not. A client's command is not
// taken while a person has stopped the automation: Stop sets the flag
// before it fails the pending calls under x.mu, so a command the
// pipeline let through just before a Stop is either failed by it or
// refused here.
func (x *Conn) registerCall(pc core.PendingCall) (int64, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.gone {
		return 0, core.ErrSendGone
	}
	if pc.Kind == core.CallClient && x.Inst.IsStopped.Load() {
		return 0, core.ErrSendStopped
	}
	x.nextID++
	x.pending[x.nextID] = pc
	if pc.Kind == core.CallClient {
		pc.Client.Inflight.Add(1)
	}
	return x.nextID, nil
}

// Forget drops the call waiting for id. It reports false when the call was
// no longer pending: its result has been or is being delivered.
func (x *Conn) Forget(id int64) bool {
	var pc core.PendingCall
	ok := x.takePendingInto(id, &pc)
	if ok && pc.Kind == core.CallClient {
		pc.Client.Inflight.Add(-1)
	}
	return ok
}

// takePendingInto removes the call waiting for id into *pc, which it
// leaves alone when no call waits for id.
func (x *Conn) takePendingInto(id int64, pc *core.PendingCall) bool {
	x.mu.Lock()
	v, ok := x.pending[id]
	if ok {
		*pc = v
		delete(x.pending, id)
	}
	x.mu.Unlock()
	return ok
}

// Pending calls each with the client commands pending, under x.mu, until
// it returns false.
func (x *Conn) Pending(each func(core.PendingCall) bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, pc := range x.pending {
		if pc.Kind == core.CallClient && !each(pc) {
			return
		}
	}
}

// TakeWhere removes the client commands pending that match, and returns
// them in the order they were sent.
func (x *Conn) TakeWhere(match func(core.PendingCall) bool) []core.PendingCall {
	var ids []int64
	x.mu.Lock()
	for id, pc := range x.pending {
		if pc.Kind == core.CallClient && match(pc) {
			ids = append(ids, id)
		}
	}
	taken := core.SortByID(ids, x.pending)
	for _, id := range ids {
		delete(x.pending, id)
	}
	x.mu.Unlock()
	for _, pc := range taken {
		pc.Client.Inflight.Add(-1)
	}
	return taken
}

// End marks the connection gone and ends everything pending: the relay's
// own calls here, the client's commands by returning them.
func (x *Conn) End() []core.PendingCall {
	x.mu.Lock()
	x.gone = true
	x.over.Store(true)
	pending := x.pending
	x.pending = map[int64]core.PendingCall{}
	x.mu.Unlock()
	var clients []core.PendingCall
	for _, pc := range pending {
		switch pc.Kind {
		case core.CallFire:
			if pc.Then != nil {
				pc.Then(nil)
			}
		case core.CallRelay:
			pc.Done <- core.CallResult{Err: core.ErrExtGone}
		case core.CallClient:
			pc.Client.Inflight.Add(-1)
			clients = append(clients, pc)
		}
	}
	return clients
}

// LastID is the id of the last call registered.
func (x *Conn) LastID() int64 {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.nextID
}
