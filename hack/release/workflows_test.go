package release

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

var (
	usesLine = regexp.MustCompile(`^\s*(?:-\s+)?uses:\s*(\S+)\s*(.*)$`)
	// pinned is owner/repo[/path]@<full commit SHA>, followed by the version it is as a comment.
	pinned        = regexp.MustCompile(`^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+(?:/[^@\s]+)?@[0-9a-f]{40}$`)
	versionNote   = regexp.MustCompile(`^# v[0-9]+(?:\.[0-9]+){0,2}$`)
	pinnedByImage = regexp.MustCompile(`^docker://[^@\s]+@sha256:[0-9a-f]{64}$`)
)

// TestWorkflowsPinAndLimit: every workflow under .github/workflows runs third-party actions
// pinned to a full commit SHA, with the version that SHA is as a comment (`uses:
// actions/checkout@<sha> # v7.0.1`), and sets permissions: at its top to nothing or read-only
// access, so that write access is granted job by job, where a job needs it.
func TestWorkflowsPinAndLimit(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", ".github", "workflows", "*.y*ml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no workflow under .github/workflows")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			for n, line := range strings.Split(string(data), "\n") {
				m := usesLine.FindStringSubmatch(line)
				if m == nil {
					continue
				}
				ref, note := m[1], m[2]
				switch {
				case strings.HasPrefix(ref, "./"):
				case strings.HasPrefix(ref, "docker://"):
					if !pinnedByImage.MatchString(ref) {
						t.Errorf("line %d: %s is not pinned by digest (docker://IMAGE@sha256:...)", n+1, ref)
					}
				case !pinned.MatchString(ref):
					t.Errorf("line %d: %s is not pinned to a full commit SHA (OWNER/REPO@<40 hex> # vX.Y.Z)", n+1, ref)
				case !versionNote.MatchString(note):
					t.Errorf("line %d: %s has no `# vX.Y.Z` comment naming the version its SHA is", n+1, ref)
				}
			}

			var wf struct {
				Permissions any `json:"permissions"`
				Jobs        map[string]struct {
					Permissions any `json:"permissions"`
				} `json:"jobs"`
			}
			if err := yaml.Unmarshal(data, &wf); err != nil {
				t.Fatal(err)
			}
			if wf.Permissions == nil {
				t.Error("no top-level permissions: (without it, jobs get the repository's default token permissions)")
			}
			if !readOnly(wf.Permissions) {
				t.Errorf("top-level permissions: %v grants write access; grant it in the jobs that need it", wf.Permissions)
			}
			for name, job := range wf.Jobs {
				if job.Permissions == "write-all" {
					t.Errorf("job %s: permissions: write-all; name the scopes it needs", name)
				}
			}
		})
	}
}

// readOnly reports whether a permissions: value grants no write access.
func readOnly(p any) bool {
	switch p := p.(type) {
	case nil:
		return true
	case string:
		return p == "read-all"
	case map[string]any:
		for _, v := range p {
			if v != "read" && v != "none" {
				return false
			}
		}
		return true
	}
	return false
}

// TestWorkflowsInstallTestTools: a job that runs the unit tests (make test-short) on a GitHub
// runner installs what internal/report's tests run first (cmark-gfm and xmllint, which the runner
// lacks), with hack/install-packages.sh: without them the tests fail.
func TestWorkflowsInstallTestTools(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", ".github", "workflows", "*.y*ml"))
	if err != nil {
		t.Fatal(err)
	}
	tested := 0
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var wf struct {
			Jobs map[string]struct {
				Steps []struct {
					Run string `json:"run"`
				} `json:"steps"`
			} `json:"jobs"`
		}
		if err := yaml.Unmarshal(data, &wf); err != nil {
			t.Fatal(err)
		}
		for name, job := range wf.Jobs {
			var script strings.Builder
			for _, step := range job.Steps {
				script.WriteString(step.Run + "\n")
			}
			run := script.String()
			test := strings.Index(run, "make test-short")
			if test < 0 {
				continue
			}
			tested++
			install := installLine.FindStringSubmatchIndex(run)
			switch {
			case install == nil || install[0] > test:
				t.Errorf("%s, job %s: make test-short without hack/install-packages.sh before it", filepath.Base(file), name)
			case install[2] < install[3]: // tools named: the report's two among them
				tools := strings.Fields(run[install[2]:install[3]])
				if !slices.Contains(tools, "cmark-gfm") || !slices.Contains(tools, "xmllint") {
					t.Errorf("%s, job %s: hack/install-packages.sh %s: cmark-gfm or xmllint missing", filepath.Base(file), name, strings.Join(tools, " "))
				}
			}
		}
	}
	if tested == 0 {
		t.Fatal("no workflow job runs make test-short")
	}
}

// installLine is a call of hack/install-packages.sh and the tools it names.
var installLine = regexp.MustCompile(`hack/install-packages\.sh((?: +[a-z-]+)*) *\n`)
