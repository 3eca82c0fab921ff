package cli

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/org/app-status-action/internal/result"
)

// TestTektonResultsFit: whatever the fleet, the results fit in the termination message Tekton
// carries them in (4,096 bytes, as its entrypoint encodes them: a JSON array of entries whose
// values are JSON strings, the step's StartedAt among them), with room to spare for Tekton's
// own entries, and the counts stay whole. Short names are the worst case: the quotes around
// each name are escaped, so they cost more than the name.
func TestTektonResultsFit(t *testing.T) {
	t.Parallel()
	type runResult struct {
		Key   string `json:"key"`
		Value string `json:"value"`
		Type  int    `json:"type"`
	}
	tests := []struct {
		name   string
		prefix string
		n      int
	}{
		{name: "long names", prefix: "a-cluster-with-a-long-name-in-a-big-fleet", n: 1000},
		{name: "short names", prefix: "c", n: 1000},
		{name: "one letter and digits", prefix: "", n: 10000},
		{name: "a few", prefix: "prod", n: 3},
		{name: "63 characters", prefix: strings.Repeat("x", 58), n: 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var clusters []result.Cluster
			clusterNames := names(tt.prefix, tt.n)
			if tt.prefix == "" {
				for i := range clusterNames {
					clusterNames[i] = strconv.Itoa(i)
				}
			}
			for _, n := range clusterNames {
				clusters = append(clusters, result.Cluster{Name: n, Verdict: result.VerdictUnreachable})
			}
			run := result.NewRun([]string{"Kustomization/flux-system/app"}, "", clusters, time.Hour)
			// The entrypoint's own entry (type 3, InternalTektonResultType) comes with the step's.
			message := []runResult{{Key: "StartedAt", Value: "2026-11-24T10:00:00.123456789Z", Type: 3}}
			got := map[string]string{}
			for _, r := range tektonResults(run) {
				message = append(message, runResult{Key: r[0], Value: r[1], Type: 1})
				got[r[0]] = r[1]
			}
			encoded, err := json.Marshal(message)
			if err != nil {
				t.Fatal(err)
			}
			if len(encoded) > 4096-400 {
				t.Errorf("the results take %d bytes of the termination message: over Tekton's 4,096 less 400 bytes kept for its own entries", len(encoded))
			}
			var failed []string
			if err := json.Unmarshal([]byte(got["failed-clusters"]), &failed); err != nil || len(failed) == 0 {
				t.Fatalf("failed-clusters %q: %v", got["failed-clusters"], err)
			}
			if diff := cmp.Diff(run.FailedClusters[:len(failed)], failed); diff != "" {
				t.Errorf("failed-clusters are not the first failed clusters (-want +got):\n%s", diff)
			}
			if tt.n > 100 && len(encoded) < 3000 {
				t.Errorf("a cut list takes %d bytes: room left unused", len(encoded))
			}
			if got["failed-count"] != strconv.Itoa(tt.n) || got["ready-count"] != "0" || got["status"] != "failure" {
				t.Errorf("results %v", got)
			}
		})
	}
}

