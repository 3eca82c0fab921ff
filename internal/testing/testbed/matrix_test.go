package testbed

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestControllersBinary(t *testing.T) {
	t.Parallel()
	tests := []struct {
		cs   Controllers
		name string
		want string
	}{
		{CurrentControllers, "kustomize-controller", "kustomize-controller"},
		{CurrentControllers, "helm-controller", "helm-controller"},
		{CurrentControllers, "source-controller", "source-controller"},
		{PreviousControllers, "kustomize-controller", "kustomize-controller-prev"},
		{PreviousControllers, "helm-controller", "helm-controller-prev"},
		// source-controller is not part of the matrix.
		{PreviousControllers, "source-controller", "source-controller"},
	}
	for _, tt := range tests {
		if got := tt.cs.binary(tt.name); got != tt.want {
			t.Errorf("%s.binary(%q) = %q, want %q", tt.cs, tt.name, got, tt.want)
		}
	}
}

// TestControllerMatrixDocumented: the versions the verdicts are proven on, pinned under
// hack/bins/, are the ones the README, docs/verdicts.md and CONTRIBUTING.md name, the previous minor is
// older than the current one, and the bed's CRDs are the current minors'.
func TestControllerMatrixDocumented(t *testing.T) {
	t.Parallel()
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	read := func(elem ...string) string {
		t.Helper()
		data, err := os.ReadFile(filepath.Join(append([]string{root}, elem...)...))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	verdicts, contributing := read("docs", "verdicts.md"), read("CONTRIBUTING.md")
	readme := read("README.md")
	buildBins := read("hack", "build-bins.sh")
	for _, name := range fluxControllers {
		versions := map[Controllers]string{}
		for _, cs := range []Controllers{CurrentControllers, PreviousControllers} {
			v := pinned(t, read("hack", "bins", cs.binary(name), "go.mod"), name)
			versions[cs] = v
			for doc, text := range map[string]string{"docs/verdicts.md": verdicts, "CONTRIBUTING.md": contributing} {
				if !strings.Contains(text, name+" `"+v+"`") {
					t.Errorf("%s does not name %s `%s`, pinned in hack/bins/%s/go.mod", doc, name, v, cs.binary(name))
				}
			}
			if !regexp.MustCompile(regexp.QuoteMeta(name) + " (`v[0-9.]+` and )?`" + regexp.QuoteMeta(v) + "`").MatchString(readme) {
				t.Errorf("README.md does not name %s `%s`, pinned in hack/bins/%s/go.mod", name, v, cs.binary(name))
			}
		}
		cur, prev := minor(t, versions[CurrentControllers]), minor(t, versions[PreviousControllers])
		if prev[0] != cur[0] || prev[1] >= cur[1] {
			t.Errorf("%s: the previous generation %s is not an older minor of the current %s", name, versions[PreviousControllers], versions[CurrentControllers])
		}
		if mod := "github.com/fluxcd/" + name + "@" + versions[CurrentControllers]; !strings.Contains(buildBins, mod) {
			t.Errorf("hack/build-bins.sh does not take the CRDs from %s, the current minor", mod)
		}
	}
}

// pinned returns the version of github.com/fluxcd/<name> a hack/bins go.mod requires.
func pinned(t *testing.T, gomod, name string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^\s*github\.com/fluxcd/` + regexp.QuoteMeta(name) + ` (v\S+)`).FindStringSubmatch(gomod)
	if m == nil {
		t.Fatalf("no github.com/fluxcd/%s in the go.mod", name)
	}
	return m[1]
}

// minor returns the major and minor numbers of a vX.Y.Z version.
func minor(t *testing.T, v string) [2]int {
	t.Helper()
	var out [2]int
	var patch int
	if _, err := fmt.Sscanf(v, "v%d.%d.%d", &out[0], &out[1], &patch); err != nil {
		t.Fatalf("version %q: %v", v, err)
	}
	return out
}

// TestOperatorCRDsPinned: the Flux Operator's CRDs the bed installs are of the version whose
// ResourceSet and FluxReport internal/flux and internal/verify read.
func TestOperatorCRDsPinned(t *testing.T) {
	t.Parallel()
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	buildBins, err := os.ReadFile(filepath.Join(root, "hack", "build-bins.sh"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^op_mod=github\.com/controlplaneio-fluxcd/flux-operator@(v\S+)$`).FindSubmatch(buildBins)
	if m == nil {
		t.Fatal("hack/build-bins.sh pins no github.com/controlplaneio-fluxcd/flux-operator (op_mod=)")
	}
	for _, f := range []string{"internal/flux/resourceset.go", "internal/verify/preflight.go"} {
		data, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), string(m[1])) {
			t.Errorf("%s does not name flux-operator %s, whose CRDs hack/build-bins.sh installs", f, m[1])
		}
	}
}
