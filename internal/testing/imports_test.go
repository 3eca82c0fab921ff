package testing_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

const module = "github.com/org/app-status-action"

// productImports lists the files of the product (not a test, not under internal/testing or
// hack/) that import a package of internal/testing, as "file imports package".
func productImports(fsys fs.FS) ([]string, error) {
	prefix := module + "/internal/testing"
	var found []string
	err := fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			base := path.Base(name)
			switch {
			case name == ".":
				return nil
			case name == "hack", name == "internal/testing", base == "testdata",
				strings.HasPrefix(base, "."), strings.HasPrefix(base, "_"):
				return fs.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		src, err := fs.ReadFile(fsys, name)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, src, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, spec := range f.Imports {
			imp, err := strconv.Unquote(spec.Path.Value)
			if err != nil {
				return err
			}
			if imp == prefix || strings.HasPrefix(imp, prefix+"/") {
				found = append(found, name+" imports "+imp)
			}
		}
		return nil
	})
	return found, err
}

// TestOnlyTestsImportTestSupport fails when a file of the product imports the test support:
// fakes and test clusters must never be built into the binary.
func TestOnlyTestsImportTestSupport(t *testing.T) {
	t.Parallel()
	found, err := productImports(os.DirFS("../.."))
	if err != nil {
		t.Fatalf("productImports(repository) error: %v", err)
	}
	if len(found) > 0 {
		t.Errorf("product files import the test support under internal/testing (only tests and hack/ may):\n%s",
			strings.Join(found, "\n"))
	}
}

func TestProductImports(t *testing.T) {
	t.Parallel()
	file := func(imports ...string) *fstest.MapFile {
		src := "package p\n\nimport (\n"
		for _, imp := range imports {
			src += "\t" + strconv.Quote(imp) + "\n"
		}
		return &fstest.MapFile{Data: []byte(src + ")\n")}
	}
	fsys := fstest.MapFS{
		"cmd/app-status/main.go":          file("os", module+"/internal/cli"),
		"cmd/app-status/main_test.go":     file(module + "/internal/testing/testbed"),
		"internal/cli/bad.go":             file(module + "/internal/testing/fakeapi"),
		"internal/verify/named.go":        file("context", module+"/internal/testing"),
		"internal/verify/lookalike.go":    file(module + "/internal/testingtools"),
		"internal/testing/testbed/bed.go": file(module + "/internal/testing/fakeapi"),
		"hack/bench/main.go":              file(module + "/internal/testing/testbed"),
		"internal/cli/testdata/x.go":      file(module + "/internal/testing/fakeapi"),
		"internal/publish/publish.go":     file("net/http"),
		"internal/publish/README.md":      {Data: []byte("internal/testing/fakegithub")},
		".git/hooks/x.go":                 file(module + "/internal/testing/fakeapi"),
		"internal/sanitize/commands.go":   file(module + "/internal/sanitize"),
		"internal/cloudauth/cloudauth.go": file(module + "/internal/testing/cloudauthtest"),
	}
	got, err := productImports(fsys)
	if err != nil {
		t.Fatalf("productImports() error: %v", err)
	}
	want := []string{
		"internal/cli/bad.go imports " + module + "/internal/testing/fakeapi",
		"internal/cloudauth/cloudauth.go imports " + module + "/internal/testing/cloudauthtest",
		"internal/verify/named.go imports " + module + "/internal/testing",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("productImports() mismatch (-want +got):\n%s", diff)
	}
}
