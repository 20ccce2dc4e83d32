package relay

import (
	"go/ast"
	"go/token"
	"go/types"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The relay's packages import one way: the facade (package relay) imports
// the stages and the upstream, the stages and the upstream the core, the
// core the link's sockets, and all of them the shared vocabulary (api).
// The upstream (ext, the extension's connection) implements core.Upstream:
// only the facade imports it, and it imports no stage and no service. Nothing under
// relay/internal imports the facade; no stage imports another; the core
// imports no stage; the leaves (leafPackages) import neither the core
// nor a stage; the services the stages share over the core (look) import
// the core and no stage, and the core does not import them; the core's
// parts kept in packages of their own (corePartPackages) import the core
// and nothing above it, and the core reaches them only through the hooks
// it is given, or not at all; cdp, what the relay knows of the protocol itself, imports
// nothing of the relay.

const modRelay = "github.com/cdprelay/cdprelay/relay"

// stagePackages are the concerns' packages under relay/internal.
var stagePackages = []string{"rules", "tiers", "person", "creds", "browser", "targets"}

// leafPackages are what the core itself builds on: they import no
// package above them (the core, a stage, a service).
var leafPackages = []string{"link", "api", "origins", "access", "metrics", "config", "replay", "contexts", "methods", "gid", "outbox"}

// upstreamPackages are the connections to the browser (core.Upstream):
// the facade makes one per connection; the core and the stages reach it
// only through the interface.
var upstreamPackages = []string{"ext"}

// servicePackages are what several stages use over the core: they import
// the core and no stage, and the core does not import them.
var servicePackages = []string{"look"}

// corePartPackages are subsystems of the core in packages of their own,
// listed bottom up (attach: attaching the debugger to a tab and letting go
// of it; lines: a client's commands kept in order around a held one;
// switches: a tab's domain switches answered at the relay; navhold: the
// navigation backstop's hold; away: a client's page through the
// debugger's absence; handles: the live view's use of a shared tab): they
// import the core and nothing above it (no stage, service or upstream),
// and of each other only the parts listed before them, so that no two
// reach each other; the stages, the upstream and the facade may import
// them; the core reaches them through the hooks the facade hands it
// (core.Services: Attacher, Lines, Switches, Away) or not at all (navhold,
// handles), never by importing them.
var corePartPackages = []string{"attach", "lines", "switches", "navhold", "away", "handles"}

// stagesInCore are the concerns whose stage code (what they do with an
// instance, a tab, a client) is still in the core, beside the core's own:
// the core may import their packages, and only theirs, until that code
// leaves. An entry the core no longer imports is an error, so the list
// only shrinks. It is empty: the core imports no stage. A stage whose
// move out of the core takes more than one step is listed here meanwhile.
var stagesInCore = []string{}

// layerViolations returns, for a graph of package -> its dependencies (all
// of them, not only the direct ones), what breaks the rules above. direct
// has each package's own imports: a stage may depend on a stage still in
// the core (stagesInCore) through the core, never by importing it.
func layerViolations(deps, direct map[string][]string) []string {
	internal := modRelay + "/internal/"
	kind := func(p string) (string, bool) {
		if !strings.HasPrefix(p, internal) {
			return "", false
		}
		first, _, _ := strings.Cut(strings.TrimPrefix(p, internal), "/")
		return first, true
	}
	isStage := func(k string) bool { return slices.Contains(stagePackages, k) }
	var bad []string
	for p, ds := range deps {
		pk, ok := kind(p)
		if !ok {
			continue
		}
		for _, d := range ds {
			if d == modRelay {
				bad = append(bad, p+" imports the facade "+d)
				continue
			}
			dk, ok := kind(d)
			if !ok || dk == pk {
				continue
			}
			switch {
			case isStage(pk) && isStage(dk) && slices.Contains(stagesInCore, dk) && !slices.Contains(direct[p], d):
				// through the core, until dk's code leaves it
			case isStage(pk) && isStage(dk):
				bad = append(bad, p+" (a stage) imports another stage, "+d)
			case pk == "core" && isStage(dk) && !slices.Contains(stagesInCore, dk):
				bad = append(bad, p+" (the core) imports a stage, "+d)
			case pk == "core" && slices.Contains(corePartPackages, dk):
				bad = append(bad, p+" (the core) imports "+d+", a part of it that is above it")
			case slices.Contains(corePartPackages, pk) && (isStage(dk) || slices.Contains(servicePackages, dk) || slices.Contains(upstreamPackages, dk)):
				bad = append(bad, p+" (a part of the core) imports "+d+", which is above it")
			case slices.Contains(corePartPackages, pk) && slices.Index(corePartPackages, dk) > slices.Index(corePartPackages, pk):
				bad = append(bad, p+" (a part of the core) imports "+d+", a part listed after it")
			case slices.Contains(leafPackages, pk) && slices.Contains(corePartPackages, dk):
				bad = append(bad, p+" imports "+d+", which is above it")
			case slices.Contains(upstreamPackages, dk):
				bad = append(bad, p+" imports "+d+", an upstream: only the facade may")
			case slices.Contains(upstreamPackages, pk) && (isStage(dk) || slices.Contains(servicePackages, dk)):
				bad = append(bad, p+" (an upstream) imports "+d)
			case slices.Contains(servicePackages, pk) && isStage(dk):
				bad = append(bad, p+" (a service over the core) imports a stage, "+d)
			case (pk == "core" || slices.Contains(leafPackages, pk)) && slices.Contains(servicePackages, dk):
				bad = append(bad, p+" imports "+d+", a service over the core")
			case slices.Contains(leafPackages, pk) && (dk == "core" || isStage(dk)):
				bad = append(bad, p+" imports "+d+", which is above it")
			case pk == "api" && dk != "api":
				bad = append(bad, p+" (the shared vocabulary) imports "+d)
			case pk == "cdp":
				bad = append(bad, p+" (the protocol's leaf) imports "+d)
			}
		}
	}
	slices.Sort(bad)
	return bad
}

func TestLayerRules(t *testing.T) {
	for _, tc := range []struct {
		name string
		deps map[string][]string
		bad  int
	}{
		{"allowed", map[string][]string{
			modRelay + "/internal/tiers": {modRelay + "/internal/core", modRelay + "/internal/api", "github.com/cdprelay/cdprelay/internal/wire"},
			modRelay + "/internal/core":  {modRelay + "/internal/link", modRelay + "/internal/api"},
			modRelay + "/internal/link":  {"github.com/gorilla/websocket"},
			modRelay:                     {modRelay + "/internal/tiers", modRelay + "/internal/core"},
		}, 0},
		{"a stage imports the facade", map[string][]string{modRelay + "/internal/creds": {modRelay}}, 1},
		{"a stage imports a stage", map[string][]string{modRelay + "/internal/creds": {modRelay + "/internal/tiers"}}, 1},
		{"a stage's subpackage imports a stage", map[string][]string{modRelay + "/internal/creds/lock": {modRelay + "/internal/person"}}, 1},
		{"the core imports a stage", map[string][]string{modRelay + "/internal/core": {modRelay + "/internal/targets"}}, 1},
		{"link imports the core", map[string][]string{modRelay + "/internal/link": {modRelay + "/internal/core"}}, 1},
		{"api imports link", map[string][]string{modRelay + "/internal/api": {modRelay + "/internal/link"}}, 1},
		{"cdp imports api", map[string][]string{modRelay + "/internal/cdp": {modRelay + "/internal/api"}}, 1},
		{"the own origins import the core", map[string][]string{modRelay + "/internal/origins": {modRelay + "/internal/core"}}, 1},
		{"the metrics import the core", map[string][]string{modRelay + "/internal/metrics": {modRelay + "/internal/core"}}, 1},
		{"the metrics import a service", map[string][]string{modRelay + "/internal/metrics": {modRelay + "/internal/look"}}, 1},
		{"a stage uses a service", map[string][]string{modRelay + "/internal/person": {modRelay + "/internal/look", modRelay + "/internal/core"}, modRelay + "/internal/look": {modRelay + "/internal/core"}}, 0},
		{"the core imports a service", map[string][]string{modRelay + "/internal/core": {modRelay + "/internal/look"}}, 1},
		{"a service imports a stage", map[string][]string{modRelay + "/internal/look": {modRelay + "/internal/person"}}, 1},
		{"the upstream over the core", map[string][]string{modRelay + "/internal/ext": {modRelay + "/internal/core", modRelay + "/internal/link"}, modRelay: {modRelay + "/internal/ext"}}, 0},
		{"the core imports the upstream", map[string][]string{modRelay + "/internal/core": {modRelay + "/internal/ext"}}, 1},
		{"a stage imports the upstream", map[string][]string{modRelay + "/internal/person": {modRelay + "/internal/ext"}}, 1},
		{"the upstream imports a stage", map[string][]string{modRelay + "/internal/ext": {modRelay + "/internal/tiers"}}, 1},
		{"the upstream and a stage over a part of the core", map[string][]string{modRelay + "/internal/ext": {modRelay + "/internal/away", modRelay + "/internal/core"}, modRelay + "/internal/targets": {modRelay + "/internal/away", modRelay + "/internal/core"}, modRelay + "/internal/away": {modRelay + "/internal/core", modRelay + "/internal/cdp"}}, 0},
		{"the core imports a part of it", map[string][]string{modRelay + "/internal/core": {modRelay + "/internal/away"}}, 1},
		{"a part of the core imports a stage", map[string][]string{modRelay + "/internal/away": {modRelay + "/internal/person"}}, 1},
		{"a part of the core imports the upstream", map[string][]string{modRelay + "/internal/away": {modRelay + "/internal/ext"}}, 1},
		{"a part of the core imports a service", map[string][]string{modRelay + "/internal/away": {modRelay + "/internal/look"}}, 1},
		{"link imports a part of the core", map[string][]string{modRelay + "/internal/link": {modRelay + "/internal/away"}}, 1},
		{"a part of the core imports one below it", map[string][]string{modRelay + "/internal/away": {modRelay + "/internal/attach", modRelay + "/internal/lines", modRelay + "/internal/core"}}, 0},
		{"a part of the core imports one above it", map[string][]string{modRelay + "/internal/attach": {modRelay + "/internal/away", modRelay + "/internal/core"}}, 1},
		{"a stage imports cdp", map[string][]string{modRelay + "/internal/tiers": {modRelay + "/internal/cdp", "github.com/cdprelay/cdprelay/internal/wire"}}, 0},
	} {
		if got := layerViolations(tc.deps, tc.deps); len(got) != tc.bad {
			t.Errorf("%s: %d violations, want %d: %q", tc.name, len(got), tc.bad, got)
		}
	}
}

// TestLayers checks the rules on the packages as they are, with what
// `go list -deps` reports of each.
func TestLayers(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go tool is needed to list the packages: %v", err)
	}
	list := func(field string) map[string][]string {
		out, err := exec.Command(goTool, "list", "-f", "{{.ImportPath}}{{range ."+field+"}} {{.}}{{end}}", modRelay+"/...").Output()
		if err != nil {
			t.Fatalf("go list: %v", err)
		}
		m := map[string][]string{}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			f := strings.Fields(line)
			m[f[0]] = f[1:]
		}
		return m
	}
	deps, direct := list("Deps"), list("Imports")
	if _, ok := deps[modRelay]; !ok {
		t.Fatalf("go list did not list %s", modRelay)
	}
	for _, v := range layerViolations(deps, direct) {
		t.Error(v)
	}
	for _, k := range stagesInCore {
		if !slices.Contains(deps[modRelay+"/internal/core"], modRelay+"/internal/"+k) {
			t.Errorf("the core no longer imports %s: take it off stagesInCore", k)
		}
	}
	t.Logf("%d packages under relay/", len(deps))
}