// TestTektonRun: the arguments deploy/tekton/task.yaml gives, with a Secret's volume as the
// kubeconfigs workspace (one file per cluster, and the ..data entries Kubernetes adds): each
// result is a file, the report files are in the report workspace, written also when the args
// param holds a bad input or a report file cannot be written; the Task's last step then ends
// with verify's exit code.
func TestTektonRun(t *testing.T) {
	t.Parallel()
	kubeconfigs := t.TempDir()
	kubeconfig := "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: \"https://127.0.0.1:1\"}}]\n" +
		"users: [{name: u, user: {token: tekton-token-0123456789}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n"
	data := filepath.Join(kubeconfigs, "..2026_11_24_00_00_00.000000001")
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"prod-eu", "prod-us.yaml"} {
		if err := os.WriteFile(filepath.Join(data, name), []byte(kubeconfig), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join("..data", name), filepath.Join(kubeconfigs, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Base(data), filepath.Join(kubeconfigs, "..data")); err != nil {
		t.Fatal(err)
	}

	task := readTektonTask(t)
	tests := []struct {
		name string
		// args are the Task's args param; reports replaces the report workspace's path.
		args     []string
		reports  string
		timeout  string // the timeout param; 5s when empty
		wantCode int
		want     map[string]string
		// wantReports: the report workspace holds the three files.
		wantReports bool
		wantStderr  string
	}{
		{
			name: "failed rollout", args: []string{"--quiet"}, wantCode: 1, wantReports: true,
			want: map[string]string{"status": "failure", "ready-count": "0", "failed-count": "2", "failed-clusters": `["prod-eu","prod-us"]`, "duration": "N.Ns"},
		},
		{
			name: "bad input in the args param", args: []string{"--resource=pod/web"}, wantCode: 2, wantReports: true,
			want:       map[string]string{"status": "failure", "ready-count": "0", "failed-count": "0", "failed-clusters": `[]`, "duration": "N.Ns"},
			wantStderr: "pod/web",
		},
		{
			name: "unknown flag in the args param", args: []string{"--no-such-flag"}, wantCode: 2, wantReports: true,
			want:       map[string]string{"status": "failure", "ready-count": "0", "failed-count": "0", "failed-clusters": `[]`, "duration": "N.Ns"},
			wantStderr: "unknown flag: --no-such-flag",
		},
		{
			name: "timeout param in seconds", timeout: "5", args: []string{"--quiet"}, wantCode: 1, wantReports: true,
			want: map[string]string{"status": "failure", "ready-count": "0", "failed-count": "2", "failed-clusters": `["prod-eu","prod-us"]`, "duration": "N.Ns"},
		},
		{
			name: "timeout param out of range", timeout: "90000", wantCode: 2, wantReports: true,
			want:       map[string]string{"status": "failure", "ready-count": "0", "failed-count": "0", "failed-clusters": `[]`, "duration": "N.Ns"},
			wantStderr: `invalid argument "90000" for "--timeout" flag: 90000 seconds is out of range`,
		},
		{
			name: "secret given to the wrong flag", args: []string{"--max-parallel", "tekton-secret-0123456789"}, wantCode: 2, wantReports: true,
			want:       map[string]string{"status": "failure", "ready-count": "0", "failed-count": "0", "failed-clusters": `[]`, "duration": "N.Ns"},
			wantStderr: "-max-parallel",
		},
		{
			name: "secret as an argument", args: []string{"--quiet", "tekton-secret-0123456789"}, wantCode: 2, wantReports: true,
			want:       map[string]string{"status": "failure", "ready-count": "0", "failed-count": "0", "failed-clusters": `[]`, "duration": "N.Ns"},
			wantStderr: `KIND/NAME (# 2): resource "tekton-secret-0123456789": not KIND/NAME`,
		},
		{
			name: "report workspace not writable", args: []string{"--quiet"}, reports: filepath.Join(t.TempDir(), "missing"), wantCode: 1,
			want:       map[string]string{"status": "failure", "ready-count": "0", "failed-count": "2", "failed-clusters": `["prod-eu","prod-us"]`, "duration": "N.Ns"},
			wantStderr: "write --json-file",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			results, reports := t.TempDir(), cmpOr(tt.reports, t.TempDir())
			replace := strings.NewReplacer("$(workspaces.kubeconfigs.path)", kubeconfigs, "$(workspaces.report.path)", reports,
				"$(params.resource)", "ks/app", "$(params.namespace)", "flux-system", "$(params.revision)", "", "$(params.timeout)", cmpOr(tt.timeout, "5s"), "$(params.allow-exec)", "false",
				"/tekton/results", results)
			var args []string
			for _, a := range task.Spec.Steps[0].Args {
				if a == "$(params.args[*])" {
					args = append(args, tt.args...)
					continue
				}
				args = append(args, replace.Replace(a))
			}
			f := newFakeEnv(t, nil)
			delete(f.vars, "GITHUB_ACTIONS")
			code := Run(context.Background(), args, f.env())
			if code != tt.wantCode {
				t.Errorf("exit %d, want %d\n%s\n%s", code, tt.wantCode, f.stdout.String(), f.stderr.String())
			}
			// The last step, as Tekton runs it once verify, which continues on error, has
			// ended: its exit code in a file (as Tekton's entrypoint writes it), and the
			// TaskRun's end is that code.
			exitCodeFile := filepath.Join(t.TempDir(), "exitCode")
			if err := os.WriteFile(exitCodeFile, []byte(strconv.Itoa(code)), 0o644); err != nil {
				t.Fatal(err)
			}
			last := task.Spec.Steps[len(task.Spec.Steps)-1]
			var lastArgs []string
			for _, a := range last.Args {
				lastArgs = append(lastArgs, strings.ReplaceAll(a, "$(steps.step-verify.exitCode.path)", exitCodeFile))
			}
			lastEnv := newFakeEnv(t, nil)
			if got := Run(context.Background(), lastArgs, lastEnv.env()); got != tt.wantCode {
				t.Errorf("the Task's last step (%s) exits %d, want verify's %d\n%s", last.Name, got, tt.wantCode, lastEnv.stderr.String())
			}
			if !strings.Contains(f.stderr.String(), tt.wantStderr) {
				t.Errorf("stderr lacks %q:\n%s", tt.wantStderr, f.stderr.String())
			}
			got := map[string]string{}
			for _, r := range task.Spec.Results {
				got[r.Name] = f.file(t, filepath.Join(results, r.Name))
			}
			if regexp.MustCompile(`^[0-9]+\.[0-9]s$`).MatchString(got["duration"]) {
				got["duration"] = "N.Ns" // a time that moves
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("results (-want +got):\n%s", diff)
			}
			if tt.wantReports {
				var report result.Run
				if err := json.Unmarshal([]byte(f.file(t, filepath.Join(reports, "app-status.json"))), &report); err != nil || len(report.Results) != len(tt.want["failed-clusters"])/len(`"prod-eu",`) {
					t.Errorf("app-status.json: %v, %d results", err, len(report.Results))
				}
				for _, name := range []string{"app-status-junit.xml", "app-status-summary.md"} {
					if f.file(t, filepath.Join(reports, name)) == "" {
						t.Errorf("no %s in the report workspace", name)
					}
				}
				if tt.wantCode == 2 {
					summary := f.file(t, filepath.Join(reports, "app-status-summary.md"))
					junit := f.file(t, filepath.Join(reports, "app-status-junit.xml"))
					if !strings.Contains(summary, "**Bad input:**") || !strings.Contains(junit, `type="not-verified"`) {
						t.Errorf("the reports do not say the input was bad:\n%s\n%s", summary, junit)
					}
				}
			}
			if strings.Contains(f.stdout.String()+f.stderr.String(), "tekton-token-0123456789") {
				t.Errorf("the token was printed")
			}
			// What was typed stays in the step's log, out of the files more people read.
			for _, dir := range []string{results, reports} {
				entries, _ := os.ReadDir(dir)
				for _, e := range entries {
					if text := f.file(t, filepath.Join(dir, e.Name())); strings.Contains(text, "tekton-secret-0123456789") {
						t.Errorf("%s holds the value typed:\n%s", e.Name(), text)
					}
				}
			}
		})
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// TestKubeconfigDirBadName: a file that cannot name a cluster is a bad input, named.
func TestKubeconfigDirBadName(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "prod eu!"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	f := newFakeEnv(t, nil)
	delete(f.vars, "GITHUB_ACTIONS")
	code := Run(context.Background(), []string{"verify", "--kubeconfig-dir", dir, "--resource", "ks/app", "--quiet"}, f.env())
	if code != 2 || !strings.Contains(f.stderr.String(), `the file "prod eu!" cannot name a cluster`) {
		t.Errorf("exit %d, want 2 naming the file:\n%s", code, f.stderr.String())
	}
}

// tektonTask is what the tests read of deploy/tekton/task.yaml (hack/tekton validates it with
// Tekton's own code).
type tektonTask struct {
	Spec struct {
		Results []struct {
			Name string `json:"name"`
		} `json:"results"`
		Steps []struct {
			Name string   `json:"name"`
			Args []string `json:"args"`
		} `json:"steps"`
	} `json:"spec"`
}

func readTektonTask(t *testing.T) tektonTask {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "deploy", "tekton", "task.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var task tektonTask
	if err := yaml.Unmarshal(data, &task); err != nil || len(task.Spec.Steps) != 2 {
		t.Fatalf("deploy/tekton/task.yaml: %v", err)
	}
	return task
}

// TestFlagErrorWithoutValue: the report files say which flag was wrong without what was typed
// (a secret pasted into the wrong flag), naming only flags that exist or look like a flag.
func TestFlagErrorWithoutValue(t *testing.T) {
	t.Parallel()
	const secret = "ghp_s3cretS3cretS3cret0123456789abcdef"
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--max-parallel", secret}, "invalid value for flag --max-parallel (the step's log has the error)"},
		{[]string{"--timeout=" + secret}, "invalid value for flag --timeout (the step's log has the error)"},
		{[]string{"--timeout=90000"}, "invalid value for flag --timeout (the step's log has the error)"},
		{[]string{"--never-ready-grace", secret + " for flag -x: "}, "invalid value for flag --never-ready-grace (the step's log has the error)"},
		{[]string{"--fail-fast=" + secret}, "invalid value for flag --fail-fast (the step's log has the error)"},
		{[]string{"--shard", secret}, "invalid value for flag --shard (the step's log has the error)"},
		{[]string{"--no-such-flag"}, "a flag that is not defined (the step's log names it)"},
		{[]string{"-" + secret}, "a flag that is not defined (the step's log names it)"},
		{[]string{"--" + secret + "=x"}, "a flag that is not defined (the step's log names it)"},
		{[]string{"--timeout"}, "flag needs an argument: --timeout"},
		{[]string{"-=" + secret}, "a flag that is not defined (the step's log names it)"},
		{[]string{"---" + secret}, "bad flag syntax: an argument of dashes alone, or starting with -="},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			t.Parallel()
			var o cliOptions
			fs := newFlagSet("verify", &o)
			fs.SetOutput(io.Discard)
			err := fs.Parse(tt.args)
			if err == nil {
				t.Fatal("parsed")
			}
			got := flagErrorWithoutValue(fs, err)
			if got != tt.want || strings.Contains(got, secret) {
				t.Errorf("%v: got %q, want %q", err, got, tt.want)
			}
		})
	}
}

