// Package methods is the relay's table of CDP methods and events: what it
// knows of each, found with one map lookup per message and without an
// allocation. Every command and event the relay's cdproto knows is in it;
// a name of a newer Chrome gets an entry the first time it is seen (up to
// maxInterned of each), so that the policy, the records and the metrics
// get its name as a string without an allocation per message.
//
// The entries are facts of the protocol; which stages of the relay's order
// want a method (its plans) is the core's, which sets them on each entry
// (SetPlanners) before any message is read.
package methods

import (
	"strings"
	"sync"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/cdprelay/cdprelay/relay/internal/access"
	"github.com/cdprelay/cdprelay/relay/internal/cdp"
	"github.com/cdprelay/cdprelay/relay/internal/replay"
)

// Info is one method. Static once planned.
type Info struct {
	Name string
	// NameBytes is Name, for sending a command as this method (a stage's
	// rewrite, an emulation's forward) without a copy per command.
	NameBytes []byte
	Domain    int // index in cdp.Domains
	// UrlKey names the params field whose URL the fence judges; "" when
	// the method carries none.
	UrlKey string
	// Decode reads the params that a stage judges or the emulation acts
	// on (cdp/args.go); nil: none are read.
	Decode func(params []byte, a *cdp.Args) error
	// Enable, Disable: X.enable or X.disable, whose switch is watched on
	// a tab's top-level sessions (the core's sessions.go).
	Enable, Disable bool
	// Replay says how a command of a tab's top-level session is kept for a
	// resume (relay/internal/replay).
	Replay replay.Kind
	// Opens: the command can make the page open a tab (input, script):
	// a tab opened from its tab soon after is the automation's (ext/popups.go).
	Opens bool
	// Unique: stages read fields of these params where they lie (an input
	// event's type, a storage key in a nested object), so params that give
	// any key twice, at any depth, are refused before they are judged.
	Unique bool
	// Unknown: not in the protocol the relay was built with (a newer
	// Chrome's), so what it does is not known (tiers/settings.go).
	Unknown bool
	// Brake: the forward stage hands the command to the brake (person's brake.go).
	Brake bool
	// Reads: the method only reads the page, or switches its events on or
	// off (the tiers' read-only table); Pixels: it gives the page's pixels
	// (tiers.Pixels). Facts of the protocol more than of a stage, which
	// the stages read here rather than of each other.
	Reads, Pixels bool
	// Ctx is what the params name of execution contexts (the tiers'
	// contexts.go); nil for the methods that name none.
	Ctx *cdp.CtxSpec
	// Plan: bit i is set when row i of the core's commands table wants
	// the method; ReplyPlan: the same for the replies table; Outcome: a
	// stage watches the method's outcome. Set by the core's planner.
	Plan, ReplyPlan uint64
	Outcome         bool
}

// opensTabs are the commands besides Input.* whose effect can open a tab:
// they run script in the page.
var opensTabs = map[string]bool{
	"Runtime.evaluate":             true,
	"Runtime.callFunctionOn":       true,
	"Runtime.runScript":            true,
	"Debugger.evaluateOnCallFrame": true,
	"CDPRelay.fillSecret":          true, // types, and a form may submit on input
	// Script that was waiting goes on: a dialog answered, a pause resumed.
	"Page.handleJavaScriptDialog": true,
	"Debugger.resume":             true,
}

// uniqueDomains are the domains whose commands' params are read field by
// field: the approval stage's input events, the tiers' storage keys.
var uniqueDomains = []string{"Input.", "Storage.", "IndexedDB.", "CacheStorage.", "DOMStorage."}

// brakeMethods are the commands the forward stage hands to the brake
// (Info.Brake).
var brakeMethods = map[string]bool{
	"Runtime.evaluate": true, "Runtime.callFunctionOn": true, "Runtime.runScript": true, "Runtime.awaitPromise": true,
	"Debugger.enable": true, "Debugger.disable": true, "Debugger.setSkipAllPauses": true,
	"Page.setWebLifecycleState": true,
}

// maxInterned bounds the names of a newer Chrome kept, of methods and of
// events each; past it, each gets an entry of its own per lookup.
const maxInterned = 4096

