package relay

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// What runs under the instance lock must not block or call the extension
// (the core's package doc): every function whose name ends in Locked, every
// method of *core.State and every event row. TestLockedCodeDoesNotBlock
// type-checks every package under relay/internal, follows the calls each
// of those makes, directly or through the relay's other functions, and
// fails on a path to what blocks: taking the instance lock again, a call
// upstream (core.Upstream's methods that send or wait), flushing the
// outbox, sleeping, waiting for a group.
//
// It follows static calls only: a function value called under the lock (a
// stage's hook) is checked as a root of its own, since its name ends in
// Locked. A function literal is not followed into: under the lock one is
// made to run later (spawned, or once Chrome has answered), when the lock
// is released.

// blocking are the functions that must not be reached under the lock, by
// their full names (types.Func.FullName), with why.
var blocking = map[string]string{
	"(*" + modRelay + "/internal/core.Instance).Lock":        "takes the instance lock it holds",
	"(*" + modRelay + "/internal/core.Instance).FlushOutbox": "waits for room upstream",
	"(*" + modRelay + "/internal/outbox.Box).Flush":          "waits for room upstream",
	"(" + modRelay + "/internal/core.Upstream).Forward":      "waits for room upstream",
	"(" + modRelay + "/internal/core.Upstream).Call":         "waits for Chrome's answer",
	"(" + modRelay + "/internal/core.Upstream).CallThen":     "waits for Chrome's answer",
	"(" + modRelay + "/internal/core.Upstream).SendCommand":  "waits for Chrome's answer",
	"(" + modRelay + "/internal/core.Upstream).BrowserInfo":  "waits for Chrome's answer",
	"(" + modRelay + "/internal/core.Upstream).Fire":         "waits for room upstream (State.Fire queues instead)",
	"(" + modRelay + "/internal/core.Upstream).FireQueued":   "waits for room upstream (State.Fire queues instead)",
	"(" + modRelay + "/internal/core.Upstream).FireCall":     "waits for room upstream",
	"time.Sleep":             "sleeps",
	"(*sync.WaitGroup).Wait": "waits for other goroutines",
}

// callGraph is what the relay's functions call, by full name.
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
			t.Errorf("%s runs under the instance lock and %s:\n\t%s", root, blocking[path[len(path)-1].callee], formatPath(path))
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

// pathToBlocking returns the calls from root to a blocking function, or
// nil.
func (g callGraph) pathToBlocking(root string) []call {
	seen := map[string]bool{root: true}
	var walk func(fn string) []call
	walk = func(fn string) []call {
		for _, c := range g.calls[fn] {
			if _, ok := blocking[c.callee]; ok {
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
// static calls of each function and the functions that run under the lock.
func relayCallGraph(t *testing.T) callGraph {
	t.Helper()
	out, err := exec.Command("go", "list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}\t{{.Dir}}\t{{join .GoFiles \",\"}}", "./internal/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	exports, files := map[string]string{}, map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 4 {
			continue
		}
		exports[f[0]] = f[1]
		if strings.HasPrefix(f[0], modRelay+"/internal/") && f[3] != "" {
			for _, name := range strings.Split(f[3], ",") {
				files[f[0]] = append(files[f[0]], filepath.Join(f[2], name))
			}
		}
	}
	g := callGraph{calls: map[string][]call{}, roots: map[string]token.Position{}}
	fset := token.NewFileSet()
	for _, path := range slices.Sorted(maps.Keys(files)) {
		var parsed []*ast.File
		for _, name := range files[path] {
			f, err := parser.ParseFile(fset, name, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			parsed = append(parsed, f)
		}
		conf := types.Config{Importer: importer.ForCompiler(fset, "gc", func(p string) (io.ReadCloser, error) {
			return os.Open(exports[p])
		})}
		info := &types.Info{
			Defs:       map[*ast.Ident]types.Object{},
			Uses:       map[*ast.Ident]types.Object{},
			Selections: map[*ast.SelectorExpr]*types.Selection{},
		}
		if _, err := conf.Check(path, fset, parsed, info); err != nil {
			t.Fatalf("type-checking %s: %v", path, err)
		}
		for _, f := range parsed {
			// A function handed to the core as a hook that runs under
			// the lock (a field named ...Locked) is a root, whatever its
			// own name.
			ast.Inspect(f, func(n ast.Node) bool {
				kv, ok := n.(*ast.KeyValueExpr)
				if !ok {
					return true
				}
				if k, ok := kv.Key.(*ast.Ident); ok && strings.HasSuffix(k.Name, "Locked") {
					if fn := funcOf(info, kv.Value); fn != nil {
						g.roots[fn.Origin().FullName()] = fset.Position(kv.Pos())
					}
				}
				return true
			})
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || fd.Body == nil {
					continue
				}
				fn, ok := info.Defs[fd.Name].(*types.Func)
				if !ok {
					continue
				}
				name := fn.FullName()
				if runsLocked(fn) {
					g.roots[name] = fset.Position(fd.Pos())
				}
				g.calls[name] = staticCalls(fset, info, fd.Body)
			}
		}
	}
	return g
}

// runsLocked reports whether fn runs with the instance lock held: its name
// says so, it is a method of *core.State, or it is an event row.
func runsLocked(fn *types.Func) bool {
	if strings.HasSuffix(fn.Name(), "Locked") {
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

// unlock is the release of the instance lock: what a function does after
// it, at the top of its body, no longer runs under the lock (a hook whose
// contract lets it release the lock, core.Away.ExtensionGoneLocked).
const unlock = "(*" + modRelay + "/internal/core.Instance).Unlock"

// staticCalls lists the calls body makes of functions and methods known
// by name, not into the function literals it makes, and up to the first
// statement of the body that releases the lock.
func staticCalls(fset *token.FileSet, info *types.Info, body *ast.BlockStmt) []call {
	var out []call
	for _, stmt := range body.List {
		if e, ok := stmt.(*ast.ExprStmt); ok {
			if c, ok := e.X.(*ast.CallExpr); ok {
				if fn := funcOf(info, c.Fun); fn != nil && fn.FullName() == unlock {
					break
				}
			}
		}
		ast.Inspect(stmt, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncLit:
				return false
			case *ast.CallExpr:
				if fn := funcOf(info, n.Fun); fn != nil {
					out = append(out, call{callee: fn.Origin().FullName(), at: fset.Position(n.Pos())})
				}
			}
			return true
		})
	}
	return out
}

// funcOf is the function or method e names, or nil (a func value, a
// conversion, a builtin).
func funcOf(info *types.Info, e ast.Expr) *types.Func {
	var fn *types.Func
	switch f := ast.Unparen(e).(type) {
	case *ast.Ident:
		fn, _ = info.Uses[f].(*types.Func)
	case *ast.SelectorExpr:
		if s := info.Selections[f]; s != nil {
			fn, _ = s.Obj().(*types.Func)
		} else {
			fn, _ = info.Uses[f.Sel].(*types.Func)
		}
	case *ast.IndexExpr: // a generic function, instantiated
		if id, ok := f.X.(*ast.Ident); ok {
			fn, _ = info.Uses[id].(*types.Func)
		}
	}
	return fn
}
