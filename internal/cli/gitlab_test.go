package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/org/app-status-action/internal/result"
)

// parseDotenv reads a dotenv report as GitLab does (Ci::ParseDotenvArtifactService): a line
// per variable, KEY=VALUE split at the first '=', blanks stripped, keys of ASCII letters,
// digits and '_', no empty line, less than 5 KiB. It fails the test where GitLab would refuse
// the artifact.
func parseDotenv(t *testing.T, s string) map[string]string {
	t.Helper()
	if len(s) >= 5<<10 {
		t.Fatalf("dotenv report of %d bytes: GitLab accepts less than 5,120", len(s))
	}
	key := regexp.MustCompile(`^[a-zA-Z0-9_]+$`)
	vars := map[string]string{}
	for _, line := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok || !key.MatchString(strings.TrimSpace(k)) {
			t.Fatalf("dotenv line %q: GitLab refuses it", line)
		}
		if _, dup := vars[k]; dup {
			t.Fatalf("dotenv variable %s given twice", k)
		}
		vars[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return vars
}

func names(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%04d", prefix, i)
	}
	return out
}

func TestDotenvReport(t *testing.T) {
	t.Parallel()
	clusters := func(failed, ready []string) []result.Cluster {
		var cs []result.Cluster
		for _, n := range failed {
			cs = append(cs, result.Cluster{Name: n, Verdict: result.VerdictFailed, Code: "crash-loop"})
		}
		for _, n := range ready {
			cs = append(cs, result.Cluster{Name: n, Verdict: result.VerdictCurrent})
		}
		return cs
	}
	long := func(prefix string, n int) []string {
		out := names(prefix, n)
		for i := range out {
			out[i] += strings.Repeat("x", 50)
		}
		return out
	}
	tests := []struct {
		name           string
		failed, ready  []string
		want           map[string]string
		wantFailedKept int // the failed clusters the list keeps (-1: all)
	}{
		{
			name: "one failed of three", failed: []string{"us"}, ready: []string{"eu", "ap"},
			want: map[string]string{
				"APP_STATUS": "failure", "APP_STATUS_READY_COUNT": "2", "APP_STATUS_FAILED_COUNT": "1",
				"APP_STATUS_DURATION": "1.5s", "APP_STATUS_FAILED": `["us"]`, "APP_STATUS_READY": `["ap","eu"]`,
				"APP_STATUS_TRUNCATED": "false",
			},
			wantFailedKept: -1,
		},
		{
			name: "all current", ready: []string{"eu"},
			want: map[string]string{
				"APP_STATUS": "success", "APP_STATUS_READY_COUNT": "1", "APP_STATUS_FAILED_COUNT": "0",
				"APP_STATUS_DURATION": "1.5s", "APP_STATUS_FAILED": `[]`, "APP_STATUS_READY": `["eu"]`,
				"APP_STATUS_TRUNCATED": "false",
			},
			wantFailedKept: -1,
		},
		{name: "a fleet: the ready list is cut first", failed: names("bad", 20), ready: names("good", 1000), wantFailedKept: -1},
		{name: "more failed names than fit", failed: long("bad", 500), ready: names("good", 10)},
		{name: "failed names filling the file to the byte", failed: names(strings.Repeat("b", 60), 200), ready: names("good", 10)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			run := result.NewRun([]string{"Kustomization/flux-system/app"}, "", clusters(tt.failed, tt.ready), 1500*time.Millisecond)
			got := parseDotenv(t, dotenvReport(run))
			if tt.want != nil {
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("variables (-want +got):\n%s", diff)
				}
				return
			}
			var failed, ready []string
			for k, v := range map[string]*[]string{"APP_STATUS_FAILED": &failed, "APP_STATUS_READY": &ready} {
				if err := json.Unmarshal([]byte(got[k]), v); err != nil {
					t.Fatalf("%s=%s is not a JSON array: %v", k, got[k], err)
				}
			}
			if got["APP_STATUS_TRUNCATED"] != "true" {
				t.Errorf("APP_STATUS_TRUNCATED=%s, want true", got["APP_STATUS_TRUNCATED"])
			}
			if got["APP_STATUS_FAILED_COUNT"] != fmt.Sprint(len(tt.failed)) || got["APP_STATUS_READY_COUNT"] != fmt.Sprint(len(tt.ready)) {
				t.Errorf("counts %s/%s, want the whole %d/%d", got["APP_STATUS_FAILED_COUNT"], got["APP_STATUS_READY_COUNT"], len(tt.failed), len(tt.ready))
			}
			if tt.wantFailedKept == -1 && len(failed) != len(tt.failed) {
				t.Errorf("kept %d failed clusters of %d: the failed list is cut before the ready one", len(failed), len(tt.failed))
			}
			if len(failed) == 0 || len(failed) > len(tt.failed) || !cmp.Equal(failed, run.FailedClusters[:len(failed)]) {
				t.Errorf("failed list %v is not a prefix of %v", failed, run.FailedClusters)
			}
			if !cmp.Equal(ready, run.ReadyClusters[:len(ready)]) {
				t.Errorf("ready list %v is not a prefix of the ready clusters", ready)
			}
			if size := len(dotenvReport(run)); size < maxDotenvBytes-200 {
				t.Errorf("a cut report of %d bytes leaves room unused (limit %d)", size, maxDotenvBytes)
			}
		})
	}
}

