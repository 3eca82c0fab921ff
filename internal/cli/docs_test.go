package cli

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// yamlExample is a ```yaml block of the documentation.
type yamlExample struct {
	file string
	line int
	text string
}

// docExamples returns every ```yaml block of README.md, RELEASING.md and docs/*.md.
func docExamples(t *testing.T, root string) []yamlExample {
	t.Helper()
	files := []string{filepath.Join(root, "README.md"), filepath.Join(root, "RELEASING.md")}
	more, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, more...)
	var out []yamlExample
	for _, name := range files {
		f, err := os.Open(name)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		var cur *yamlExample
		for n := 1; sc.Scan(); n++ {
			line := sc.Text()
			switch {
			case cur == nil && strings.TrimSpace(line) == "```yaml":
				cur = &yamlExample{file: name, line: n + 1}
			case cur != nil && strings.TrimSpace(line) == "```":
				out = append(out, *cur)
				cur = nil
			case cur != nil:
				cur.text += line + "\n"
			}
		}
		_ = f.Close()
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// runScripts returns the run: scripts of a workflow or of a list of steps.
func runScripts(doc map[string]any) []string {
	var steps []any
	if s, ok := doc["steps"].([]any); ok {
		steps = append(steps, s...)
	}
	if jobs, ok := doc["jobs"].(map[string]any); ok {
		for _, j := range jobs {
			if job, ok := j.(map[string]any); ok {
				if s, ok := job["steps"].([]any); ok {
					steps = append(steps, s...)
				}
			}
		}
	}
	var out []string
	for _, s := range steps {
		if step, ok := s.(map[string]any); ok {
			if run, ok := step["run"].(string); ok {
				out = append(out, run)
			}
		}
	}
	return out
}

// TestDocsWorkflowExamples: every workflow example of the documentation is safe to copy: no
// ${{ }} expression inside a run: script (outputs hold text from clusters, and an expression
// is pasted into the script before the shell reads it: a script injection), and each passes
// actionlint (with shellcheck when it is installed).
func TestDocsWorkflowExamples(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), ".github", "workflows")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var workflows []string
	examples := docExamples(t, root)
	for i, ex := range examples {
		where := fmt.Sprintf("%s:%d", filepath.Base(ex.file), ex.line)
		var doc map[string]any
		if err := yaml.Unmarshal([]byte(ex.text), &doc); err != nil {
			t.Errorf("%s: the example is not valid YAML: %v", where, err)
			continue
		}
		for _, run := range runScripts(doc) {
			if strings.Contains(run, "${{") {
				t.Errorf("%s: a run: script holds a ${{ }} expression; pass the value through env: and read the variable:\n%s", where, run)
			}
		}
		if _, ok := doc["jobs"]; ok {
			name := filepath.Join(dir, fmt.Sprintf("example-%02d.yml", i))
			if err := os.WriteFile(name, []byte("# "+where+"\n"+ex.text), 0o600); err != nil {
				t.Fatal(err)
			}
			workflows = append(workflows, name)
		}
	}
	if len(workflows) == 0 {
		t.Fatal("no workflow example found in the documentation")
	}
	if testing.Short() {
		t.Skip("actionlint is installed and run without -short")
	}
	out, err := exec.Command(filepath.Join(root, "hack", "tools.sh"), "actionlint").Output()
	if err != nil {
		t.Fatalf("install actionlint with hack/tools.sh: %v", err)
	}
	args := []string{"-no-color"}
	if sc, err := exec.LookPath("shellcheck"); err == nil {
		args = append(args, "-shellcheck", sc)
	} else {
		args = append(args, "-shellcheck=")
		t.Log("shellcheck is not installed: the run: scripts are not checked by it")
	}
	cmd := exec.Command(strings.TrimSpace(string(out)), append(args, workflows...)...)
	cmd.Dir = filepath.Dir(filepath.Dir(dir))
	if report, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("actionlint found problems in the documentation's workflows (%v):\n%s", err, report)
	}
}