// TestCoreReadsNoPolicy: the core holds the policy and takes one snapshot
// of it per message; what the policy says is read by the stages (the core
// asks them: Instance.HasTiers, Fencing, AsksNavigation). Catches a call
// of a policy's method, or a look for one of its optional interfaces, in
// the core's code, however the policy was reached (the type checker says
// what each value is).
func TestCoreReadsNoPolicy(t *testing.T) {
	// The core's parts in packages of their own (corePartPackages) are the
	// core's too.
	pkgs := append([]string{"core"}, corePartPackages...)
	var patterns []string
	for _, p := range pkgs {
		patterns = append(patterns, "./internal/"+p)
	}
	exports, files := relaySources(t, patterns...)
	for _, p := range pkgs {
		t.Run(p, func(t *testing.T) { readsNoPolicy(t, p, files[modRelay+"/internal/"+p], exports) })
	}
}

// readsNoPolicy type-checks package relay/internal/pkg (its files names)
// against the export data of its dependencies and fails on each read of
// the policy in it.
func readsNoPolicy(t *testing.T, pkg string, names []string, exports map[string]string) {
	if len(names) == 0 {
		t.Fatalf("no Go files in %s", pkg)
	}
	fset := token.NewFileSet()
	_, files, info := typeCheck(t, fset, modRelay+"/internal/"+pkg, names, exports)
	isPolicy := func(ty types.Type) bool {
		n, ok := types.Unalias(ty).(*types.Named)
		return ok && n.Obj().Name() == "Policy" && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == modRelay+"/internal/api"
	}
	for sel, s := range info.Selections {
		if s.Kind() == types.MethodVal && isPolicy(s.Recv()) {
			t.Errorf("%s: the core reads the policy (%s)", fset.Position(sel.Pos()), s.Obj().Name())
		}
	}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			if a, ok := n.(*ast.TypeAssertExpr); ok && isPolicy(info.Types[a.X].Type) {
				t.Errorf("%s: the core looks into the policy (%s)", fset.Position(a.Pos()), types.ExprString(a.Type))
			}
			return true
		})
	}
}
