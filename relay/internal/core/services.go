package core

import (
	"reflect"
	"strings"
)

// Services are what the stages and the core's parts do for the core
// beside their rows (order.go), their emulations (emulate.go) and their
// lifecycle hooks (hooks.go): each one a struct of hooks, whose doc says
// when the core calls them. The facade hands them over together, once,
// from its init and before the order (SetServices). Every hook is
// required: without one the core would hide nothing or fence nothing —
// every page full to automation, nobody able to stop it — so SetOrder
// refuses to run while one is missing, and TestAssembly says none is.
type Services struct {
	Scrubber  Scrubber  // the credentials' last look at what leaves (creds)
	Dialogs   Dialogs   // a tab's JavaScript dialogs (person)
	Authority Authority // the Stop, take-over and asking a person (person)
	Backstop  Backstop  // the navigation backstop's answers (rules)
	Tiers     Tiers     // a tab's access decided and changed (tiers)
	Refusals  Refusals  // the browser's policy refusals (browser)
	Away      Away      // the time away (relay/internal/away)
	Lines     Lines     // the lines of held commands (relay/internal/lines)
	Switches  Switches  // a tab's domain switches (relay/internal/switches)
	Attacher  Attacher  // attaching the debugger and letting go (relay/internal/attach)
}

// SetServices installs the services. It is called once, from the facade's
// init, before SetOrder.
func SetServices(s Services) {
	if CommandStages != nil {
		panic("core: the services set after the order")
	}
	scrubber, dialogs, authority, backstop = s.Scrubber, s.Dialogs, s.Authority, s.Backstop
	tiers, refusals, away, heldLines, switchEms, attacher = s.Tiers, s.Refusals, s.Away, s.Lines, s.Switches, s.Attacher
}

// MissingServices names the hooks of the services in force that are not
// set ("Tiers.ChildLocked"), for SetOrder and the assembly's test.
func MissingServices() []string {
	return missingHooks(Services{scrubber, dialogs, authority, backstop, tiers, refusals, away, heldLines, switchEms, attacher})
}

// missingHooks names the func fields of s, at any depth, that are nil.
func missingHooks(s Services) []string {
	var out []string
	var walk func(v reflect.Value, path string)
	walk = func(v reflect.Value, path string) {
		switch v.Kind() {
		case reflect.Struct:
			for i := range v.NumField() {
				walk(v.Field(i), strings.TrimPrefix(path+"."+v.Type().Field(i).Name, "."))
			}
		case reflect.Func:
			if v.IsNil() {
				out = append(out, path)
			}
		}
	}
	walk(reflect.ValueOf(s), "")
	return out
}
