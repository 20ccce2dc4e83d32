package relay

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/cdprelay/cdprelay/relay/internal/config"
	"github.com/cdprelay/cdprelay/relay/internal/core"
	"github.com/cdprelay/cdprelay/relay/internal/methods"
	"github.com/cdprelay/cdprelay/relay/internal/person"

	"github.com/cdprelay/cdprelay/internal/fakeext"
	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/relay/internal/access"
	"github.com/cdprelay/cdprelay/relay/internal/creds"
	tier "github.com/cdprelay/cdprelay/relay/internal/tiers"
)

// Tests of the three tables (order.go) and of what their steps changed.

// TestMethodsByIdentity: the methods the relay looks out for by identity
// are the method table's own entries, which every command is looked up
// in. An entry made before the table was filled would never be the one a
// command carries, and the check on it would never match.
func TestMethodsByIdentity(t *testing.T) {
	for _, m := range []*core.MethodInfo{methods.FetchEnable, methods.GetProperties} {
		if got := core.LookupMethod([]byte(m.Name)); got != m || m.Unknown {
			t.Errorf("%s: the looked-out-for entry is not the table's (unknown %v)", m.Name, m.Unknown)
		}
	}
}

// TestReadOnlyPropertiesWithoutScopes: on a read-only tab a function's
// [[Scopes]] do not reach the client (they lead to the guard's closures).
func TestReadOnlyPropertiesWithoutScopes(t *testing.T) {
	h := newHarness(t, config.Config{Policy: tiers})
	e := h.ext(fakeext.Options{Tabs: []fakeext.Tab{{ID: 1, URL: "https://ro.example/account", Title: "Account"}},
		Handler: func(tabID int, sid, method string, p json.RawMessage) (any, error) {
			if method == "Runtime.getProperties" {
				return map[string]any{"result": []any{}, "internalProperties": []any{
					map[string]any{"name": "[[Scopes]]", "value": map[string]any{"type": "object", "objectId": "guard-closure"}},
					map[string]any{"name": "[[FunctionLocation]]", "value": map[string]any{"type": "object"}},
				}}, nil
			}
			return fakeext.DefaultHandler(tabID, sid, method, p)
		}})
	c := h.client()
	sess := h.autoAttach(c)[0]
	// The page's world, so that the function's id is one the relay places.
	h.call(c, sess, "Runtime.enable", nil)
	from := len(c.Messages())
	contextCreated(e, 1, "", 3, tid(1), "default", "", "https://ro.example")
	h.event(c, from, "Runtime.executionContextCreated")
	res := h.call(c, sess, "Runtime.getProperties", map[string]any{"objectId": "1.3.7"})
	if strings.Contains(string(res), "Scopes") || !strings.Contains(string(res), "FunctionLocation") {
		t.Fatalf("a read-only tab's function properties: %s", res)
	}
}

// TestCommandOrder: the commands table, top to bottom. A change here is a
// change of the security order: it comes with the behavioural pin of the
// adjacency it changes (order_command_test.go).
func TestCommandOrder(t *testing.T) {
	want := []string{
		"core.Limits",
		"core.Running",
		"core.Route",
		"core.Line",
		"rules.Operator",
		"rules.Relay",
		"creds.Restore",
		"rules.Uploads",
		"person.StopRules",
		"rules.TargetOnTab",
		"tiers.Navigate",
		"tiers.Checks",
		"tiers.StandIn",
		"tiers.FrameTree",
		"tiers.Contexts",
		"tiers.Retried",
		"tiers.Gate",
		"tiers.Pixels",
		"person.Recheck",
		"person.Ask",
		"tiers.NavTo",
		"creds.Secret",
		"creds.LockGates",
		"rules.Fence",
		"core.Emulate",
		"core.NeedsPage",
		"core.ScreencastNote",
		"person.DialogClaim",
		"tiers.Worlds",
		"tiers.RemoveScript",
		"creds.Streams",
		"person.Brake",
		"core.Send",
	}
	sameList(t, "commands", core.CommandOrder(), want)
}

func sameList(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the %s table:\n got %q\nwant %q", what, got, want)
	}
}

