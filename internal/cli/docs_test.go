package cli

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

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
		for _, problem := range workflowRunProblems(doc) {
			t.Errorf("%s: %s", where, problem)
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

// workflowRunProblems returns what a workflow_run example lacks to deploy only what it should:
// a branches: filter, and an if: on every job that requires CI's success on a push to this
// repository (a pull request's run, from a fork, may carry any branch name and any code).
func workflowRunProblems(doc map[string]any) []string {
	on, ok := doc["on"].(map[string]any)
	if !ok {
		on, ok = doc["true"].(map[string]any) // YAML 1.1 reads the key on: as true
	}
	if !ok {
		return nil
	}
	run, ok := on["workflow_run"]
	if !ok {
		return nil
	}
	var problems []string
	if m, _ := run.(map[string]any); m["branches"] == nil {
		problems = append(problems, "on.workflow_run has no branches: filter")
	}
	jobs, _ := doc["jobs"].(map[string]any)
	for name, job := range jobs {
		cond, _ := job.(map[string]any)["if"].(string)
		for _, want := range []string{
			"github.event.workflow_run.conclusion == 'success'",
			"github.event.workflow_run.event == 'push'",
			"github.event.workflow_run.head_repository.full_name == github.repository",
		} {
			if !strings.Contains(cond, want) {
				problems = append(problems, fmt.Sprintf("job %s: its if: does not require %s", name, want))
			}
		}
	}
	return problems
}

// mdLink is a markdown link's target: [text](target).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// anchor is GitHub's anchor of a heading: lower case, punctuation dropped, spaces as dashes.
func anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors returns the anchors of a markdown file's headings (outside code blocks).
func anchors(t *testing.T, name string) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	code := false
	for line := range strings.Lines(string(data)) {
		if strings.HasPrefix(line, "```") {
			code = !code
		}
		if !code && strings.HasPrefix(line, "#") {
			out[anchor(strings.TrimLeft(line, "#"))] = true
		}
	}
	return out
}

// TestDocsLinks: every relative link of README.md, CONTRIBUTING.md, RELEASING.md and docs/*.md
// names a file that exists and, in a markdown file, a heading it has.
func TestDocsLinks(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"README.md", "CONTRIBUTING.md", "RELEASING.md", "CHANGELOG.md"} {
		if _, err := os.Stat(filepath.Join(root, name)); err == nil {
			files = append(files, filepath.Join(root, name))
		}
	}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		code := false
		for n, line := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(line, "```") {
				code = !code
			}
			if code {
				continue
			}
			for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				path, frag, _ := strings.Cut(target, "#")
				file := name
				if path != "" {
					file = filepath.Join(filepath.Dir(name), path)
				}
				where := fmt.Sprintf("%s:%d", strings.TrimPrefix(name, root+string(filepath.Separator)), n+1)
				if _, err := os.Stat(file); err != nil {
					t.Errorf("%s: link %q: %v", where, target, err)
					continue
				}
				if frag != "" && strings.HasSuffix(file, ".md") && !anchors(t, file)[frag] {
					t.Errorf("%s: link %q: %s has no heading with that anchor", where, target, filepath.Base(file))
				}
			}
		}
	}
}
