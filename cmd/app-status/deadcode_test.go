package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDeadCodeElimination: nothing the program can run calls a method by a name it computes
// (reflect.Value.Method or MethodByName with a name not known when linking, as text/template
// does for {{.Name}}), so the linker drops the exported methods nothing calls. One such call
// keeps them all: cobra's SetVersionTemplate did, for 17 MB more binary and 12 MiB more
// resident at start. The linker's dependency dump marks such a caller <ReflectMethod>.
func TestDeadCodeElimination(t *testing.T) {
	t.Parallel()
	build := exec.CommandContext(t.Context(), "go", "build", "-trimpath", "-ldflags=-dumpdep", "-o", filepath.Join(t.TempDir(), "app-status"), ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	var deps bytes.Buffer
	build.Stdout, build.Stderr = &deps, &deps
	if err := build.Run(); err != nil {
		t.Fatalf("go build -ldflags=-dumpdep: %v\n%.2000s", err, deps.String())
	}
	var callers []string
	sc := bufio.NewScanner(&deps)
	for sc.Scan() {
		// "caller <ReflectMethod> -> callee", once per callee.
		if caller, _, ok := strings.Cut(sc.Text(), " <ReflectMethod> -> "); ok && (len(callers) == 0 || callers[len(callers)-1] != caller) {
			callers = append(callers, caller)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(callers) > 0 {
		t.Errorf("reachable calls of methods by a computed name, which keep every exported method: %s", strings.Join(callers, ", "))
	}
}
