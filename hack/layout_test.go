package hack

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// module is the product's module path: its packages' imports of each other are what the layout
// table of CONTRIBUTING.md states.
const module = "github.com/org/app-status-action/"

// layoutRow matches a row of a layout table: | `package` | what it owns | imports |.
var layoutRow = regexp.MustCompile("^\\| `((?:cmd|internal)/[^`]+)` \\|([^|]*)\\|(?:([^|]*)\\|)?\\s*$")

// layoutTable is the layout of the code as CONTRIBUTING.md states it: the product's packages in
// their order (each with the packages it may import, by last path element; nil with everything
// below set for a row that says "everything below") and the test-support packages.
type layoutTable struct {
	order          []string
	imports        map[string][]string
	everythingElse map[string]bool
	testSupport    []string
}

func readLayoutTable(t *testing.T) layoutTable {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "CONTRIBUTING.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "\n## The layout of the code\n")
	if !ok {
		t.Fatal("CONTRIBUTING.md has no section \"The layout of the code\"")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	table := layoutTable{imports: map[string][]string{}, everythingElse: map[string]bool{}}
	for line := range strings.SplitSeq(section, "\n") {
		m := layoutRow.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		pkg := m[1]
		if strings.HasPrefix(pkg, "internal/testing/") {
			table.testSupport = append(table.testSupport, pkg)
			continue
		}
		table.order = append(table.order, pkg)
		cell := strings.TrimSpace(m[3])
		if cell == "everything below" {
			table.everythingElse[pkg] = true
			continue
		}
		names := []string{}
		for name := range strings.SplitSeq(cell, ",") {
			if name = strings.Trim(strings.TrimSpace(name), "`"); name != "" {
				names = append(names, name)
			}
		}
		slices.Sort(names)
		table.imports[pkg] = names
	}
	return table
}

// packagesUnder lists the folders below root (relative to the repository) that hold a Go
// package other than tests.
func packagesUnder(t *testing.T, root string) []string {
	t.Helper()
	var pkgs []string
	err := filepath.WalkDir(filepath.Join("..", root), func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel("..", filepath.Dir(path))
		if err != nil {
			return err
		}
		if rel = filepath.ToSlash(rel); !slices.Contains(pkgs, rel) {
			pkgs = append(pkgs, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(pkgs)
	return pkgs
}

// moduleImports lists the product packages that pkg's non-test files import.
func moduleImports(t *testing.T, pkg string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", pkg, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	imports := []string{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, spec := range f.Imports {
			path, ok := strings.CutPrefix(strings.Trim(spec.Path.Value, `"`), module)
			if ok && !slices.Contains(imports, path) {
				imports = append(imports, path)
			}
		}
	}
	slices.Sort(imports)
	return imports
}

// TestContributingLayout holds the layout table of CONTRIBUTING.md true: it lists every package
// of the product, each row's imports are exactly what the package imports inside the module, no
// package imports one listed above it (each is listed above what it imports), and the test-support packages
// are imported by no package of the product.
func TestContributingLayout(t *testing.T) {
	t.Parallel()
	table := readLayoutTable(t)
	var product, support []string
	for _, pkg := range append(packagesUnder(t, "cmd"), packagesUnder(t, "internal")...) {
		if pkg == "internal/testing" {
			continue // the folder's documentation, no code
		}
		if strings.HasPrefix(pkg, "internal/testing/") {
			if strings.Count(pkg, "/") == 2 {
				support = append(support, pkg)
			}
			continue
		}
		product = append(product, pkg)
	}
	listed := slices.Sorted(slices.Values(table.order))
	if diff := cmp.Diff(product, listed); diff != "" {
		t.Errorf("CONTRIBUTING.md's layout table does not list the product's packages (-packages +table):\n%s", diff)
	}
	supportListed := slices.Sorted(slices.Values(table.testSupport))
	if diff := cmp.Diff(support, supportListed); diff != "" {
		t.Errorf("CONTRIBUTING.md's test-support table does not list internal/testing's packages (-packages +table):\n%s", diff)
	}
	for i, pkg := range table.order {
		imports := moduleImports(t, pkg)
		var names []string
		for _, imp := range imports {
			if strings.HasPrefix(imp, "internal/testing/") {
				t.Errorf("%s imports the test-support package %s", pkg, imp)
				continue
			}
			if pos := slices.Index(table.order, imp); pos >= 0 && pos <= i {
				t.Errorf("%s imports %s, listed above it: nothing may import back up", pkg, imp)
			}
			names = append(names, filepath.Base(imp))
		}
		if table.everythingElse[pkg] {
			continue
		}
		if names == nil {
			names = []string{}
		}
		if diff := cmp.Diff(names, table.imports[pkg]); diff != "" {
			t.Errorf("%s: CONTRIBUTING.md's imports column is not what the package imports (-imports +table):\n%s", pkg, diff)
		}
	}
}
