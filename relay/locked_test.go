package relay

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// What runs under the instance lock must not block or call the extension
// (the core's package doc): every function of a package over the core
// whose name ends in Locked, every function handed over as a hook so named,
// every method of *core.State and every event row.
// TestLockedCodeDoesNotBlock type-checks every package under relay/internal,
// follows the calls each of those makes — directly, through the relay's
// other functions, through a hook (a field of a func type: to every
// function the relay puts in it) and into the function literals that run
// there and then — and fails on a path to what blocks: taking the instance
// lock again, a call upstream but for the few that only look, flushing the
// outbox, sleeping, waiting for a group.
//
// Not followed: a function literal that runs later (started with go,
// stored, returned, or handed to what runs it once the lock is released:
// runsLater); what a function does after it releases the lock, for the
// hooks whose contract lets them (releasesLock).

// blocking are the functions that must not be reached under the lock, by
// their full names (types.Func.FullName), with why.
var blocking = map[string]string{
	"(*" + modRelay + "/internal/core.Instance).Lock":        "takes the instance lock it holds",
	"(*" + modRelay + "/internal/core.Instance).FlushOutbox": "waits for room upstream",
	"(*" + modRelay + "/internal/outbox.Box).Flush":          "waits for room upstream",
	"time.Sleep":             "sleeps",
	"(*sync.WaitGroup).Wait": "waits for other goroutines",
}

// upstreamLooks are the methods of core.Upstream that only look or mark,
// and may be called under the lock; every other one sends or waits (End
// runs what waited for the calls it ends, which may take the lock).
var upstreamLooks = map[string]bool{"Ended": true, "IsReady": true, "Ready": true, "Done": true, "Pending": true, "TakeWhere": true}

// runsLater are the functions that run a function literal handed to them
// once the lock is released, or on a goroutine of its own.
var runsLater = map[string]bool{
	"(*" + modRelay + "/internal/core.tasks).Spawn":    true,
	"(*" + modRelay + "/internal/core.State).FireThen": true,
	"(*" + modRelay + "/internal/core.State).SetGrace": true,
	"time.AfterFunc":    true,
	"context.AfterFunc": true,
}

// releasesLock are the hooks whose contract lets them release the lock
// (core.Away.ExtensionGoneLocked): what they do after a top-level
// Instance.Unlock is not under it.
var releasesLock = map[string]bool{modRelay + "/internal/away.keepForExtension": true}

// blockingWhy says why callee blocks, or "".
func blockingWhy(callee string) string {
	if why, ok := blocking[callee]; ok {
		return why
	}
	if m, ok := strings.CutPrefix(callee, "("+modRelay+"/internal/core.Upstream)."); ok && !upstreamLooks[m] {
		return "calls upstream (" + m + ")"
	}
	return ""
}

// callGraph is what the relay's functions call, by full name; a hook (a
// field of a func type, "field:" and its struct's name) calls what the
// relay puts in it, a function literal ("lit:" and its place) what it
// calls.
type callGraph struct {
	calls map[string][]call
	roots map[string]token.Position
}

type call struct {
	callee string
	at     token.Position
}

func TestLockedCodeDoesNotBlock(t *testing.T) {
	g := relayCallGraph(t)
	if len(g.roots) < 100 {
		t.Fatalf("only %d functions found that run under the lock: the check reads nothing", len(g.roots))
	}
	for _, root := range slices.Sorted(maps.Keys(g.roots)) {
		if path := g.pathToBlocking(root); path != nil {
			t.Errorf("%s runs under the instance lock and %s:\n\t%s", root, blockingWhy(path[len(path)-1].callee), formatPath(path))
		}
	}
	t.Logf("%d functions that run under the lock checked", len(g.roots))
}

// TestLockedCheckFindsABlock: the check finds a call upstream made under
// the lock two calls down, and one of a function whose name says it holds
// the lock.
func TestLockedCheckFindsABlock(t *testing.T) {
	g := callGraph{
		calls: map[string][]call{
			"(*x.State).decide": {{callee: "x.helper"}},
			"x.helper":          {{callee: "(" + modRelay + "/internal/core.Upstream).SendCommand"}},
			"x.noteLocked":      {{callee: "(*" + modRelay + "/internal/core.Instance).Lock"}},
			"x.fine":            {{callee: "x.helper2"}},
		},
	}
	if p := g.pathToBlocking("(*x.State).decide"); len(p) != 2 {
		t.Errorf("a call upstream two calls down: path %v", p)
	}
	if p := g.pathToBlocking("x.noteLocked"); len(p) != 1 {
		t.Errorf("the lock taken again: path %v", p)
	}
	if p := g.pathToBlocking("x.fine"); p != nil {
		t.Errorf("nothing blocking reached: path %v", p)
	}
}

