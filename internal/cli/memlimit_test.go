package cli

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestNothingOverridesGOMEMLIMIT: docs/performance.md says the process honours GOMEMLIMIT
// and GOGC as the Go runtime reads them: no code of the product sets the memory limit or
// the collector's percent (runtime/debug's SetMemoryLimit, SetGCPercent), which would
// override them.
func TestNothingOverridesGOMEMLIMIT(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	var got []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			// hack/ is a module of its own: the tools around the product.
			if rel, _ := filepath.Rel(root, path); rel == "hack" || strings.HasPrefix(d.Name(), ".") && rel != "." {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		got = append(got, overrides(t, path)...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string(nil), got); diff != "" {
		t.Errorf("calls that override GOMEMLIMIT or GOGC (-want +got):\n%s", diff)
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "performance.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), "honours `GOMEMLIMIT`") {
		t.Errorf("docs/performance.md does not say that the process honours `GOMEMLIMIT`")
	}
}

// overrides returns the calls of runtime/debug's SetMemoryLimit and SetGCPercent in the file,
// as "path:line: debug.Name".
func overrides(t *testing.T, path string) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	name := ""
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == "runtime/debug" {
			name = "debug"
			if imp.Name != nil {
				name = imp.Name.Name
			}
		}
	}
	if name == "" {
		return nil
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if x, ok := sel.X.(*ast.Ident); ok && x.Name == name && (sel.Sel.Name == "SetMemoryLimit" || sel.Sel.Name == "SetGCPercent") {
			out = append(out, fmt.Sprintf("%s:%d: %s.%s", path, fset.Position(sel.Pos()).Line, name, sel.Sel.Name))
		}
		return true
	})
	return out
}