// TestDotenvValueStaysOnItsLine: a name the clusters input would refuse still cannot add a line,
// a variable or a quote to the report.
func TestDotenvValueStaysOnItsLine(t *testing.T) {
	t.Parallel()
	run := result.NewRun([]string{"Kustomization/flux-system/app"}, "", []result.Cluster{
		{Name: "a\nAPP_STATUS=success\r\u2028\"$x`\\'", Verdict: result.VerdictFailed},
	}, time.Second)
	got := parseDotenv(t, dotenvReport(run))
	if len(got) != 7 || got["APP_STATUS"] != "failure" {
		t.Errorf("variables %v: a name made a variable of its own", got)
	}
	if got["APP_STATUS_FAILED"] != `["a_APP_STATUS=success____x___"]` {
		t.Errorf("APP_STATUS_FAILED=%s", got["APP_STATUS_FAILED"])
	}
}

// TestGitLabRun: `app-status verify` in a GitLab job (GITLAB_CI=true) writes the dotenv report,
// the JUnit report and the summary in the job's folder, and a path given on the command line
// wins.
func TestGitLabRun(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	kubeconfig := "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: \"https://127.0.0.1:1\"}}]\n" +
		"users: [{name: u, user: {token: gitlab-token-0123456789}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n"
	if err := os.WriteFile("kubeconfig", []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	f := newFakeEnv(t, map[string]string{"GITLAB_CI": "true"})
	delete(f.vars, "GITHUB_ACTIONS")
	code := Run(context.Background(), []string{"verify", "--kubeconfig", "kubeconfig", "--resource", "ks/app", "--timeout", "30s", "--quiet", "--summary-file", "mine.md"}, f.env())
	if code != 1 {
		t.Errorf("exit %d, want 1\n%s\n%s", code, f.stdout.String(), f.stderr.String())
	}
	vars := parseDotenv(t, f.file(t, filepath.Join(dir, gitlabDotenvFile)))
	if vars["APP_STATUS"] != "failure" || vars["APP_STATUS_FAILED"] != `["c"]` {
		t.Errorf("dotenv report: %v", vars)
	}
	if junit := f.file(t, filepath.Join(dir, gitlabJUnitFile)); !strings.Contains(junit, `<testcase name="c: Kustomization/flux-system/app" classname="c"`) {
		t.Errorf("JUnit report:\n%s", junit)
	}
	if _, err := os.Stat(filepath.Join(dir, gitlabSummaryFile)); !os.IsNotExist(err) {
		t.Errorf("the summary went to %s, not to --summary-file (%v)", gitlabSummaryFile, err)
	}
	if summary := f.file(t, filepath.Join(dir, "mine.md")); !strings.Contains(summary, "Unreachable") {
		t.Errorf("summary:\n%s", summary)
	}
	for _, out := range []string{f.stdout.String(), f.stderr.String()} {
		if strings.Contains(out, "gitlab-token-0123456789") {
			t.Errorf("the token was printed:\n%s", out)
		}
	}
}

// TestGitLabTemplate: templates/app-status.yml is a component (spec: inputs, then the job), its
// job verifies without deploying, reports the files the binary writes, and its script passes
// shellcheck as POSIX sh (the image's shell may be busybox or dash).
func TestGitLabTemplate(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("..", "..", "templates", "app-status.yml"))
	if err != nil {
		t.Fatal(err)
	}
	header, body, ok := strings.Cut(string(data), "\n---\n")
	if !ok {
		t.Fatal("templates/app-status.yml: no '---' between spec and the job")
	}
	var spec struct {
		Spec struct {
			Inputs map[string]struct {
				Default *string `json:"default"`
			} `json:"inputs"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal([]byte(header), &spec); err != nil {
		t.Fatalf("spec: %v", err)
	}
	for _, name := range []string{"job-name", "stage", "resource", "revision", "clusters", "image"} {
		if _, ok := spec.Spec.Inputs[name]; !ok {
			t.Errorf("no input %s", name)
		}
	}
	if d := spec.Spec.Inputs["revision"].Default; d == nil || *d != "$CI_COMMIT_SHA" {
		t.Errorf("the revision's default is not the pipeline's commit")
	}
	var jobs map[string]struct {
		Image       struct{ Name string }   `json:"image"`
		Environment struct{ Action string } `json:"environment"`
		Script      []string                `json:"script"`
		Artifacts   struct {
			When    string            `json:"when"`
			Paths   []string          `json:"paths"`
			Reports map[string]string `json:"reports"`
		} `json:"artifacts"`
	}
	if err := yaml.Unmarshal([]byte(body), &jobs); err != nil || len(jobs) != 1 {
		t.Fatalf("the job: %v (%d jobs)", err, len(jobs))
	}
	job := jobs["$[[ inputs.job-name ]]"]
	if job.Image.Name != "$[[ inputs.image ]]" || job.Environment.Action != "verify" || job.Artifacts.When != "always" {
		t.Errorf("image %q, environment action %q, artifacts when %q", job.Image.Name, job.Environment.Action, job.Artifacts.When)
	}
	if diff := cmp.Diff(map[string]string{"junit": gitlabJUnitFile, "dotenv": gitlabDotenvFile}, job.Artifacts.Reports); diff != "" {
		t.Errorf("reports (-want +got):\n%s", diff)
	}
	if len(job.Script) != 1 {
		t.Fatalf("%d script entries, want 1", len(job.Script))
	}
	for _, file := range []string{gitlabDotenvFile, gitlabJUnitFile, gitlabSummaryFile} {
		if !strings.Contains(job.Script[0], " "+file) {
			t.Errorf("the script does not write %s", file)
		}
	}
	script := filepath.Join(t.TempDir(), "script.sh")
	if err := os.WriteFile(script, []byte(job.Script[0]), 0o600); err != nil {
		t.Fatal(err)
	}
	shellcheck, err := exec.LookPath("shellcheck")
	if err != nil {
		t.Fatalf("shellcheck is not installed (hack/install-packages.sh installs it): %v", err)
	}
	if out, err := exec.Command(shellcheck, "-s", "sh", script).CombinedOutput(); err != nil {
		t.Errorf("shellcheck -s sh on the job's script: %v\n%s", err, out)
	}

	// The script run by sh with an app-status that prints its arguments: inputs are split at
	// blanks and passed as they are, a '*' never expanded to the job folder's files.
	bin, work := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "app-status"), []byte("#!/bin/sh\nprintf '%s\\n' \"$@\"\n"), 0o755); err != nil { //nolint:gosec // a test's stand-in
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "a-file-in-the-job-folder"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", script)
	cmd.Dir = work
	cmd.Env = []string{"PATH=" + bin + ":/usr/bin:/bin", "APP_STATUS_INPUT_RESOURCE=ks/a *", "APP_STATUS_INPUT_NAMESPACE=flux-system",
		"APP_STATUS_INPUT_REVISION=abc1234", "APP_STATUS_INPUT_TIMEOUT=5m", "APP_STATUS_INPUT_RECONCILE=false", "APP_STATUS_INPUT_ARGS=--context *"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the script: %v\n%s", err, out)
	}
	got := strings.Split(strings.TrimSpace(string(out)), "\n")
	want := []string{"verify", "--namespace", "flux-system", "--revision", "abc1234", "--timeout", "5m",
		"--dotenv-file", gitlabDotenvFile, "--junit-file", gitlabJUnitFile, "--summary-file", gitlabSummaryFile,
		"--resource", "ks/a", "--resource", "*", "--context", "*"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("app-status's arguments (-want +got):\n%s", diff)
	}

	// The allow-exec input, true, passes --allow-exec.
	cmd = exec.Command("sh", script)
	cmd.Dir = work
	cmd.Env = []string{"PATH=" + bin + ":/usr/bin:/bin", "APP_STATUS_INPUT_RESOURCE=ks/a", "APP_STATUS_INPUT_NAMESPACE=flux-system",
		"APP_STATUS_INPUT_REVISION=abc1234", "APP_STATUS_INPUT_TIMEOUT=5m", "APP_STATUS_INPUT_RECONCILE=false", "APP_STATUS_INPUT_ALLOW_EXEC=true"}
	if out, err = cmd.CombinedOutput(); err != nil {
		t.Fatalf("the script: %v\n%s", err, out)
	}
	if got := strings.Split(strings.TrimSpace(string(out)), "\n"); !slices.Contains(got, "--allow-exec") {
		t.Errorf("app-status's arguments with allow-exec true: %q, want --allow-exec among them", got)
	}

	// Without the clusters input, --all-contexts is passed unless the args input names the
	// clusters itself, in either form of each flag.
	for _, tc := range []struct {
		args string
		all  bool
	}{
		{"", true},
		{"--fail-fast --max-parallel 50", true},
		{"--clusters-dir ci", true},
		{"--contexts-are-not-a-flag", true},
		{"--context prod", false},
		{"--context=prod", false},
		{"--all-contexts", false},
		{"--all-contexts=true", false},
		{"--fail-fast --cluster prod=context:prod", false},
		{"--cluster=prod=context:prod", false},
		{"--clusters-file ci/clusters.txt", false},
		{"--clusters-file=ci/clusters.txt", false},
		{"--kubeconfig-dir /secrets", false},
		{"--kubeconfig-dir=/secrets --fail-fast", false},
	} {
		cmd = exec.Command("sh", script)
		cmd.Dir = work
		cmd.Env = []string{"PATH=" + bin + ":/usr/bin:/bin", "APP_STATUS_INPUT_RESOURCE=ks/a", "APP_STATUS_INPUT_NAMESPACE=flux-system",
			"APP_STATUS_INPUT_REVISION=abc1234", "APP_STATUS_INPUT_TIMEOUT=5m", "APP_STATUS_INPUT_RECONCILE=false", "APP_STATUS_INPUT_ARGS=" + tc.args}
		if out, err = cmd.CombinedOutput(); err != nil {
			t.Fatalf("the script with args %q: %v\n%s", tc.args, err, out)
		}
		got := strings.Split(strings.TrimSpace(string(out)), "\n")
		count := func(words []string) (n int) {
			for _, w := range words {
				if w == "--all-contexts" {
					n++
				}
			}
			return n
		}
		if added := count(got) - count(strings.Fields(tc.args)); added != map[bool]int{true: 1, false: 0}[tc.all] {
			t.Errorf("args %q: app-status's arguments %q, want --all-contexts %s", tc.args, got, map[bool]string{true: "added", false: "not added"}[tc.all])
		}
	}

	// The clusters input goes to --cluster flags, a line each (blank lines kept, so that a
	// message's line number is the input's), the pipeline's own text: no file is written.
	tmp := t.TempDir()
	cmd = exec.Command("sh", script)
	cmd.Dir = work
	cmd.Env = append(cmd.Env[:0:0], "PATH="+bin+":/usr/bin:/bin", "TMPDIR="+tmp, "APP_STATUS_INPUT_RESOURCE=ks/a", "APP_STATUS_INPUT_NAMESPACE=flux-system",
		"APP_STATUS_INPUT_REVISION=abc1234", "APP_STATUS_INPUT_TIMEOUT=5m", "APP_STATUS_INPUT_RECONCILE=false",
		"APP_STATUS_INPUT_CLUSTERS=prod=file:kc/prod.yaml\n\nedge=oidc:https://edge.example.com audience=app-status token=env:$T")
	out, err = cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the script: %v\n%s", err, out)
	}
	got = strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	want = []string{"--cluster", "prod=file:kc/prod.yaml", "--cluster", "", "--cluster", "edge=oidc:https://edge.example.com audience=app-status token=env:$T"}
	if len(got) < len(want) || !slices.Equal(got[len(got)-len(want):], want) {
		t.Errorf("app-status's arguments end %q, want %q", got, want)
	}
	if left, err := os.ReadDir(tmp); err != nil || len(left) != 0 {
		t.Errorf("TMPDIR holds %v (%v) after the run, want nothing written there", left, err)
	}
}

// TestDotenvReportNeverOverflows: whatever the names' length and number, the report stays
// within GitLab's 5 KiB, to the byte.
func TestDotenvReportNeverOverflows(t *testing.T) {
	t.Parallel()
	for length := 1; length <= 63; length++ {
		for _, n := range []int{1, 10, 60, 61, 62, 63, 64, 100, 300} {
			var clusters []result.Cluster
			for i := range n {
				name := fmt.Sprintf("%0*d", length, i)
				clusters = append(clusters, result.Cluster{Name: name, Verdict: result.VerdictFailed}, result.Cluster{Name: "r" + name, Verdict: result.VerdictCurrent})
			}
			run := result.NewRun([]string{"Kustomization/flux-system/app"}, "", clusters, time.Second)
			if size := len(dotenvReport(run)); size > maxDotenvBytes {
				t.Fatalf("%d failed and %d ready names of %d characters: %d bytes, over %d", n, n, length, size, maxDotenvBytes)
			}
		}
	}
}

// TestGitLabDefaultFileIsAWarning: in a GitLab job, a default report that cannot be written (a
// read-only folder) is a warning, while a file the command line named is an error; each file is
// written whatever happened to the others.
func TestGitLabDefaultFileIsAWarning(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing", "app-status.env")
	run := result.NewRun([]string{"Kustomization/flux-system/app"}, "", []result.Cluster{{Name: "prod", Verdict: result.VerdictCurrent}}, time.Second)
	var warn strings.Builder
	files := reportFiles{dotenv: missing, junit: filepath.Join(dir, "junit.xml"), gitlabDefaults: map[string]bool{missing: true}}
	if err := files.write(run, "", &warn); err != nil {
		t.Errorf("a default file that cannot be written failed the step: %v", err)
	}
	if !strings.Contains(warn.String(), "warning: write --dotenv-file") {
		t.Errorf("no warning: %q", warn.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "junit.xml")); err != nil {
		t.Errorf("the JUnit report was not written: %v", err)
	}
	files.gitlabDefaults = nil
	warn.Reset()
	if err := files.write(run, "", &warn); err == nil || !strings.Contains(err.Error(), "write --dotenv-file") {
		t.Errorf("a named file that cannot be written: %v, want an error", err)
	}
}

// TestGitLabDefaultFilesFollowNoLink: the default report files of a GitLab job are written in
// the project's clone, where a repository can commit anything. A committed symbolic link in
// place of the summary, to an executable of the repository, is not written through: a
// warning says why, and the executable is unchanged. An executable file committed in place of
// the JUnit report is replaced by the report, which does not keep its mode.
func TestGitLabDefaultFilesFollowNoLink(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	kubeconfig := "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: \"https://127.0.0.1:1\"}}]\n" +
		"users: [{name: u, user: {token: gitlab-token-0123456789}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n"
	const script = "#!/bin/sh\necho deploying\n"
	for name, data := range map[string]string{"kubeconfig": kubeconfig, "deploy.sh": script, gitlabJUnitFile: script} {
		if err := os.WriteFile(name, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"deploy.sh", gitlabJUnitFile} {
		if err := os.Chmod(name, 0o755); err != nil { //nolint:gosec // an executable, as a repository commits one
			t.Fatal(err)
		}
	}
	if err := os.Symlink("deploy.sh", gitlabSummaryFile); err != nil {
		t.Fatal(err)
	}
	f := newFakeEnv(t, map[string]string{"GITLAB_CI": "true"})
	delete(f.vars, "GITHUB_ACTIONS")
	code := Run(context.Background(), []string{"verify", "--kubeconfig", "kubeconfig", "--resource", "ks/app", "--timeout", "5s", "--quiet"}, f.env())
	if code != 1 {
		t.Errorf("exit %d, want 1 (the cluster is unreachable; a default file is a warning)\n%s", code, f.stderr.String())
	}
	if !strings.Contains(f.stderr.String(), "warning: write --summary-file: write "+gitlabSummaryFile+": it is a symbolic link, and a report file the program names itself is never written through one") {
		t.Errorf("no warning that the summary's path is a link:\n%s", f.stderr.String())
	}
	fi, err := os.Stat("deploy.sh")
	if err != nil {
		t.Fatal(err)
	}
	if got := f.file(t, "deploy.sh"); got != script || fi.Mode().Perm() != 0o755 {
		t.Errorf("the link's target is now %q, mode %v; want it unchanged", got, fi.Mode().Perm())
	}
	fi, err = os.Lstat(gitlabJUnitFile)
	if err != nil {
		t.Fatal(err)
	}
	if junit := f.file(t, gitlabJUnitFile); !strings.Contains(junit, "<testsuites") || fi.Mode().Perm()&0o111 != 0 {
		t.Errorf("%s: mode %v, holding %q; want the JUnit report, not executable", gitlabJUnitFile, fi.Mode().Perm(), junit)
	}
	if vars := parseDotenv(t, f.file(t, gitlabDotenvFile)); vars["APP_STATUS"] != "failure" {
		t.Errorf("dotenv report: %v", vars)
	}
}

// TestGitLabAgentContextsNamedTwice: in a GitLab job whose $KUBECONFIG holds two agents of one
// name, the run is bad input whose message in the log says how to name them in the component's
// clusters input; no cluster is contacted.
func TestGitLabAgentContextsNamedTwice(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	kubeconfig := "apiVersion: v1\nkind: Config\nclusters: [{name: gitlab, cluster: {server: \"https://127.0.0.1:1\"}}]\n" +
		"users: [{name: \"agent:1\", user: {token: \"ci:1:job-token-0123456789\"}}, {name: \"agent:2\", user: {token: \"ci:2:job-token-0123456789\"}}]\n" +
		"contexts: [{name: \"mygroup/agent-config:prod\", context: {cluster: gitlab, user: \"agent:1\"}}, {name: \"other/agents:prod\", context: {cluster: gitlab, user: \"agent:2\"}}]\n"
	if err := os.WriteFile("KUBECONFIG", []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	f := newFakeEnv(t, map[string]string{"GITLAB_CI": "true", "KUBECONFIG": filepath.Join(dir, "KUBECONFIG")})
	delete(f.vars, "GITHUB_ACTIONS")
	// The component passes --all-contexts when its clusters input is empty.
	code := Run(context.Background(), []string{"verify", "--resource", "ks/app", "--timeout", "5s", "--quiet", "--all-contexts"}, f.env())
	if code != 2 {
		t.Errorf("exit %d, want 2 (bad input)\n%s", code, f.stderr.String())
	}
	const want = `both name the cluster "prod" (a GitLab agent's context, PROJECT:AGENT, is named after its agent): name them in the clusters input of the GitLab component, a NAME=context:CONTEXT line each, e.g. prod-1=context:mygroup/agent-config:prod and prod-2=context:other/agents:prod`
	if !strings.Contains(f.stderr.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, f.stderr.String())
	}
	// The message quotes the contexts, so the summary only points at the log; it blames no flag.
	if summary := f.file(t, filepath.Join(dir, gitlabSummaryFile)); !strings.Contains(summary, "**Bad input:** bad input: the step's log says") {
		t.Errorf("the summary does not point at the log, or blames a flag:\n%s", summary)
	}
	if vars := parseDotenv(t, f.file(t, filepath.Join(dir, gitlabDotenvFile))); vars["APP_STATUS"] != "failure" || vars["APP_STATUS_READY_COUNT"] != "0" {
		t.Errorf("dotenv report: %v", vars)
	}
	if strings.Contains(f.stderr.String(), "job-token") {
		t.Errorf("the token was printed:\n%s", f.stderr.String())
	}
}
