package core

import (
	"math/bits"
	"slices"
	"strings"

	"github.com/cdprelay/cdprelay/relay/internal/methods"
)

// The order: what the relay does with each message, top to bottom, in
// three tables, one per path, which the facade (package relay, order.go)
// writes and hands over once with SetOrder, before any instance exists.
// Each row is a stage: one function, named "concern.Name" (the concern
// that owns it, the step it takes). The core runs the rows; it knows none
// of them by name.
//
// A stage is called only for the methods it wants (its Wants, asked once
// per method when the method is interned: the method's plan, a bitset on
// the interned MethodInfo), so the per-message path calls nothing for a
// stage that does not care.

// CmdStage is one row of the commands table. Run reports whether the
// command goes on to the next row: false when the stage answered it,
// refused it or held it.
type CmdStage struct {
	Name string
	Run  func(c *ClientConn, k *Cmd) bool
	// Wants reports whether the stage is called for a method; nil: for
	// every one. Called once per method, when the method is interned.
	Wants func(m *MethodInfo) bool
	// Arrival: only when a command arrives, not when a held command is
	// judged again off its line.
	Arrival bool
	// Judges: the row judges (decide): it changes nothing of the tab. The
	// relay's own commands (a resume's replay) run these rows, and then
	// only the Replays rows.
	Judges bool
	// Replays: the row also acts on the relay's own commands, after the
	// judging rows passed them: it rewrites what a resume sends again as
	// it rewrites a client's command (the fence's Fetch.enable). It
	// prepares, never refuses: what it leaves in the command is sent. A
	// row is not both Judges and Replays.
	Replays bool
}

// EventStage is one row of the events table. Run runs with the instance
// lock held and reports whether the event goes on to the next row.
type EventStage struct {
	Name  string
	Run   func(in *Instance, e *EventMsg) bool
	Wants func(name string) bool // nil: every event
}

// ReplyStage is one row of the replies table. Run runs on the extension's
// read loop without the lock and reports whether the reply goes on to the
// next row: false when the row wrote what the client gets.
type ReplyStage struct {
	Name  string
	Run   func(in *Instance, r *Reply) bool
	Wants func(m *MethodInfo) bool // nil: every method
}

// The tables, set once by SetOrder.
var (
	CommandStages []CmdStage
	EventStages   []EventStage
	ReplyStages   []ReplyStage
)

// Plan masks over CommandStages, set by SetOrder.
var (
	arrivalStages uint64 // the rows a command taken off its line skips
	judgingStages uint64 // the rows the relay's own commands run
	replayStages  uint64 // ... and those that act on them after
)

// OutcomeHook sees a client's command once its fate is known — forwarded,
// answered, denied, dropped or stopped (k.Out) — after every row it ran
// through; it may take the lock, and must not call the extension.
type OutcomeHook func(c *ClientConn, k *Cmd)

// outcomeHooks are the stages' outcome hooks by method, set before the
// order (AddOutcomeHooks), and read only after it.
var outcomeHooks = map[string][]OutcomeHook{}

// AddOutcomeHooks lets a stage watch the outcome of the methods named. It
// is called from the facade's init, before SetOrder.
func AddOutcomeHooks(m map[string]OutcomeHook) {
	if CommandStages != nil {
		panic("core: outcome hooks added after the order")
	}
	for name, h := range m {
		outcomeHooks[name] = append(outcomeHooks[name], h)
	}
}

// SetOrder installs the three tables. It is called once, from the facade's
// init, before any instance exists; newInstance refuses to make one
// without them.
func SetOrder(commands []CmdStage, events []EventStage, replies []ReplyStage) {
	if CommandStages != nil {
		panic("core: the order is set once")
	}
	if missing := MissingServices(); len(missing) > 0 {
		panic("core: the order set without the services' " + strings.Join(missing, ", "))
	}
	if len(commands) > 64 || len(events) > 64 || len(replies) > 64 {
		panic("core: more than 64 stages in a table: the plans are 64-bit")
	}
	CommandStages, EventStages, ReplyStages = commands, events, replies
	for i, s := range CommandStages {
		if s.Arrival {
			arrivalStages |= 1 << i
		}
		if s.Judges {
			judgingStages |= 1 << i
		}
		if s.Replays {
			if s.Judges {
				panic("core: " + s.Name + " both judges and acts on replays: a judge runs on them already")
			}
			replayStages |= 1 << i
		}
	}
	// Every method and event known so far gets its plan, and the later
	// ones theirs as they are met.
	methods.SetPlanners(setPlan, setEventPlan)
}

// IsEvent wants the events named.
func IsEvent(names ...string) func(string) bool {
	return func(n string) bool { return slices.Contains(names, n) }
}

// IsMethod wants the methods named.
func IsMethod(names ...string) func(*MethodInfo) bool {
	return func(m *MethodInfo) bool { return slices.Contains(names, m.Name) }
}

// setEventPlan computes e's plan of the events table.
func setEventPlan(e *methods.Event) {
	var p uint64
	for i, s := range EventStages {
		if s.Wants == nil || s.Wants(e.Name) {
			p |= 1 << i
		}
	}
	e.Plan = p
}

// setPlan computes m's plan: which rows of the commands and the replies
// tables want it.
func setPlan(m *MethodInfo) {
	var p uint64
	for i, s := range CommandStages {
		if s.Wants == nil || s.Wants(m) {
			p |= 1 << i
		}
	}
	m.Plan = p
	p = 0
	for i, s := range ReplyStages {
		if s.Wants == nil || s.Wants(m) {
			p |= 1 << i
		}
	}
	m.ReplyPlan = p
	m.Outcome = len(outcomeHooks[m.Name]) > 0
}

// runCommand runs k through the rows of plan, in order, until one answers,
// refuses or holds it. It reports whether k passed every row.
func (c *ClientConn) runCommand(k *Cmd, plan uint64) bool {
	for p := plan; p != 0; p &= p - 1 {
		if !CommandStages[bits.TrailingZeros64(p)].Run(c, k) {
			return false
		}
	}
	return true
}

// runEvent runs e through the rows of its plan, in order, until one stops
// it.
func (in *Instance) runEvent(e *EventMsg) {
	for p := e.info.Plan; p != 0; p &= p - 1 {
		if !EventStages[bits.TrailingZeros64(p)].Run(in, e) {
			return
		}
	}
}

// runReply runs r through the rows of its method's plan, in order, until
// one writes what the client gets.
func (in *Instance) runReply(r *Reply) {
	for p := r.Pc.M.ReplyPlan; p != 0; p &= p - 1 {
		if !ReplyStages[bits.TrailingZeros64(p)].Run(in, r) {
			return
		}
	}
}

// names lists the names of a table's rows, top to bottom.
func names[S any](rows []S, name func(S) string) []string {
	out := make([]string, len(rows))
	for i, s := range rows {
		out[i] = name(s)
	}
	return out
}

// CommandOrder lists the commands table's stage names, top to bottom.
func CommandOrder() []string { return names(CommandStages, func(s CmdStage) string { return s.Name }) }

// EventOrder lists the events table's stage names, top to bottom.
func EventOrder() []string { return names(EventStages, func(s EventStage) string { return s.Name }) }

// ReplyOrder lists the replies table's stage names, top to bottom.
func ReplyOrder() []string { return names(ReplyStages, func(s ReplyStage) string { return s.Name }) }