// TestBadInputKeepsTypedValuesOutOfReports: whatever flag a secret is given to, the report
// files (summary, JUnit, JSON, dotenv, Tekton results) name the flag, never the value; the log
// (stderr) keeps the whole error.
func TestBadInputKeepsTypedValuesOutOfReports(t *testing.T) {
	t.Parallel()
	const secret = "S3cretTok3nValue0123456789"
	tests := []struct {
		args []string
		// wantReported is in the summary.
		wantReported string
	}{
		{[]string{"--resource", "ks/app", "-o", secret}, "bad input in -o"},
		{[]string{"--resource", "ks/app", "--revision", secret}, "bad input in --revision"},
		{[]string{"--resource", "ks/" + secret + "/x/y"}, "bad input in --resource"},
		{[]string{"--resource", "ks/app", "--kubeconfig", "apiVersion: v1\nusers: [{user: {token: " + secret + "}}]"}, "bad input in --kubeconfig"},
		{[]string{"--resource", "ks/app", "--clusters-file", "/nonexistent/" + secret}, "bad input in --clusters-file"},
		{[]string{"--resource", "ks/app", "--kubeconfig-dir", "/nonexistent/" + secret}, "bad input in --kubeconfig-dir"},
		{[]string{"--resource", "ks/app", "--context", secret, "--kubeconfig", "/nonexistent"}, "bad input in --kubeconfig"},
		{[]string{"--resource", "ks/app", "--revision", secret, "--nope"}, "a flag that is not defined"},
		{[]string{"--resource", "ks/app", "-" + secret}, "a flag that is not defined"},
		{[]string{"--resource", "ks/app", "--max-parallel", "0"}, "--max-parallel 0 is out of range"},
		{[]string{"--resource", "ks/app", "--kubeconfig", "./" + secret}, "bad input in --kubeconfig"},
		{[]string{"--resource", "ks/app", "--kubeconfig", "~/" + secret}, "bad input in --kubeconfig"},
		{[]string{"--resource", "ks/app", "--kubeconfig", "YXBpVmVyc2lvbjogdjEK//" + secret + "//"}, "bad input in --kubeconfig"},
		{[]string{"--resource", "ks/app", "kubeconfig-in-env"}, "bad input"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			files := map[string]string{"--summary-file": "s.md", "--junit-file": "j.xml", "--json-file": "r.json", "--dotenv-file": "d.env"}
			args := []string{"verify", "--quiet", "--tekton-results", dir}
			for flag, name := range files {
				args = append(args, flag, filepath.Join(dir, name))
			}
			f := newFakeEnv(t, nil)
			delete(f.vars, "GITHUB_ACTIONS")
			if tt.args[len(tt.args)-1] == "kubeconfig-in-env" {
				// A GitLab variable of type variable, not file: the kubeconfig's content
				// where its path should be.
				tt.args = tt.args[:len(tt.args)-1]
				f.vars["KUBECONFIG"] = "YXBpVmVyc2lvbjogdjEK//" + secret
			}
			if code := Run(context.Background(), append(args, tt.args...), f.env()); code != 2 {
				t.Fatalf("exit %d, want 2\n%s", code, f.stderr.String())
			}
			entries, err := os.ReadDir(dir)
			if err != nil || len(entries) < len(files) {
				t.Fatalf("%d report files (%v)", len(entries), err)
			}
			for _, e := range entries {
				if text := f.file(t, filepath.Join(dir, e.Name())); strings.Contains(text, secret) {
					t.Errorf("%s holds the value typed:\n%s", e.Name(), text)
				}
			}
			if summary := f.file(t, filepath.Join(dir, "s.md")); !strings.Contains(strings.ReplaceAll(summary, `\`, ""), tt.wantReported) {
				t.Errorf("the summary does not say %q:\n%s", tt.wantReported, summary)
			}
		})
	}
}

// TestActionBadInputKeepsInputsOutOfReports: the action's report file and outputs, which an
// artifact upload carries further than the log, do not repeat a bad input's value; the log and
// the job summary (both masked by GitHub) give the whole error.
func TestActionBadInputKeepsInputsOutOfReports(t *testing.T) {
	t.Parallel()
	const secret = "S3cretTok3nValue0123456789"
	f := newFakeEnv(t, map[string]string{"INPUT_KUBECONFIG": tokenKubeconfig, "INPUT_RESOURCE": "ks/app", "INPUT_TIMEOUT": secret, "RUNNER_TEMP": t.TempDir()})
	if code := Run(context.Background(), []string{"action"}, f.env()); code == 0 {
		t.Fatalf("a bad input passed")
	}
	outputs := f.file(t, f.output)
	if strings.Contains(outputs, secret) || !strings.Contains(outputs, "bad input in input timeout") {
		t.Errorf("the outputs repeat the value, or do not name the input:\n%s", outputs)
	}
	entries, _ := os.ReadDir(f.vars["RUNNER_TEMP"])
	for _, e := range entries {
		if text := f.file(t, filepath.Join(f.vars["RUNNER_TEMP"], e.Name())); strings.Contains(text, secret) {
			t.Errorf("%s holds the value typed", e.Name())
		}
	}
	if !strings.Contains(f.file(t, f.summary), "input timeout") {
		t.Errorf("the summary does not name the input:\n%s", f.file(t, f.summary))
	}
}

// TestTektonExit: `app-status exit FILE`, the Task's last step, ends with the exit code the
// file holds; a file that holds none (a step ended by a signal: -1) or cannot be read fails.
func TestTektonExit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		content  *string // nil: no file
		args     []string
		wantCode int
		wantErr  string
	}{
		{name: "success", content: ptr("0"), wantCode: 0},
		{name: "failure", content: ptr("1"), wantCode: 1, wantErr: "the verify step exited with 1"},
		{name: "bad input, a newline after it", content: ptr("2\n"), wantCode: 2, wantErr: "exited with 2"},
		{name: "ended by a signal", content: ptr("-1"), wantCode: 1, wantErr: "holds no exit code"},
		{name: "not a number", content: ptr("::error::x"), wantCode: 1, wantErr: "holds no exit code"},
		{name: "out of range", content: ptr("256"), wantCode: 1, wantErr: "holds no exit code"},
		{name: "no file", wantCode: 1, wantErr: "the verify step's exit code"},
		{name: "no argument", args: []string{}, wantCode: 2, wantErr: "app-status exit: give one FILE, the exit code file of the Tekton Task's verify step, not 0 arguments\nSee 'app-status exit --help' for usage.\n"},
		{name: "two arguments", args: []string{"a", "b"}, wantCode: 2, wantErr: "not 2 arguments\nSee 'app-status exit --help' for usage.\n"},
		{name: "a flag", args: []string{"--code", "1"}, wantCode: 2, wantErr: "app-status exit: unknown flag: --code\nSee 'app-status exit --help' for usage.\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			file := filepath.Join(t.TempDir(), "exitCode")
			if tt.content != nil {
				if err := os.WriteFile(file, []byte(*tt.content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			args := tt.args
			if args == nil {
				args = []string{file}
			}
			f := newFakeEnv(t, nil)
			if got := Run(context.Background(), append([]string{"exit"}, args...), f.env()); got != tt.wantCode {
				t.Errorf("app-status exit = %d, want %d\n%s", got, tt.wantCode, f.stderr.String())
			}
			if tt.wantErr == "" && f.stderr.Len() > 0 || !strings.Contains(f.stderr.String(), tt.wantErr) {
				t.Errorf("stderr %q, want %q", f.stderr.String(), tt.wantErr)
			}
			if strings.Contains(f.stderr.String(), "::error") {
				t.Errorf("the file's content reached the log: %q", f.stderr.String())
			}
		})
	}
}

func ptr(s string) *string { return &s }
