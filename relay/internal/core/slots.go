package core

// Slots: where a stage keeps state of its own in the core's structures,
// without the core knowing its type. A stage makes its slot once, when its
// package is initialised (before any instance exists), with the type of
// what it keeps (no slot is made once the order is set, so none after an
// instance exists); the core makes one zero value of that type for each
// client (ClientSlot), each instance's state (StateSlot), each tab
// (TabSlot), each instance (InstanceSlot) or the relay (RelaySlot) when it
// makes the structure,
// and the stage finds it again with Of. What guards it: a StateSlot's and
// a TabSlot's value are the state's, under the instance's mutex, like
// everything else in State and Tab; a ClientSlot's is guarded by the
// instance's mutex too, unless the stage says otherwise; an InstanceSlot's
// and a RelaySlot's are read without a lock (their fields guard
// themselves).

// slotKind is the list of one kind of slot: what each stage keeps, made
// anew for each structure of that kind.
type slotKind struct {
	news []func() any // static once the order is set (SetOrder)
}

func (k *slotKind) add(news func() any) int {
	if CommandStages != nil {
		panic("core: a slot made after the order was set: make it in a package variable")
	}
	k.news = append(k.news, news)
	return len(k.news) - 1
}

func (k *slotKind) make() []any {
	if len(k.news) == 0 {
		return nil
	}
	out := make([]any, len(k.news))
	for i, n := range k.news {
		out[i] = n()
	}
	return out
}

var clientSlots, stateSlots, tabSlots, instanceSlots, relaySlots slotKind

// ClientSlot is a stage's place in each client connection.
type ClientSlot[T any] struct{ i int }

// NewClientSlot makes a stage's place in each client connection: a *T,
// zero when the client connects.
func NewClientSlot[T any]() ClientSlot[T] {
	return ClientSlot[T]{clientSlots.add(func() any { return new(T) })}
}

// Of is the stage's value for c. A client made without NewClientConn (a
// test's) gets its slots on first use.
func (s ClientSlot[T]) Of(c *ClientConn) *T {
	if c.slots == nil {
		c.slots = clientSlots.make()
	}
	return c.slots[s.i].(*T)
}

// StateSlot is a stage's place in each instance's state, guarded by the
// instance's mutex.
type StateSlot[T any] struct{ i int }

// NewStateSlot makes a stage's place in each instance's state: a *T, zero
// when the instance is made.
func NewStateSlot[T any]() StateSlot[T] {
	return StateSlot[T]{stateSlots.add(func() any { return new(T) })}
}

// Of is the stage's value in st (the lock is held: st is had only so). A
// state made without newState (a test's) gets its slots on first use.
func (s StateSlot[T]) Of(st *State) *T {
	if st.slots == nil {
		st.slots = stateSlots.make()
	}
	return st.slots[s.i].(*T)
}

// TabSlot is a stage's place in each tab, guarded by the instance's mutex.
type TabSlot[T any] struct{ i int }

// NewTabSlot makes a stage's place in each tab: a *T, zero when the tab is
// offered.
func NewTabSlot[T any]() TabSlot[T] {
	return TabSlot[T]{tabSlots.add(func() any { return new(T) })}
}

// Of is the stage's value for t (the lock is held). A tab the core makes
// has its slots from the start, so what a stage keeps there that guards
// itself (an atomic) may be read without the lock; a tab made elsewhere (a
// test's) gets its slots on first use.
func (s TabSlot[T]) Of(t *Tab) *T {
	if t.slots == nil {
		t.slots = tabSlots.make()
	}
	return t.slots[s.i].(*T)
}

// InstanceSlot is a stage's place in each instance, made with it and read
// without the lock: what the stage keeps there guards itself.
type InstanceSlot[T any] struct{ i int }

// NewInstanceSlot makes a stage's place in each instance: a *T, zero when
// the instance is made.
func NewInstanceSlot[T any]() InstanceSlot[T] {
	return InstanceSlot[T]{instanceSlots.add(func() any { return new(T) })}
}

// Of is the stage's value for in.
func (s InstanceSlot[T]) Of(in *Instance) *T { return in.slots[s.i].(*T) }

// RelaySlot is a stage's place in the relay, shared by every instance and
// read without a lock: what the stage keeps there guards itself.
type RelaySlot[T any] struct{ i int }

// NewRelaySlot makes a stage's place in the relay: a *T, zero when the
// relay is made (NewRelay).
func NewRelaySlot[T any]() RelaySlot[T] {
	return RelaySlot[T]{relaySlots.add(func() any { return new(T) })}
}

// Of is the stage's value for s.
func (r RelaySlot[T]) Of(s *Relay) *T { return s.slots[r.i].(*T) }
