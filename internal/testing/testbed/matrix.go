package testbed

import (
	"debug/buildinfo"
	"fmt"
	"slices"
)

// Controllers says which pinned minor of kustomize-controller and helm-controller a bed runs.
// Both generations run against the same Flux CRDs, the current minors' (a cluster holds one
// CRD per kind), as they do in a cluster whose CRDs were upgraded before its controllers.
type Controllers int

const (
	// CurrentControllers runs the minors the verdicts are read against (hack/bins/kustomize-controller
	// and hack/bins/helm-controller).
	CurrentControllers Controllers = iota
	// PreviousControllers runs the previous minors the module proxy serves
	// (hack/bins/kustomize-controller-prev and hack/bins/helm-controller-prev).
	PreviousControllers
)

// fluxControllers are the controllers StartFlux runs, in the generation the bed asks for;
// source-controller is not part of the matrix.
var fluxControllers = []string{"kustomize-controller", "helm-controller"}

func (cs Controllers) String() string {
	if cs == PreviousControllers {
		return "previous"
	}
	return "current"
}

// binary is the name of the binary that runs the named controller in this generation.
func (cs Controllers) binary(name string) string {
	if cs == PreviousControllers && slices.Contains(fluxControllers, name) {
		return name + "-prev"
	}
	return name
}

// binaries lists the binaries of this generation's controllers.
func (cs Controllers) binaries() []string {
	names := make([]string, 0, len(fluxControllers))
	for _, name := range fluxControllers {
		names = append(names, cs.binary(name))
	}
	return names
}

// binaryVersion returns the version of github.com/fluxcd/<name> the executable at path was
// built from, read from its build information, e.g. "v1.9.5".
func binaryVersion(path, name string) (string, error) {
	info, err := buildinfo.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("testbed: read the build information of %s: %w", path, err)
	}
	if want := "github.com/fluxcd/" + name; info.Main.Path != want || info.Main.Version == "" {
		return "", fmt.Errorf("testbed: %s was built from %s %q, want a version of %s", path, info.Main.Path, info.Main.Version, want)
	}
	return info.Main.Version, nil
}

// ControllerVersion returns the version of the named Flux controller running for the cluster
// (e.g. "v1.9.5" for "kustomize-controller"), read from the executable of its process, so it
// says what runs, not what was asked for.
func (c *Cluster) ControllerVersion(name string) (string, error) {
	c.mu.Lock()
	var pid int
	for _, ctl := range c.controllers {
		if ctl.name == name && !exited(ctl) {
			pid = ctl.cmd.Process.Pid
		}
	}
	c.mu.Unlock()
	if pid == 0 {
		return "", fmt.Errorf("testbed: no %s runs for cluster %s", name, c.Name)
	}
	return binaryVersion(fmt.Sprintf("/proc/%d/exe", pid), name)
}

// ControllerVersion returns the version of the named Flux controller every cluster of the bed
// runs, e.g. "v1.9.5" for "kustomize-controller"; clusters that run different versions are an
// error.
func (b *Bed) ControllerVersion(name string) (string, error) {
	var version string
	for _, c := range b.Clusters {
		v, err := c.ControllerVersion(name)
		if err != nil {
			return "", err
		}
		if version != "" && v != version {
			return "", fmt.Errorf("testbed: the bed's clusters run %s %s and %s", name, version, v)
		}
		version = v
	}
	return version, nil
}