// planned lists the rows of the commands table that m's plan calls.
func planned(m *core.MethodInfo) []string {
	var out []string
	for i, s := range core.CommandStages {
		if m.Plan&(1<<i) != 0 {
			out = append(out, s.Name)
		}
	}
	return out
}

// TestCommandPlans: what a method's plan calls. The hot path's command
// calls no row that does not care for it; the commands a narrowed row is
// for do call it.
func TestCommandPlans(t *testing.T) {
	for _, tc := range []struct {
		method string
		want   []string
	}{
		{"Runtime.evaluate", []string{"core.Limits", "core.Running", "core.Route", "core.Line", "rules.Operator", "rules.Relay",
			"tiers.Checks", "tiers.StandIn", "tiers.Contexts", "tiers.Gate", "person.Recheck", "person.Ask",
			"creds.LockGates", "core.NeedsPage", "person.Brake", "core.Send"}},
		{"Fetch.continueRequest", []string{"core.Limits", "core.Running", "core.Route", "core.Line", "rules.Operator", "rules.Relay",
			"creds.Restore", "tiers.Checks", "tiers.StandIn", "tiers.Gate", "person.Recheck", "person.Ask", "creds.LockGates", "core.NeedsPage", "core.Send"}},
		{"Page.navigate", []string{"core.Limits", "core.Running", "core.Route", "core.Line", "rules.Operator", "rules.Relay",
			"tiers.Navigate", "tiers.Checks", "tiers.StandIn", "tiers.Gate", "person.Recheck", "person.Ask", "tiers.NavTo",
			"creds.LockGates", "core.NeedsPage", "core.Send"}},
	} {
		sameList(t, tc.method+"'s plan of the commands", planned(core.LookupMethod([]byte(tc.method))), tc.want)
	}
	// A method of a newer Chrome gets a plan when it is first seen.
	if got := planned(core.LookupMethod([]byte("Newer.method"))); len(got) == 0 || got[0] != "core.Limits" || got[len(got)-1] != "core.Send" {
		t.Errorf("an unknown method's plan: %q", got)
	}
}

// everyMethod is every method the relay knows by name, and one it does
// not.
func everyMethod() []*core.MethodInfo {
	var out []*core.MethodInfo
	for _, m := range methods.Table {
		out = append(out, m)
	}
	return append(out, core.LookupMethod([]byte("Newer.method")))
}

// TestPlansAgree: a narrowed row's wants covers every method its body
// would act on: a plan too narrow would skip a check for good.
func TestPlansAgree(t *testing.T) {
	tb := &core.Tab{Id: 1}
	sessions := []*core.Session{nil, {Id: "browser"}, {Id: "top", Tab: tb}, {Id: "child", Tab: tb, Child: true}}
	for _, m := range everyMethod() {
		for _, s := range sessions {
			if core.Emulated(m, s) != nil && !core.WantsEmulate(m) {
				t.Errorf("%s is emulated but core.Emulate does not want it", m.Name)
			}
		}
		for _, p := range []string{`{"text":"{{secret:x}}"}`, `{"name":"x"}`} {
			k := &core.Cmd{M: m, Params: []byte(p)}
			if _, _, is := creds.SecretRef(k); is && !creds.WantsSecret(m) {
				t.Errorf("%s may type a secret but creds.Secret does not want it", m.Name)
			}
		}
		var c core.ClientConn
		k := &core.Cmd{M: m, Env: wireParams(`{"throwOnSideEffect":true}`)}
		if _, ok := person.StopRules(&c, k); !ok && !person.WantsStopRules(m) {
			t.Errorf("%s is refused by the stop rules but person.StopRules does not want it", m.Name)
		}
		if access.Pixels(m.Name) != tier.WantsPixels(m) || (m.Ctx != nil) != tier.WantsContexts(m) || m.Brake != person.WantsBrake(m) {
			t.Errorf("%s: a row's wants disagrees with its table", m.Name)
		}
	}
}

func wireParams(p string) wire.Envelope { return wire.Envelope{Params: []byte(p)} }

