package testbed

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// BinDirEnv names the environment variable that points at a folder holding every test bed
// binary, the Flux CRDs under crds/ and the Flux Operator's under flux-operator-crds/. `make
// test` sets it; when it is empty the test bed runs hack/build-bins.sh itself, which builds or
// reuses the cached binaries.
const BinDirEnv = "APP_STATUS_BIN_DIR"

// binaries lists the executables every test bed needs; a bed with PreviousControllers also
// needs theirs (Controllers.binaries).
var binaries = []string{
	"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl",
	"kwok", "kwokctl", "kustomize-controller", "helm-controller", "source-controller",
}

// Bins is the folder of test bed binaries.
type Bins struct{ Dir string }

// Path returns the path of the named binary.
func (b Bins) Path(name string) string { return filepath.Join(b.Dir, name) }

// CRDDir returns the folder holding the Flux CRD manifests.
func (b Bins) CRDDir() string { return filepath.Join(b.Dir, "crds") }

// OperatorCRDDir returns the folder holding the Flux Operator's ResourceSet and FluxReport CRD
// manifests (flux-operator v0.59.0 config/crd/bases): the bed writes those objects as the
// operator does, it does not run the operator.
func (b Bins) OperatorCRDDir() string { return filepath.Join(b.Dir, "flux-operator-crds") }

// FindBins returns the folder of test bed binaries, building them when needed, and checks that
// every binary is there. The error says how to get them.
func FindBins(ctx context.Context) (Bins, error) {
	dir := os.Getenv(BinDirEnv)
	if dir == "" {
		built, err := buildBins(ctx)
		if err != nil {
			return Bins{}, err
		}
		dir = built
	}
	b := Bins{Dir: dir}
	if err := b.check(binaries); err != nil {
		return Bins{}, err
	}
	return b, nil
}

// check says which of the named binaries, and the CRD folder, are missing from the folder, and
// how to get them.
func (b Bins) check(names []string) error {
	var missing []string
	for _, name := range names {
		if st, err := os.Stat(b.Path(name)); err != nil || st.IsDir() {
			missing = append(missing, name)
		}
	}
	for _, dir := range []string{b.CRDDir(), b.OperatorCRDDir()} {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			missing = append(missing, filepath.Base(dir)+"/")
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("test bed binaries missing from %s: %s; run hack/build-bins.sh (or `make bins`) and set %s to the folder it prints",
			b.Dir, strings.Join(missing, ", "), BinDirEnv)
	}
	return nil
}

// buildBins runs hack/build-bins.sh from the repository root and returns the folder it prints.
func buildBins(ctx context.Context) (string, error) {
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(root, "hack", "build-bins.sh"))
	cmd.Dir = root
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("build test bed binaries with hack/build-bins.sh: %w\n%s", err, tail(stderr.String(), 40))
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	return strings.TrimSpace(lines[len(lines)-1]), nil
}

// RepoRoot is the repository's root folder: the nearest folder upwards from the working
// directory holding hack/build-bins.sh (the tools under hack/ run from hack/, go -C hack run).
func RepoRoot() (string, error) { return repoRoot() }

// repoRoot finds the repository root: the nearest folder upwards holding hack/build-bins.sh.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find repository root: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "hack", "build-bins.sh")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("find repository root: no hack/build-bins.sh above the working directory")
		}
		dir = parent
	}
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
