package methods

import "github.com/cdprelay/cdprelay/relay/internal/cdp"

// Event is one event name, interned as methods are: its plan says which
// rows of the core's events table want it. Static once planned.
type Event struct {
	Name   string
	Domain int // index in cdp.Domains, for the metrics
	Plan   uint64
}

func newEvent(name string) *Event {
	return &Event{Name: name, Domain: cdp.DomainOf([]byte(name))}
}

var (
	eventTable = buildEventTable()
	newEvents  interned[Event]
)

func buildEventTable() map[string]*Event {
	t := map[string]*Event{}
	for _, name := range cdp.Events() {
		t[name] = newEvent(name)
	}
	return t
}

// LookupEvent returns the entry of an event name, making one for a name
// the table lacks.
func LookupEvent(method []byte) *Event {
	if e := eventTable[string(method)]; e != nil {
		return e
	}
	if e := newEvents.get(method); e != nil {
		return e
	}
	e := newEvent(string(method))
	planEvent(e)
	newEvents.put(e.Name, e)
	return e
}
