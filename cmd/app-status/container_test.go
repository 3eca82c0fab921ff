package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/testing/fakegithub"
	"github.com/org/app-status-action/internal/testing/testbed"
)

// The action's image, run the way the GitHub runner runs a container action
// (actions/runner v2.331 and later, ContainerActionHandler and DockerCommandManager.DockerRun):
//
//	docker run --name NAME --label LABEL --workdir /github/workspace --rm
//	  -e INPUT_MAX-PARALLEL -e HOME -e GITHUB_OUTPUT ... -e GITHUB_ACTIONS=true -e CI=true
//	  -v /var/run/docker.sock:/var/run/docker.sock
//	  -v $RUNNER_TEMP:/github/runner_temp
//	  -v $RUNNER_TEMP/_github_home:/github/home
//	  -v $RUNNER_TEMP/_github_workflow:/github/workflow
//	  -v $RUNNER_TEMP/_runner_file_commands:/github/file_commands
//	  -v $GITHUB_WORKSPACE:/github/workspace
//	  IMAGE action
//
// Every input action.yml declares is set, with its default when the step does not give it, as
// INPUT_<NAME> upper-cased with dashes kept; values are passed as `-e NAME` with the value in
// the engine's environment, never on its command line. Every value of the environment that is
// a host path in a mounted folder is rewritten to the container's path, the innermost mount
// first (RUNNER_TEMP=/github/runner_temp, GITHUB_OUTPUT=/github/file_commands/set_output_<uuid>;
// RUNNER_WORKSPACE, the job's folder, is in no mount and keeps its host path). The docker
// socket is not mounted (the action does not use it, and this machine runs podman).

// runnerToken is the job's token (github.token) in the runner's environment.
const runnerToken = "ghs_jobtokenfortests0000000000000000"

// runnerStep is one container-action step laid out on the host as the runner lays it out in
// its work folder (_work): _work/_temp is RUNNER_TEMP, _work/<repo> the job's folder
// (RUNNER_WORKSPACE) and _work/<repo>/<repo> the workspace.
type runnerStep struct {
	root                 string // the runner's work folder
	temp                 string // RUNNER_TEMP on the host
	workspace            string // GITHUB_WORKSPACE on the host
	outFile, summaryFile string // GITHUB_OUTPUT and GITHUB_STEP_SUMMARY on the host
	env                  map[string]string
	mounts               []mount
}

// mount is a folder of the host mounted into the container.
type mount struct{ host, container string }