// TestLockedCheckReadsHooksAndLiterals: the check finds the roots and
// calls it claims in real code — a function literal put in a hook named
// ...Locked, a function literal run there and then (a sort's), a hook
// called under the lock (to what is put in it) — and passes what runs
// later (go, a literal stored).
func TestLockedCheckReadsHooksAndLiterals(t *testing.T) {
	const src = `package x

import (
	"sort"
	"time"
)

type Hooks struct{ NoteLocked, Plain func() }

func sleeper() { time.Sleep(0) }
func later()   { time.Sleep(0) }

var h = Hooks{NoteLocked: func() { sleeper() }, Plain: later}

func sortLocked() { sort.Slice([]int{}, func(i, j int) bool { sleeper(); return false }) }
func hookLocked() { h.Plain() }
func laterLocked() {
	go sleeper()
	f := func() { sleeper() }
	_ = f
}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "x.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Defs: map[*ast.Ident]types.Object{}, Uses: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{}}
	if _, err := (&types.Config{Importer: importer.ForCompiler(fset, "source", nil)}).Check("x", fset, []*ast.File{f}, info); err != nil {
		t.Fatal(err)
	}
	g := callGraph{calls: map[string][]call{}, roots: map[string]token.Position{}}
	(&graphBuilder{fset: fset, info: info, g: g}).file(f, true)
	blocked := map[string]bool{}
	for root := range g.roots {
		blocked[root] = g.pathToBlocking(root) != nil
	}
	want := map[string]bool{"x.sortLocked": true, "x.hookLocked": true, "x.laterLocked": false, "lit:x.go:13:27": true}
	if !maps.Equal(blocked, want) {
		t.Errorf("roots and whether they block: %v, want %v", blocked, want)
	}
}

// pathToBlocking returns the calls from root to a blocking function, or
// nil.
func (g callGraph) pathToBlocking(root string) []call {
	seen := map[string]bool{root: true}
	var walk func(fn string) []call
	walk = func(fn string) []call {
		for _, c := range g.calls[fn] {
			if blockingWhy(c.callee) != "" {
				return []call{c}
			}
			if seen[c.callee] {
				continue
			}
			seen[c.callee] = true
			if p := walk(c.callee); p != nil {
				return append([]call{c}, p...)
			}
		}
		return nil
	}
	return walk(root)
}

func formatPath(p []call) string {
	var b strings.Builder
	for i, c := range p {
		if i > 0 {
			b.WriteString("\n\t")
		}
		b.WriteString(c.callee + " (" + filepath.Base(c.at.Filename) + ":" + strconv.Itoa(c.at.Line) + ")")
	}
	return b.String()
}

// relayCallGraph type-checks every package under relay/internal from its
// source, against the export data of what it imports, and records the
// static calls of each function, the functions its hooks are given, and
// the functions that run under the lock.
func relayCallGraph(t *testing.T) callGraph {
	t.Helper()
	exports, files := relaySources(t, "./internal/...")
	g := callGraph{calls: map[string][]call{}, roots: map[string]token.Position{}}
	fset := token.NewFileSet()
	for _, path := range slices.Sorted(maps.Keys(files)) {
		pkg, parsed, info := typeCheck(t, fset, path, files[path], exports)
		// Only a package of the core, or over it, names its functions for
		// the instance's lock; elsewhere Locked is a lock of its own.
		overCore := path == modRelay+"/internal/core" || slices.ContainsFunc(pkg.Imports(), func(p *types.Package) bool { return p.Path() == modRelay+"/internal/core" })
		b := &graphBuilder{fset: fset, info: info, g: g}
		for _, f := range parsed {
			b.file(f, overCore)
		}
	}
	return g
}

type graphBuilder struct {
	fset *token.FileSet
	info *types.Info
	g    callGraph
}

// file records f's functions and the functions its composite literals put
// in hooks.
func (b *graphBuilder) file(f *ast.File, overCore bool) {
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.CompositeLit)
		if !ok {
			return true
		}
		tv, ok := b.info.Types[lit]
		if !ok {
			return true
		}
		for _, e := range lit.Elts {
			kv, ok := e.(*ast.KeyValueExpr)
			if !ok {
				continue
			}
			k, ok := kv.Key.(*ast.Ident)
			if !ok {
				continue
			}
			if _, isFunc := b.info.Types[kv.Value].Type.Underlying().(*types.Signature); !isFunc {
				continue
			}
			target := b.funcValue(kv.Value)
			if target == "" {
				continue
			}
			field := fieldKey(tv.Type, k.Name)
			b.g.calls[field] = append(b.g.calls[field], call{callee: target, at: b.fset.Position(kv.Pos())})
			if strings.HasSuffix(k.Name, "Locked") {
				// A hook that runs under the lock, whatever the name of
				// what is put in it.
				b.g.roots[target] = b.fset.Position(kv.Pos())
			}
		}
		return true
	})
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		fn, ok := b.info.Defs[fd.Name].(*types.Func)
		if !ok {
			continue
		}
		name := fn.FullName()
		if runsLocked(fn, overCore) {
			b.g.roots[name] = b.fset.Position(fd.Pos())
		}
		b.g.calls[name] = b.calls(fd.Body, releasesLock[name])
	}
}

// funcValue names the function e is (a function, a method, a function
// literal, recorded as one), or "".
func (b *graphBuilder) funcValue(e ast.Expr) string {
	if fl, ok := ast.Unparen(e).(*ast.FuncLit); ok {
		name := "lit:" + b.fset.Position(fl.Pos()).String()
		b.g.calls[name] = b.calls(fl.Body, false)
		return name
	}
	if fn := funcOf(b.info, e); fn != nil {
		return fn.Origin().FullName()
	}
	return ""
}

// fieldKey names field name of struct type ty.
func fieldKey(ty types.Type, name string) string {
	if p, ok := ty.(*types.Pointer); ok {
		ty = p.Elem()
	}
	return "field:" + types.TypeString(types.Unalias(ty), nil) + "." + name
}

// runsLocked reports whether fn runs with the instance lock held: its name
// says so (in a package of the core or over it), it is a method of
// *core.State, or it is an event row.
func runsLocked(fn *types.Func, overCore bool) bool {
	if overCore && strings.HasSuffix(fn.Name(), "Locked") {
		return true
	}
	sig := fn.Type().(*types.Signature)
	if r := sig.Recv(); r != nil && isCore(r.Type(), "State") {
		return true
	}
	// An event row: func(*core.Instance, *core.EventMsg) bool, or the
	// method of that shape.
	p := sig.Params()
	if r := sig.Recv(); r != nil && isCore(r.Type(), "Instance") && p.Len() == 1 && isCore(p.At(0).Type(), "EventMsg") {
		return true
	}
	return sig.Recv() == nil && p.Len() == 2 && isCore(p.At(0).Type(), "Instance") && isCore(p.At(1).Type(), "EventMsg")
}

// isCore reports whether ty is *core.<name>.
func isCore(ty types.Type, name string) bool {
	p, ok := ty.(*types.Pointer)
	if !ok {
		return false
	}
	n, ok := types.Unalias(p.Elem()).(*types.Named)
	return ok && n.Obj().Name() == name && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == modRelay+"/internal/core"
}

// unlock is the release of the instance lock.
const unlock = "(*" + modRelay + "/internal/core.Instance).Unlock"

// calls lists the calls body makes: of functions and methods by name, of
// hooks (fields of a func type), and those in the function literals that
// run there and then (called at once, or handed to a function that is not
// in runsLater). With release, it stops at the first statement of the body
// that releases the lock.
func (b *graphBuilder) calls(body *ast.BlockStmt, release bool) []call {
	var out []call
	var visit func(n ast.Node)
	visit = func(n ast.Node) {
		ast.Inspect(n, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncLit:
				return false // stored, returned, or run later: not now
			case *ast.GoStmt:
				return false
			case *ast.CallExpr:
				callee := ""
				if fl, ok := ast.Unparen(n.Fun).(*ast.FuncLit); ok {
					visit(fl.Body) // called at once
				} else if fn := funcOf(b.info, n.Fun); fn != nil {
					callee = fn.Origin().FullName()
				} else if sel, ok := ast.Unparen(n.Fun).(*ast.SelectorExpr); ok {
					if s := b.info.Selections[sel]; s != nil && s.Kind() == types.FieldVal {
						callee = fieldKey(s.Recv(), sel.Sel.Name)
					}
				}
				if callee != "" {
					out = append(out, call{callee: callee, at: b.fset.Position(n.Pos())})
				}
				if !runsLater[callee] {
					for _, a := range n.Args {
						if fl, ok := ast.Unparen(a).(*ast.FuncLit); ok {
							visit(fl.Body) // sort.Slice's, sync.Once's: run now
						}
					}
				}
			}
			return true
		})
	}
	for _, stmt := range body.List {
		if release && isCallOf(b.info, stmt, unlock) {
			break
		}
		visit(stmt)
	}
	return out
}

// isCallOf reports whether stmt is a call of fn and nothing else.
func isCallOf(info *types.Info, stmt ast.Stmt, fn string) bool {
	e, ok := stmt.(*ast.ExprStmt)
	if !ok {
		return false
	}
	c, ok := e.X.(*ast.CallExpr)
	if !ok {
		return false
	}
	f := funcOf(info, c.Fun)
	return f != nil && f.FullName() == fn
}

// funcOf is the function or method e names, or nil (a func value, a
// conversion, a builtin).
func funcOf(info *types.Info, e ast.Expr) *types.Func {
	switch f := ast.Unparen(e).(type) {
	case *ast.Ident:
		fn, _ := info.Uses[f].(*types.Func)
		return fn
	case *ast.SelectorExpr:
		if s := info.Selections[f]; s != nil {
			fn, _ := s.Obj().(*types.Func)
			return fn
		}
		fn, _ := info.Uses[f.Sel].(*types.Func)
		return fn
	case *ast.IndexExpr: // a generic function, instantiated
		return funcOf(info, f.X)
	case *ast.IndexListExpr:
		return funcOf(info, f.X)
	}
	return nil
}