// TestAssembly: what the facade hands the core besides the order, every
// hook of it — the credentials' scrubber above all, without which a typed
// secret or a URL's password would reach the client and the audit log;
// the dialogs, without which a tab's dialog would be nobody's to answer
// but the automation's; the person's authority, without which nobody could
// stop the automation or take over a tab; the tiers, without which every
// page is full to automation; the time away, without which a client's page
// ends whenever Chrome takes the debugger away.
func TestAssembly(t *testing.T) {
	if missing := core.MissingServices(); len(missing) > 0 {
		t.Fatalf("the facade's init leaves hooks of the core's services unset: %v", missing)
	}
}

// TestEventOrder: the events table, top to bottom (order_event_test.go
// pins the adjacencies that matter).
func TestEventOrder(t *testing.T) {
	want := []string{
		"tiers.FrameGuard",
		"core.Screencast",
		"creds.Frames",
		"core.PageTrack",
		"person.Dialogs",
		"core.Child",
		"tiers.Frames",
		"tiers.Requests",
		"tiers.BlindSources",
		"tiers.Blind",
		"core.RelayWorld",
		"tiers.Guard",
		"person.BrakePause",
		"rules.Backstop",
		"person.LetGoOn",
		"core.Session",
		"core.Children",
		"person.BrakeChild",
		"rules.FenceChild",
		"tiers.ChildPage",
		"tiers.BlindChild",
		"person.ResumeWaiting",
		"tiers.Withhold",
		"person.OwnDebugger",
		"browser.Downloads",
		"core.Count",
		"creds.Redact",
		"core.Deliver",
	}
	sameList(t, "events", core.EventOrder(), want)
	// The hot path's event calls only the rows every event goes through.
	var got []string
	plan := methods.LookupEvent([]byte("Runtime.consoleAPICalled")).Plan
	for i, s := range core.EventStages {
		if plan&(1<<i) != 0 {
			got = append(got, s.Name)
		}
	}
	sameList(t, "Runtime.consoleAPICalled's plan of the events", got, []string{"core.Child", "tiers.Blind", "core.RelayWorld", "core.Session", "tiers.Withhold", "core.Count", "core.Deliver"})
}

// TestReplyOrder: the replies table, top to bottom (order_reply_test.go
// pins the adjacencies that matter).
func TestReplyOrder(t *testing.T) {
	sameList(t, "replies", core.ReplyOrder(), []string{
		"tiers.KeepScript",
		"core.TapScript",
		"creds.StreamForget",
		"tiers.WentBlind",
		"core.Error",
		"tiers.Scopes",
		"tiers.History",
		"tiers.SideEffect",
		"creds.Results",
		"creds.StreamPiece",
		"core.Result",
	})
	for _, tc := range []struct {
		method string
		want   []string
	}{
		// The hot path's reply calls only the rows that may finish it.
		{"Runtime.evaluate", []string{"tiers.WentBlind", "core.Error", "tiers.SideEffect", "core.Result"}},
		{"IO.read", []string{"creds.StreamForget", "tiers.WentBlind", "core.Error", "creds.StreamPiece", "core.Result"}},
		{"Page.addScriptToEvaluateOnNewDocument", []string{"tiers.KeepScript", "core.TapScript", "tiers.WentBlind", "core.Error", "core.Result"}},
		{"Newer.method", []string{"tiers.WentBlind", "core.Error", "core.Result"}},
	} {
		var got []string
		plan := core.LookupMethod([]byte(tc.method)).ReplyPlan
		for i, s := range core.ReplyStages {
			if plan&(1<<i) != 0 {
				got = append(got, s.Name)
			}
		}
		sameList(t, tc.method+"'s plan of the replies", got, tc.want)
	}
	// Every method whose result has credentials goes through their row.
	for name := range creds.ResultMethods() {
		if core.LookupMethod([]byte(name)).ReplyPlan&(1<<slices.IndexFunc(core.ReplyStages, func(s core.ReplyStage) bool { return s.Name == "creds.Results" })) == 0 {
			t.Errorf("%s: creds.Results does not want it", name)
		}
	}
}