// newRunnerStep makes the runner's folders and the step's environment as the action sees it:
// the GITHUB_* and RUNNER_* variables, every input of action.yml, and the step's env:, their
// host paths rewritten to the container's.
func newRunnerStep(t *testing.T, inputs, stepEnv map[string]string) *runnerStep {
	t.Helper()
	root := t.TempDir()
	s := &runnerStep{
		root:      root,
		temp:      filepath.Join(root, "_temp"),
		workspace: filepath.Join(root, "deploy", "deploy"),
	}
	home := filepath.Join(s.temp, "_github_home")
	workflow := filepath.Join(s.temp, "_github_workflow")
	fileCommands := filepath.Join(s.temp, "_runner_file_commands")
	for _, dir := range []string{s.workspace, home, workflow, fileCommands} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The runner's mounts, in the order it translates paths: the last added first.
	s.mounts = []mount{
		{s.workspace, "/github/workspace"},
		{fileCommands, "/github/file_commands"},
		{workflow, "/github/workflow"},
		{home, "/github/home"},
		{s.temp, "/github/runner_temp"},
	}
	if err := os.WriteFile(filepath.Join(workflow, "event.json"), []byte(`{"ref":"refs/heads/main"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	// The runner creates the file-command files, empty, before the step, one set per step.
	files := map[string]string{}
	for _, name := range []string{"set_output", "step_summary", "set_env", "add_path", "save_state"} {
		files[name] = filepath.Join(fileCommands, name+"_"+uuid(t))
		if err := os.WriteFile(files[name], nil, 0o666); err != nil {
			t.Fatal(err)
		}
	}
	s.outFile, s.summaryFile = files["set_output"], files["step_summary"]

	hostEnv := map[string]string{
		"HOME":                home,
		"GITHUB_WORKSPACE":    s.workspace,
		"RUNNER_TEMP":         s.temp,
		"RUNNER_WORKSPACE":    filepath.Dir(s.workspace),
		"GITHUB_OUTPUT":       files["set_output"],
		"GITHUB_STEP_SUMMARY": files["step_summary"],
		"GITHUB_ENV":          files["set_env"],
		"GITHUB_PATH":         files["add_path"],
		"GITHUB_STATE":        files["save_state"],
		"GITHUB_EVENT_PATH":   filepath.Join(workflow, "event.json"),
		"GITHUB_EVENT_NAME":   "push",
		"GITHUB_ACTION":       "verify",
		"GITHUB_ACTION_REF":   "v1",
		"GITHUB_REPOSITORY":   "example/deploy",
		"GITHUB_SHA":          commit,
		"GITHUB_REF":          "refs/heads/main",
		"GITHUB_RUN_ID":       "4242",
		"GITHUB_SERVER_URL":   "https://github.com",
		"GITHUB_API_URL":      "https://api.github.com",
		"GITHUB_WORKFLOW":     "deploy",
		"GITHUB_JOB":          "deploy",
		"RUNNER_OS":           "Linux",
		"RUNNER_ARCH":         "X64",
	}
	a := readActionYML(t)
	for name, in := range a.Inputs {
		v, ok := inputs[name]
		if !ok {
			v = in.Default
		}
		if v == "${{ github.token }}" { // the runner evaluates the expression
			v = runnerToken
		}
		hostEnv["INPUT_"+strings.ToUpper(strings.ReplaceAll(name, " ", "_"))] = v
	}
	for name := range inputs {
		if _, ok := a.Inputs[name]; !ok {
			t.Fatalf("input %q is not declared in action.yml", name)
		}
	}
	maps.Copy(hostEnv, stepEnv)
	s.env = map[string]string{}
	for k, v := range hostEnv {
		s.env[k] = s.containerPath(v)
	}
	return s
}

// containerPath is the runner's TranslateToContainerPath: a host path in a mounted folder
// becomes the container's; any other value is kept.
func (s *runnerStep) containerPath(v string) string {
	for _, m := range s.mounts {
		if v == m.host {
			return m.container
		}
		if rest, ok := strings.CutPrefix(v, m.host+"/"); ok {
			return m.container + "/" + rest
		}
	}
	return v
}

// uuid returns a random UUID, as the runner names the file-command files.
func uuid(t *testing.T) string {
	t.Helper()
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// command returns the `podman run` of the step, through hack/podman.sh, and the container's
// name. The values of the environment reach podman in its own environment, as the runner
// gives them to docker; HOME, which podman reads for itself, is given on the command line.
func (s *runnerStep) command(image string, args []string) (*exec.Cmd, string) {
	name := fmt.Sprintf("app-status-e2e-%d-%s", os.Getpid(), filepath.Base(s.root))
	podmanArgs := []string{"run", "--name", name, "--label", "app-status-e2e", "--workdir", "/github/workspace", "--rm"}
	processEnv := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	for _, k := range slices.Sorted(maps.Keys(s.env)) {
		if k == "HOME" {
			podmanArgs = append(podmanArgs, "-e", "HOME="+s.env[k])
			continue
		}
		podmanArgs = append(podmanArgs, "-e", k)
		processEnv = append(processEnv, k+"="+s.env[k])
	}
	podmanArgs = append(podmanArgs, "-e", "GITHUB_ACTIONS=true", "-e", "CI=true")
	for _, m := range slices.Backward(s.mounts) { // in the order the runner adds them
		podmanArgs = append(podmanArgs, "-v", m.host+":"+m.container)
	}
	podmanArgs = append(podmanArgs, image)
	podmanArgs = append(podmanArgs, args...)
	cmd := exec.Command(podmanScript(), podmanArgs...)
	cmd.Env = processEnv
	return cmd, name
}

// repoFile is the absolute path of a file of the repository.
func repoFile(elem ...string) string {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		panic(err)
	}
	return filepath.Join(append([]string{root}, elem...)...)
}

func podmanScript() string { return repoFile("hack", "podman.sh") }

// actionYML is what the runner reads from action.yml to run the action.
type actionYML struct {
	Inputs map[string]struct {
		Default string `json:"default"`
	} `json:"inputs"`
	Runs struct {
		Using string   `json:"using"`
		Image string   `json:"image"`
		Args  []string `json:"args"`
	} `json:"runs"`
}

func readActionYML(t *testing.T) actionYML {
	t.Helper()
	data, err := os.ReadFile(repoFile("action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var a actionYML
	if err := yaml.Unmarshal(data, &a); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	if a.Runs.Using != "docker" {
		t.Fatalf("action.yml runs.using = %q, want docker", a.Runs.Using)
	}
	return a
}

// actionImage builds the action's image with hack/image/build.sh, what `make image` runs, once
// per test binary; builtImage is its tag once built, for removeImage.
var (
	actionImageOnce sync.Once
	builtImage      string
	actionImageErr  error
)

func actionImage() (string, error) {
	actionImageOnce.Do(func() {
		tag := fmt.Sprintf("localhost/app-status-action:e2e-%d", os.Getpid())
		cmd := exec.Command(repoFile("hack", "image", "build.sh"), "--version", "e2e", tag)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if _, err := cmd.Output(); err != nil {
			actionImageErr = fmt.Errorf("hack/image/build.sh %s: %w\n%s", tag, err, stderr.String())
			return
		}
		builtImage = tag
	})
	return builtImage, actionImageErr
}

// requireContainers skips the test, loudly, when podman or runc is not installed, unless
// APP_STATUS_REQUIRE_CONTAINERS is set (.ci/run sets it: there a missing engine fails).
func requireContainers(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"podman", "runc"} {
		if _, err := exec.LookPath(tool); err != nil {
			msg := fmt.Sprintf("%s is not installed: the action's image is NOT tested. Install podman and runc with hack/install-packages.sh (as root), or run .ci/run, which does.", tool)
			if os.Getenv("APP_STATUS_REQUIRE_CONTAINERS") != "" {
				t.Fatal(msg + " (APP_STATUS_REQUIRE_CONTAINERS is set)")
			}
			fmt.Fprintf(os.Stderr, "\n*** SKIP %s: %s\n\n", t.Name(), msg)
			t.Skip(msg)
		}
	}
}

// removeImage removes the image the tests built, if they built one.
func removeImage() {
	if builtImage != "" {
		_ = exec.Command(podmanScript(), "rmi", "--force", builtImage).Run()
	}
}

// runContainer runs the step's container to its end, or stops it with `podman stop` (SIGTERM,
// what cancelling the job does) once its log has shown stopWhen; took is then how long the
// container took to end after the stop.
func runContainer(t *testing.T, s *runnerStep, image, stopWhen string) (run actionRun, took time.Duration) {
	t.Helper()
	cmd, name := s.command(image, readActionYML(t).Runs.Args)
	stdout := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = stdout, stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ended := make(chan struct{})
	stopped := make(chan time.Time, 1)
	if stopWhen != "" {
		go func() {
			defer close(stopped)
			if !stdout.waitFor(stopWhen, ended) {
				return
			}
			stopped <- time.Now()
			if out, err := exec.Command(podmanScript(), "stop", "--time", "30", name).CombinedOutput(); err != nil {
				t.Errorf("podman stop %s: %v\n%s", name, err, out)
			}
		}()
	} else {
		close(stopped)
	}
	err := cmd.Wait()
	end := time.Now()
	close(ended)
	if at, ok := <-stopped; ok {
		took = end.Sub(at)
	} else if stopWhen != "" {
		t.Errorf("the container ended before it was stopped: its log never showed %q", stopWhen)
	}
	for range stopped { // wait for podman stop to return
	}
	return readRun(t, err, stdout.String(), s.outFile, s.summaryFile), took
}

// syncBuffer is a bytes.Buffer the test reads while the container writes to it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// waitFor waits until the buffer holds text, and reports true; or false once ended is closed
// without it (the process exited).
func (b *syncBuffer) waitFor(text string, ended <-chan struct{}) bool {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !strings.Contains(b.String(), text) {
		select {
		case <-ended:
			return strings.Contains(b.String(), text)
		case <-tick.C:
		}
	}
	return true
}

// TestActionImage runs the image `make image` builds exactly as the runner runs the action, on
// three clusters at once: kubeconfigs from a step env: variable (plain), another (base64) and a
// file: source relative to the workspace; the third cluster cannot pull its image. Then a
// cancelled job: `podman stop` while the action waits for a revision that never comes.
func TestActionImage(t *testing.T) {
	requireContainers(t)
	b := bed.Get(t)
	image, err := actionImage()
	if err != nil {
		t.Fatal(err)
	}

	t.Run("three clusters", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		ns := b.Namespace(t)
		for i, c := range b.Clusters {
			app := "web"
			if i == 2 {
				app = "web-broken"
			}
			if _, err := c.DeployApp(ctx, testbed.Kustomization{Name: ns, TargetNamespace: ns}, testbed.Testdata(t, "apps", app), commit); err != nil {
				t.Fatal(err)
			}
		}
		// GitHub's API, faked, for the deployments and the comment on the merged pull request.
		gh := fakegithub.Start(t, fakegithub.Options{Token: runnerToken, Owner: "example", Repo: "deploy", Pulls: map[string][]int{commit: {12}}})
		s := newRunnerStep(t, map[string]string{
			"clusters":     "alpha=env:KC_ALPHA\nbeta=env:KC_BETA\n# from the repository\ngamma=file:deploy/gamma.kubeconfig\n",
			"resource":     "kustomization/" + ns,
			"revision":     commit[:7],
			"timeout":      "2m",
			"max-parallel": "2",
			"deployments":  "true",
			"pr-comment":   "true",
		}, map[string]string{
			"KC_ALPHA":       string(b.Clusters[0].Kubeconfig),
			"KC_BETA":        base64.StdEncoding.EncodeToString(b.Clusters[1].Kubeconfig),
			"GITHUB_API_URL": strings.TrimSuffix(gh.URL, "/"),
		})
		if err := os.MkdirAll(filepath.Join(s.workspace, "deploy"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(s.workspace, "deploy", "gamma.kubeconfig"), b.Clusters[2].Kubeconfig, 0o600); err != nil {
			t.Fatal(err)
		}
		if s.env["INPUT_MAX-PARALLEL"] != "2" || s.env["INPUT_FAIL-FAST"] != "false" {
			t.Fatalf("inputs as the runner names them: INPUT_MAX-PARALLEL=%q INPUT_FAIL-FAST=%q", s.env["INPUT_MAX-PARALLEL"], s.env["INPUT_FAIL-FAST"])
		}

		run, _ := runContainer(t, s, image, "")

		if run.exitCode != 1 {
			t.Errorf("exit code = %d, want 1 (one cluster failed)\n%s", run.exitCode, run.stdout)
		}
		for k, v := range map[string]string{"status": "failure", "ready-clusters": `["alpha","beta"]`, "failed-clusters": `["gamma"]`} {
			if run.outputs[k] != v {
				t.Errorf("output %s = %q, want %q\n%s", k, run.outputs[k], v, run.stdout)
			}
		}
		var results []result.Cluster
		if err := json.Unmarshal([]byte(run.outputs["results"]), &results); err != nil {
			t.Fatalf("results output is not a JSON array of clusters: %v\n%s", err, run.outputs["results"])
		}
		validateAgainstSchema(t, run.outputs["results"], "#/$defs/results")
		validateAgainstSchema(t, run.outputs["report"], "")
		got := map[string]string{}
		for _, r := range results {
			got[r.Name] = string(r.Verdict) + "/" + string(r.Code)
		}
		if diff := cmp.Diff(map[string]string{"alpha": "Current/", "beta": "Current/", "gamma": "Failed/image-pull"}, got); diff != "" {
			t.Errorf("verdicts (-want +got):\n%s", diff)
		}
		if !strings.Contains(run.summary, "2 of 3 clusters ready") || !strings.Contains(run.summary, "image-pull") {
			t.Errorf("summary lacks the headline or the failure code:\n%s", run.summary)
		}
		if !strings.Contains(run.stdout, "::error title=gamma::") {
			t.Errorf("no error annotation for gamma in the log:\n%s", run.stdout)
		}
		assertMaskedFirst(t, run, kubeconfigSecrets(t, b.Clusters[0].Kubeconfig, b.Clusters[2].Kubeconfig))

		// One deployment per cluster of the workflow's commit, in_progress then its verdict,
		// and the fleet's table on the merged pull request.
		final := map[string]string{}
		for _, d := range gh.Deployments() {
			if d.SHA != commit || len(d.Statuses) < 2 || d.Statuses[0].State != "in_progress" {
				t.Errorf("deployment %s: sha %s, statuses %+v; want %s, in_progress first", d.Environment, d.SHA, d.Statuses, commit)
				continue
			}
			last := d.Statuses[len(d.Statuses)-1]
			final[d.Environment] = last.State + ": " + last.Description
			if last.LogURL != "https://github.com/example/deploy/actions/runs/4242" {
				t.Errorf("deployment %s: log_url %q, want the run's", d.Environment, last.LogURL)
			}
		}
		if diff := cmp.Diff(map[string]string{"alpha": "success: Current: 3 objects Current", "beta": "success: Current: 3 objects Current", "gamma": "failure: image-pull: Deployment/web"}, final); diff != "" {
			t.Errorf("deployment statuses (-want +got):\n%s", diff)
		}
		if c := gh.Comments(12); len(c) != 1 || !strings.Contains(c[0].Body, "| gamma | ❌ Failed | image-pull") || !strings.Contains(c[0].Body, "2 of 3 clusters ready") {
			t.Errorf("comments on the merged pull request: %+v, want one with the fleet's table, gamma failing", c)
		}
		for line := range strings.Lines(run.stdout) {
			if strings.Contains(line, runnerToken) && line != "::add-mask::"+runnerToken+"\n" {
				t.Errorf("the token was printed, not masked: %q", line)
			}
		}
		if strings.Contains(run.summary, "Not posted") {
			t.Errorf("something was not posted to GitHub:\n%s", run.summary)
		}

		// The full report is in the runner's temporary folder, named by its host path, where
		// the job's later steps read it, after the step's id and its clusters; nothing was
		// added to the workspace.
		if want := regexp.MustCompile("^" + regexp.QuoteMeta(filepath.Join(s.temp, "app-status-verify-")) + `[0-9a-f]{12}\.json$`); !want.MatchString(run.outputs["report-file"]) {
			t.Errorf("report-file = %q, want %s (the host's path, for the next steps)", run.outputs["report-file"], want)
		}
		if data, err := os.ReadFile(run.outputs["report-file"]); err != nil {
			t.Errorf("report-file: %v", err)
		} else if err := json.Unmarshal(data, &result.Run{}); err != nil {
			t.Errorf("report file is not the JSON report: %v", err)
		}
		var left []string
		_ = filepath.WalkDir(s.workspace, func(path string, _ os.DirEntry, _ error) error {
			left = append(left, strings.TrimPrefix(path, s.workspace))
			return nil
		})
		if diff := cmp.Diff([]string{"", "/deploy", "/deploy/gamma.kubeconfig"}, left); diff != "" {
			t.Errorf("the workspace changed (-want +got):\n%s", diff)
		}
	})

	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		ns := b.Namespace(t)
		c := b.Clusters[0]
		if _, err := c.DeployApp(ctx, testbed.Kustomization{Name: ns, TargetNamespace: ns}, testbed.Testdata(t, "apps", "web"), commit); err != nil {
			t.Fatal(err)
		}
		s := newRunnerStep(t, map[string]string{
			"clusters": "alpha=env:KUBECONFIG_ALPHA",
			"resource": "ks/" + ns,
			"revision": "deadbeefcafe",
			"timeout":  "5m",
		}, map[string]string{"KUBECONFIG_ALPHA": string(c.Kubeconfig)})

		// Stopped once it waits for the revision (Flux applied the app's own), as a job is
		// cancelled mid-wait.
		run, took := runContainer(t, s, image, "waiting for deadbee")

		if run.exitCode != 1 {
			t.Errorf("exit code = %d, want 1\n%s", run.exitCode, run.stdout)
		}
		if took == 0 || took > 20*time.Second {
			t.Errorf("the container took %s to end after podman stop (SIGTERM)", took)
		}
		if run.outputs["status"] != "failure" {
			t.Errorf("status output = %q, want failure\n%s", run.outputs["status"], run.stdout)
		}
		var results []result.Cluster
		if err := json.Unmarshal([]byte(run.outputs["results"]), &results); err != nil || len(results) != 1 {
			t.Fatalf("results output = %q (%v), want one cluster\n%s", run.outputs["results"], err, run.stdout)
		}
		if results[0].Verdict != result.VerdictCancelled || !strings.Contains(results[0].Message, "deadbee") {
			t.Errorf("verdict = %s (%q), want Cancelled saying what it waited for", results[0].Verdict, results[0].Message)
		}
		if !strings.Contains(run.summary, "Cancelled") {
			t.Errorf("summary does not show the cancellation:\n%s", run.summary)
		}
	})
}
