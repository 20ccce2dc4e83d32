package relay

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The static checks of the relay's code (layers_test.go, locked_test.go)
// type-check its packages from their source.

// relaySources lists, with go list, the export data of every package the
// patterns need (by import path) and the Go files of those under
// relay/internal that this build compiles (build constraints applied, no
// tests).
func relaySources(t *testing.T, patterns ...string) (exports map[string]string, files map[string][]string) {
	t.Helper()
	args := append([]string{"list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}\t{{.Dir}}\t{{join .GoFiles \",\"}}"}, patterns...)
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	exports, files = map[string]string{}, map[string][]string{}
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
	return exports, files
}

// typeCheck parses names and type-checks them as package path against the
// export data of what it imports.
func typeCheck(t *testing.T, fset *token.FileSet, path string, names []string, exports map[string]string) (*types.Package, []*ast.File, *types.Info) {
	t.Helper()
	var files []*ast.File
	for _, name := range names {
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	conf := types.Config{Importer: importer.ForCompiler(fset, "gc", func(p string) (io.ReadCloser, error) {
		return os.Open(exports[p])
	})}
	info := &types.Info{
		Types:      map[ast.Expr]types.TypeAndValue{},
		Defs:       map[*ast.Ident]types.Object{},
		Uses:       map[*ast.Ident]types.Object{},
		Selections: map[*ast.SelectorExpr]*types.Selection{},
	}
	pkg, err := conf.Check(path, fset, files, info)
	if err != nil {
		t.Fatalf("type-checking %s: %v", path, err)
	}
	return pkg, files, info
}