// interned is a table of the names met that the relay was not built with.
type interned[T any] struct {
	mu sync.RWMutex
	m  map[string]*T
}

func (n *interned[T]) get(name []byte) *T {
	n.mu.RLock()
	v := n.m[string(name)]
	n.mu.RUnlock()
	return v
}

func (n *interned[T]) put(name string, v *T) {
	n.mu.Lock()
	if n.m == nil {
		n.m = make(map[string]*T)
	}
	if len(n.m) < maxInterned {
		n.m[name] = v
	}
	n.mu.Unlock()
}

func (n *interned[T]) each(f func(*T)) {
	n.mu.Lock()
	for _, v := range n.m {
		f(v)
	}
	n.mu.Unlock()
}

var (
	// Table is built as a variable, not in init, so that the variables
	// below that look a method up (FetchEnable, ...) find the table's own
	// entry: initialised before them, since they use it.
	Table      = buildTable()
	newMethods interned[Info]
	// planMethod and planEvent are the core's planners (SetPlanners).
	planMethod = func(*Info) {}
	planEvent  = func(*Event) {}
)

func newInfo(name string) *Info {
	m := &Info{Name: name, NameBytes: []byte(name), Domain: cdp.DomainOf([]byte(name))}
	m.Enable = strings.HasSuffix(name, ".enable")
	m.Disable = strings.HasSuffix(name, ".disable")
	m.UrlKey = cdp.UrlMethods[name]
	m.Decode = cdp.DecodedMethods[name]
	m.Replay = replay.KindOf(name)
	for _, d := range uniqueDomains {
		m.Unique = m.Unique || strings.HasPrefix(name, d)
	}
	m.Opens = strings.HasPrefix(name, "Input.") || opensTabs[name]
	m.Brake = brakeMethods[name]
	m.Ctx = cdp.CtxSpecs[name]
	m.Reads = access.ReadOnlyListed(name) == access.ROAllow
	m.Pixels = access.Pixels(name)
	return m
}

func buildTable() map[string]*Info {
	t := map[string]*Info{}
	for _, name := range cdp.Commands() {
		t[name] = newInfo(name)
	}
	// The relay's own, and any it decodes that cdproto may lack.
	for name := range cdp.DecodedMethods {
		if t[name] == nil {
			t[name] = newInfo(name)
		}
	}
	for name := range cdp.UrlMethods {
		if t[name] == nil {
			t[name] = newInfo(name)
		}
	}
	return t
}

// Lookup returns the entry of method, making one for a method the table
// lacks.
func Lookup(method []byte) *Info {
	if m := Table[string(method)]; m != nil {
		return m
	}
	if m := newMethods.get(method); m != nil {
		return m
	}
	m := newInfo(string(method))
	m.Unknown = true
	planMethod(m)
	newMethods.put(m.Name, m)
	return m
}

// Methods the relay looks out for by identity.
var (
	FetchEnable   = Lookup([]byte("Fetch.enable"))
	GetProperties = Lookup([]byte("Runtime.getProperties"))
)

// SetPlanners makes the core's planners plan every method and event known
// so far, and those met later as they are. It is called once, as the
// order is set, before any message is read.
func SetPlanners(method func(*Info), event func(*Event)) {
	planMethod, planEvent = method, event
	for _, m := range Table {
		method(m)
	}
	newMethods.each(method)
	for _, e := range eventTable {
		event(e)
	}
	newEvents.each(event)
}

// ArgsOf decodes the params of m into a. Nothing is read for a method
// whose params the relay does not judge.
func ArgsOf(m *Info, params []byte, a *cdp.Args) error {
	if m.Unique && params != nil && !jsontext.Value(params).IsValid(jsontext.AllowInvalidUTF8(true)) {
		// The frame is valid JSON (the envelope codec checked it): what is
		// left is a name given twice in one object.
		return &cdp.ParamsError{Msg: "Invalid parameters: params carry a key twice"}
	}
	if m.UrlKey != "" {
		u, found, err := cdp.ExactString(params, m.UrlKey)
		if err != nil {
			return err
		}
		a.Url, a.HasURL = u, found
	}
	if m.Decode == nil {
		return nil
	}
	if err := m.Decode(params, a); err != nil {
		return cdp.InvalidParams(err)
	}
	return nil
}
