package core

// Slots: where a stage keeps state of its own in the core's structures,
// without the core knowing its type. A stage makes its slot once, when its
// package is initialised (before any instance exists), with the type of
// what it keeps (no slot is made once the order is set, so none after an
// instance exists); the core makes one zero value of that type for each
// client (ClientSlot) or each instance's state (StateSlot) when it makes
// the structure, and the stage finds it again with Of. What guards it is
// the stage's to say: a StateSlot's value is the state's, under the
// instance's mutex, like everything else in State.

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

var clientSlots, stateSlots slotKind

// ClientSlot is a stage's place in each client connection.
type ClientSlot[T any] struct{ i int }

// NewClientSlot makes a stage's place in each client connection: a *T,
// zero when the client connects.
func NewClientSlot[T any]() ClientSlot[T] {
	return ClientSlot[T]{clientSlots.add(func() any { return new(T) })}
}

// Of is the stage's value for c.
func (s ClientSlot[T]) Of(c *ClientConn) *T { return c.slots[s.i].(*T) }

// StateSlot is a stage's place in each instance's state, guarded by the
// instance's mutex.
type StateSlot[T any] struct{ i int }

// NewStateSlot makes a stage's place in each instance's state: a *T, zero
// when the instance is made.
func NewStateSlot[T any]() StateSlot[T] {
	return StateSlot[T]{stateSlots.add(func() any { return new(T) })}
}

// Of is the stage's value in st (the lock is held: st is had only so).
func (s StateSlot[T]) Of(st *State) *T { return st.slots[s.i].(*T) }
