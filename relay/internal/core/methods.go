package core

import (
	"strings"
	"sync"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/cdprelay/cdprelay/relay/internal/access"
	"github.com/cdprelay/cdprelay/relay/internal/replay"

	"github.com/cdprelay/cdprelay/relay/internal/cdp"
)

// The method table: what the relay knows of each CDP method, found with
// one map lookup per command and without an allocation. Every command the
// relay's cdproto knows is in it; a method of a newer Chrome gets an entry
// the first time it is seen (up to maxInterned of them), so that the
// policy, the records and the metrics get its name as a string without an
// allocation per message.

// MethodInfo is one method. Static after init.
type MethodInfo struct {
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
	// enable/disable: X.enable or X.disable, whose switch is watched on a
	// tab's top-level sessions (sessions.go).
	Enable, Disable bool
	// Replay says how a command of a tab's top-level session is kept for a
	// resume (relay/internal/replay).
	Replay replay.Kind
	// opens: the command can make the page open a tab (input, script):
	// a tab opened from its tab soon after is the automation's (ext/popups.go).
	opens bool
	// unique: stages read fields of these params where they lie (an input
	// event's type, a storage key in a nested object), so params that give
	// any key twice, at any depth, are refused before they are judged.
	Unique bool
	// unknown: not in the protocol the relay was built with (a newer
	// Chrome's), so what it does is not known (tiers/settings.go).
	Unknown bool
	// brake: the forward stage hands the command to the brake (person's brake.go).
	Brake bool
	// Reads: the method only reads the page, or switches its events on or
	// off (the tiers' read-only table); Pixels: it gives the page's pixels
	// (tiers.Pixels). Facts of the protocol more than of a stage, which
	// the stages read here rather than of each other.
	Reads, Pixels bool
	// Ctx is what the params name of execution contexts (the tiers' contexts.go);
	// nil for the methods that name none.
	Ctx *cdp.CtxSpec
	// plan: bit i is set when row i of the commands table wants the
	// method (order.go).
	Plan uint64
	// replyPlan: the same for the replies table.
	ReplyPlan uint64
	// outcome: the stages that watch the method's outcome
	// (AddOutcomeHooks), set with the plans.
	outcome []OutcomeHook
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

var (
	// MethodTable is built as a variable, not in init, so that the
	// variables below that look a method up (methodFetchEnable, ...) find
	// the table's own entry: initialised before them, since they use it.
	MethodTable = buildMethodTable()
	methodNames = struct {
		mu sync.RWMutex
		m  map[string]*MethodInfo
	}{m: make(map[string]*MethodInfo)}
)

const maxInterned = 4096

func newMethodInfo(name string) *MethodInfo {
	m := &MethodInfo{Name: name, NameBytes: []byte(name), Domain: cdp.DomainOf([]byte(name))}
	m.Enable = strings.HasSuffix(name, ".enable")
	m.Disable = strings.HasSuffix(name, ".disable")
	m.UrlKey = cdp.UrlMethods[name]
	m.Decode = cdp.DecodedMethods[name]
	m.Replay = replay.KindOf(name)
	for _, d := range uniqueDomains {
		m.Unique = m.Unique || strings.HasPrefix(name, d)
	}
	m.opens = strings.HasPrefix(name, "Input.") || opensTabs[name]
	m.Brake = brakeMethods[name]
	m.Ctx = cdp.CtxSpecs[name]
	m.Reads = access.ReadOnlyListed(name) == access.ROAllow
	m.Pixels = access.Pixels(name)
	return m
}

func buildMethodTable() map[string]*MethodInfo {
	t := map[string]*MethodInfo{}
	for _, name := range cdp.Commands() {
		t[name] = newMethodInfo(name)
	}
	// The relay's own, and any it decodes that cdproto may lack.
	for name := range cdp.DecodedMethods {
		if t[name] == nil {
			t[name] = newMethodInfo(name)
		}
	}
	for name := range cdp.UrlMethods {
		if t[name] == nil {
			t[name] = newMethodInfo(name)
		}
	}
	return t
}

// LookupMethod returns the entry of method, creating one for a method the
// table lacks.
func LookupMethod(method []byte) *MethodInfo {
	if m := MethodTable[string(method)]; m != nil {
		return m
	}
	methodNames.mu.RLock()
	m := methodNames.m[string(method)]
	methodNames.mu.RUnlock()
	if m != nil {
		return m
	}
	m = newMethodInfo(string(method))
	m.Unknown = true
	setPlan(m)
	methodNames.mu.Lock()
	if len(methodNames.m) < maxInterned {
		methodNames.m[m.Name] = m
	}
	methodNames.mu.Unlock()
	return m
}

// Methods the relay looks out for by identity.
var (
	MethodFetchEnable   = LookupMethod([]byte("Fetch.enable"))
	MethodGetProperties = LookupMethod([]byte("Runtime.getProperties"))
)

// eventInfo is one event name, interned as methods are: its plan says
// which rows of the events table want it (order.go). Static after it is
// made.
type eventInfo struct {
	name   string
	domain int // index in cdp.Domains, for the metrics
	Plan   uint64
}

func newEventInfo(name string) *eventInfo {
	return &eventInfo{name: name, domain: cdp.DomainOf([]byte(name))}
}

var (
	eventTable = buildEventTable()
	eventNames = struct {
		mu sync.RWMutex
		m  map[string]*eventInfo
	}{m: make(map[string]*eventInfo)}
)

func buildEventTable() map[string]*eventInfo {
	t := map[string]*eventInfo{}
	for _, name := range cdp.Events() {
		t[name] = newEventInfo(name)
	}
	return t
}

// LookupEvent returns the entry of an event name, creating one for a name
// the table lacks (up to maxInterned of them are kept).
func LookupEvent(method []byte) *eventInfo {
	if e := eventTable[string(method)]; e != nil {
		return e
	}
	eventNames.mu.RLock()
	e := eventNames.m[string(method)]
	eventNames.mu.RUnlock()
	if e != nil {
		return e
	}
	e = newEventInfo(string(method))
	setEventPlan(e)
	eventNames.mu.Lock()
	if len(eventNames.m) < maxInterned {
		eventNames.m[e.name] = e
	}
	eventNames.mu.Unlock()
	return e
}

// brakeMethods are the commands the forward stage hands to the brake
// (brakeCommand): MethodInfo.Brake.
var brakeMethods = map[string]bool{
	"Runtime.evaluate": true, "Runtime.callFunctionOn": true, "Runtime.runScript": true, "Runtime.awaitPromise": true,
	"Debugger.enable": true, "Debugger.disable": true, "Debugger.setSkipAllPauses": true,
	"Page.setWebLifecycleState": true,
}

// ArgsOf decodes the params of m into a. Nothing is read for a method
// whose params the relay does not judge.
func ArgsOf(m *MethodInfo, params []byte, a *cdp.Args) error {
	if m.Unique && params != nil && !jsontext.Value(params).IsValid(jsontext.AllowInvalidUTF8(true)) {
		// The frame is valid JSON (the envelope codec checked it): what is
		// left is a name given twice in one object.
		return &cdp.ParamsError{Msg: "Invalid parameters: params carry a key twice"}
	}
	if m.UrlKey != "" {
		u, found, err := ExactString(params, m.UrlKey)
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

// Params are read as Chrome reads them (cdp/params.go), by the short names
// the relay's many callers use. Functions rather than variables, so that
// they inline and the compiler still sees what escapes on the per-message
// path.

func DecodeStruct(params []byte, v any) error { return cdp.DecodeStruct(params, v) }

func ExactString(params []byte, key string) (val string, found bool, err error) {
	return cdp.ExactString(params, key)
}
