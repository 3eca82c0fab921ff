package main

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"

	"github.com/org/app-status-action/internal/testing/testbed"
)

// junitReport is what the test reads of a JUnit report.
type junitReport struct {
	Suites []struct {
		Cases []struct {
			Name      string `xml:"name,attr"`
			Classname string `xml:"classname,attr"`
			Failure   *struct {
				Type string `xml:"type,attr"`
			} `xml:"failure"`
			Error *struct{} `xml:"error"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

// gitlabCILocal installs (once, cached) and returns gitlab-ci-local, the GitLab CI/CD emulator.
func gitlabCILocal(t *testing.T) string {
	t.Helper()
	out, err := exec.Command(repoFile("hack", "gitlab-ci-local", "install.sh")).Output()
	if err != nil {
		var stderr []byte
		if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
			stderr = ee.Stderr
		}
		t.Fatalf("hack/gitlab-ci-local/install.sh: %v\n%s", err, stderr)
	}
	return strings.TrimSpace(string(out))
}

// TestGitLabComponent runs templates/app-status.yml in a GitLab pipeline emulated by
// gitlab-ci-local (its shell executor, the binary on PATH as the image has it) against three
// clusters of the test bed, one of them unable to pull its image. Two clusters come from CI/CD
// variables of type File and one from a variable of type Variable; the revision is the input's
// default, the pipeline's commit. The job fails; its JUnit report has a test case per cluster
// with the broken one failed as image-pull; its dotenv report reaches the next job.
func TestGitLabComponent(t *testing.T) {
	glcl := gitlabCILocal(t)
	b := bed.Get(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	ns := b.Namespace(t)
	names := []string{"alpha", "beta", "gamma"}
	variables := map[string]any{
		"KC_ALPHA": map[string]any{"type": "file", "values": map[string]string{"*": string(b.Clusters[0].Kubeconfig)}},
		"KC_BETA":  map[string]any{"type": "variable", "values": map[string]string{"*": string(b.Clusters[1].Kubeconfig)}},
		"KC_GAMMA": map[string]any{"type": "file", "values": map[string]string{"*": string(b.Clusters[2].Kubeconfig)}},
	}
	pipeline := `stages: [deploy, report]
include:
  - local: templates/app-status.yml
    inputs:
      image: app-status@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
      resource: kustomization/` + ns + `
      clusters: |
        alpha=file:$KC_ALPHA
        beta=env:KC_BETA
        gamma=file:$KC_GAMMA
      timeout: 2m
report:
  stage: report
  when: always
  needs: [{job: app-status, artifacts: true}]
  script:
    - echo "status=$APP_STATUS failed=$APP_STATUS_FAILED ready=$APP_STATUS_READY counts=$APP_STATUS_READY_COUNT/$APP_STATUS_FAILED_COUNT truncated=$APP_STATUS_TRUNCATED"
`
	project, sha := newGitLabProject(ctx, t, pipeline, variables)

	// The pipeline's commit is what Flux applied: the input's default revision must match it.
	for i, c := range b.Clusters {
		app := "web"
		if names[i] == "gamma" {
			app = "web-broken"
		}
		if _, err := c.DeployApp(ctx, testbed.Kustomization{Name: ns, TargetNamespace: ns}, testbed.Testdata(t, "apps", app), sha); err != nil {
			t.Fatal(err)
		}
	}

	log, err := runGitLabCILocal(ctx, glcl, project)
	if ee := (*exec.ExitError)(nil); !errors.As(err, &ee) || ee.ExitCode() == 0 {
		t.Fatalf("gitlab-ci-local: %v, want the pipeline to fail\n%s", err, log)
	}
	for _, want := range []string{
		" FAIL  app-status",
		" PASS  report",
		`status=failure failed=["gamma"] ready=["alpha","beta"] counts=2/1 truncated=false`,
	} {
		if !strings.Contains(log, want) {
			t.Errorf("no %q in the pipeline's log:\n%s", want, log)
		}
	}
	for i, c := range b.Clusters {
		for _, secret := range kubeconfigSecrets(t, c.Kubeconfig) {
			if strings.Contains(log, secret) {
				t.Errorf("the log shows a secret of %s's kubeconfig", names[i])
			}
		}
	}

	artifacts := filepath.Join(project, ".gitlab-ci-local", "artifacts", "app-status")
	dotenv, err := os.ReadFile(filepath.Join(artifacts, ".gitlab-ci-reports", "dotenv", "app-status.env"))
	if err != nil {
		t.Fatalf("no dotenv report: %v", err)
	}
	if len(dotenv) >= 5<<10 || strings.Contains(string(dotenv), "\n\n") {
		t.Errorf("dotenv report GitLab would refuse:\n%s", dotenv)
	}
	data, err := os.ReadFile(filepath.Join(artifacts, "app-status-junit.xml"))
	if err != nil {
		t.Fatalf("no JUnit report among the artifacts: %v", err)
	}
	var junit junitReport
	if err := xml.Unmarshal(data, &junit); err != nil {
		t.Fatalf("JUnit report: %v\n%s", err, data)
	}
	got := map[string]string{}
	for _, s := range junit.Suites {
		for _, c := range s.Cases {
			verdict := "passed"
			switch {
			case c.Failure != nil:
				verdict = "failure " + c.Failure.Type
			case c.Error != nil:
				verdict = "error"
			}
			got[c.Classname+" | "+c.Name] = verdict
		}
	}
	want := map[string]string{
		"alpha | alpha: Kustomization/flux-system/" + ns: "passed",
		"beta | beta: Kustomization/flux-system/" + ns:   "passed",
		"gamma | gamma: Kustomization/flux-system/" + ns: "failure image-pull",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("JUnit test cases (-want +got):\n%s", diff)
	}
	summary, err := os.ReadFile(filepath.Join(artifacts, "app-status-summary.md"))
	if err != nil || !strings.Contains(string(summary), "2 of 3 clusters ready") {
		t.Errorf("summary artifact (%v):\n%s", err, summary)
	}
}

// TestGitLabAgentContexts runs the component with its default clusters input (empty) in a
// pipeline whose $KUBECONFIG is the GitLab agent's: a File variable holding one context per
// agent, named PROJECT:AGENT, and no current-context. Each of the test bed's three clusters is
// an agent's; every context is verified, each cluster named after its agent, and the job passes.
func TestGitLabAgentContexts(t *testing.T) {
	glcl := gitlabCILocal(t)
	b := bed.Get(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	contexts := []string{"mygroup/agent-config:alpha", "mygroup/agent-config:beta", "platform/fleet/agents:gamma"}
	agents := clientcmdapi.NewConfig()
	for i, c := range b.Clusters {
		kc, err := clientcmd.Load(c.Kubeconfig)
		if err != nil {
			t.Fatal(err)
		}
		current := kc.Contexts[kc.CurrentContext]
		if current == nil {
			t.Fatalf("the test bed's kubeconfig %d has no current-context", i)
		}
		user := fmt.Sprintf("agent:%d", i+1)
		agents.Clusters[user] = kc.Clusters[current.Cluster]
		agents.AuthInfos[user] = kc.AuthInfos[current.AuthInfo]
		agents.Contexts[contexts[i]] = &clientcmdapi.Context{Cluster: user, AuthInfo: user}
	}
	kubeconfig, err := clientcmd.Write(*agents)
	if err != nil {
		t.Fatal(err)
	}
	ns := b.Namespace(t)
	pipeline := `stages: [deploy, report]
include:
  - local: templates/app-status.yml
    inputs:
      image: app-status@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
      resource: kustomization/` + ns + `
      timeout: 2m
report:
  stage: report
  needs: [{job: app-status, artifacts: true}]
  script:
    - echo "status=$APP_STATUS failed=$APP_STATUS_FAILED ready=$APP_STATUS_READY"
`
	project, sha := newGitLabProject(ctx, t, pipeline, map[string]any{
		"KUBECONFIG": map[string]any{"type": "file", "values": map[string]string{"*": string(kubeconfig)}},
	})
	for _, c := range b.Clusters {
		if _, err := c.DeployApp(ctx, testbed.Kustomization{Name: ns, TargetNamespace: ns}, testbed.Testdata(t, "apps", "web"), sha); err != nil {
			t.Fatal(err)
		}
	}

	log, err := runGitLabCILocal(ctx, glcl, project)
	if err != nil {
		t.Fatalf("gitlab-ci-local: %v, want the pipeline to pass\n%s", err, log)
	}
	for _, want := range []string{
		" PASS  app-status",
		" PASS  report",
		`status=success failed=[] ready=["alpha","beta","gamma"]`,
	} {
		if !strings.Contains(log, want) {
			t.Errorf("no %q in the pipeline's log:\n%s", want, log)
		}
	}
	for _, secret := range kubeconfigSecrets(t, kubeconfig) {
		if strings.Contains(log, secret) {
			t.Error("the log shows a secret of the agent's kubeconfig")
		}
	}
	data, err := os.ReadFile(filepath.Join(project, ".gitlab-ci-local", "artifacts", "app-status", "app-status-junit.xml"))
	if err != nil {
		t.Fatalf("no JUnit report among the artifacts: %v", err)
	}
	var junit junitReport
	if err := xml.Unmarshal(data, &junit); err != nil {
		t.Fatalf("JUnit report: %v\n%s", err, data)
	}
	var got []string
	for _, s := range junit.Suites {
		for _, c := range s.Cases {
			got = append(got, c.Classname)
		}
	}
	slices.Sort(got)
	if diff := cmp.Diff([]string{"alpha", "beta", "gamma"}, got); diff != "" {
		t.Errorf("JUnit test cases' clusters (-want +got):\n%s", diff)
	}
}

// newGitLabProject is a GitLab project for gitlab-ci-local in a temporary folder, committed: the
// component's template as templates/app-status.yml, the pipeline as .gitlab-ci.yml and the
// CI/CD variables (gitlab-ci-local's format: name to {type, values}). It returns the folder
// and the commit, the pipeline's CI_COMMIT_SHA.
func newGitLabProject(ctx context.Context, t *testing.T, pipeline string, variables map[string]any) (project, sha string) {
	t.Helper()
	project = t.TempDir()
	if err := os.MkdirAll(filepath.Join(project, "templates"), 0o755); err != nil {
		t.Fatal(err)
	}
	template, err := os.ReadFile(repoFile("templates", "app-status.yml"))
	if err != nil {
		t.Fatal(err)
	}
	variablesYAML, err := json.Marshal(variables) // YAML is a superset of JSON
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		"templates/app-status.yml":       template,
		".gitlab-ci.yml":                 []byte(pipeline),
		".gitlab-ci-local-variables.yml": variablesYAML,
		".gitignore":                     []byte(".gitlab-ci-local*\n"),
	} {
		if err := os.WriteFile(filepath.Join(project, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	git := func(args ...string) string {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = project
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q", "-b", "main")
	git("add", "templates", ".gitlab-ci.yml", ".gitignore")
	git("commit", "-q", "-m", "pipeline")
	return project, git("rev-parse", "HEAD")
}

// runGitLabCILocal runs the project's pipeline with gitlab-ci-local's shell executor, the
// binary under test on PATH as the image has it, and returns its log.
func runGitLabCILocal(ctx context.Context, glcl, project string) (string, error) {
	cmd := exec.CommandContext(ctx, glcl, "--force-shell-executor", "--no-color")
	cmd.Dir = project
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(binary)+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// gitlabJob is what the tests read of the component's job.
type gitlabJob struct {
	Variables map[string]string `json:"variables"`
	Script    []string          `json:"script"`
}

// templateJob reads the job of templates/app-status.yml.
func templateJob(t *testing.T) gitlabJob {
	t.Helper()
	data, err := os.ReadFile(repoFile("templates", "app-status.yml"))
	if err != nil {
		t.Fatal(err)
	}
	_, body, _ := strings.Cut(string(data), "\n---\n")
	var jobs map[string]gitlabJob
	if err := yaml.Unmarshal([]byte(body), &jobs); err != nil {
		t.Fatal(err)
	}
	return jobs["$[[ inputs.job-name ]]"]
}

// TestGitLabScriptFollowsNoLink (attacker): the component's job script, run by a shell in a
// clone whose repository committed its report files and the clusters file it used to write
// (.app-status-clusters) as symbolic links to its executable deploy.sh: nothing is written
// through them, deploy.sh is unchanged, the log says why, and the clusters input's file,
// outside the clone, is removed; its relative file: paths still start at the clone. No
// cluster is needed: the kubeconfig named is missing (bad input).
func TestGitLabScriptFollowsNoLink(t *testing.T) {
	t.Parallel()
	job := templateJob(t)
	project, tmp := t.TempDir(), t.TempDir()
	const script = "#!/bin/sh\necho deploying\n"
	if err := os.WriteFile(filepath.Join(project, "deploy.sh"), []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	links := []string{"app-status-summary.md", "app-status-junit.xml", "app-status.env", ".app-status-clusters"}
	for _, name := range links {
		if err := os.Symlink("deploy.sh", filepath.Join(project, name)); err != nil {
			t.Fatal(err)
		}
	}
	inputs := map[string]string{
		"APP_STATUS_INPUT_RESOURCE": "kustomization/app", "APP_STATUS_INPUT_NAMESPACE": "flux-system",
		"APP_STATUS_INPUT_REVISION": commit, "APP_STATUS_INPUT_CLUSTERS": "prod=file:missing.yaml",
		"APP_STATUS_INPUT_TIMEOUT": "10s", "APP_STATUS_INPUT_RECONCILE": "false", "APP_STATUS_INPUT_ALLOW_EXEC": "false", "APP_STATUS_INPUT_ARGS": "--quiet",
	}
	if diff := cmp.Diff(slices.Sorted(maps.Keys(inputs)), slices.Sorted(maps.Keys(job.Variables))); diff != "" {
		t.Fatalf("the template's variables changed (-test +template):\n%s", diff)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	run := exec.CommandContext(ctx, "sh")
	run.Dir = project
	run.Env = []string{"PATH=" + filepath.Dir(binary) + string(os.PathListSeparator) + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"),
		"GITLAB_CI=true", "CI=true", "CI_PROJECT_DIR=" + project, "TMPDIR=" + tmp}
	for k, v := range inputs {
		run.Env = append(run.Env, k+"="+v)
	}
	run.Stdin = strings.NewReader("set -e\n" + strings.Join(job.Script, "\n") + "\n")
	out, err := run.CombinedOutput()
	log := string(out)
	if ee := (*exec.ExitError)(nil); !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Fatalf("the job's script: %v, want exit status 2 (bad input)\n%s", err, log)
	}
	data, err := os.ReadFile(filepath.Join(project, "deploy.sh"))
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(project, "deploy.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != script || fi.Mode().Perm() != 0o700 {
		t.Errorf("deploy.sh is now %.80q, mode %v; want it unchanged\n%s", data, fi.Mode().Perm(), log)
	}
	for _, name := range links {
		if fi, err := os.Lstat(filepath.Join(project, name)); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s is no longer the committed link (%v)", name, err)
		}
	}
	for _, want := range []string{
		"write --summary-file: write app-status-summary.md: it is a symbolic link",
		"write --junit-file: write app-status-junit.xml: it is a symbolic link",
		"write --dotenv-file: write app-status.env: it is a symbolic link",
		"file:missing.yaml: cannot read " + filepath.Join(project, "missing.yaml") + " (relative paths start at the working directory, for a --cluster line)",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("the log lacks %q:\n%s", want, log)
		}
	}
	if left, err := os.ReadDir(tmp); err != nil || len(left) != 0 {
		t.Errorf("the temporary folder holds %v (%v), want nothing written there", left, err)
	}
}

// gitlabShellDetect is what GitLab Runner's Docker executor runs in the job's image to find a
// shell, which then reads the job's script on its standard input.
const gitlabShellDetect = `if [ -x /usr/local/bin/bash ]; then exec /usr/local/bin/bash; ` +
	`elif [ -x /usr/bin/bash ]; then exec /usr/bin/bash; elif [ -x /bin/bash ]; then exec /bin/bash; ` +
	`elif [ -x /usr/local/bin/sh ]; then exec /usr/local/bin/sh; elif [ -x /usr/bin/sh ]; then exec /usr/bin/sh; ` +
	`elif [ -x /bin/sh ]; then exec /bin/sh; elif [ -x /busybox/sh ]; then exec /busybox/sh; ` +
	`else echo shell not found; exit 1; fi`

// TestGitLabShellImage runs the component's job script in the image a release gives it (the
// action's binary with busybox's shell, hack/image/Containerfile.shell, built here from
// Debian's static busybox) the way GitLab Runner's Docker executor does: a shell found by its
// detection command, the script on standard input, the inputs as the job's variables, the
// project mounted as the working folder. Against three clusters of the test bed, one unable to
// pull its image: the job fails and leaves its dotenv and JUnit reports.
func TestGitLabShellImage(t *testing.T) {
	requireContainers(t)
	b := bed.Get(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	image := fmt.Sprintf("localhost/app-status-action:e2e-shell-%d", os.Getpid())
	build := exec.CommandContext(ctx, repoFile("hack", "image", "build.sh"), "--shell", "--version", "e2e", image)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("hack/image/build.sh --shell: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command(podmanScript(), "rmi", "--force", image).Run() })

	job := templateJob(t)

	ns := b.Namespace(t)
	project := t.TempDir()
	names := []string{"alpha", "beta", "gamma"}
	var clusters strings.Builder
	for i, c := range b.Clusters {
		app := "web"
		if names[i] == "gamma" {
			app = "web-broken"
		}
		if _, err := c.DeployApp(ctx, testbed.Kustomization{Name: ns, TargetNamespace: ns}, testbed.Testdata(t, "apps", app), commit); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(project, "kc-"+names[i]), c.Kubeconfig, 0o644); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&clusters, "%s=file:/builds/project/kc-%s\n", names[i], names[i])
	}
	// The job's variables as GitLab sets them from the inputs (and a File variable's path).
	inputs := map[string]string{
		"APP_STATUS_INPUT_RESOURCE": "kustomization/" + ns, "APP_STATUS_INPUT_NAMESPACE": "flux-system",
		"APP_STATUS_INPUT_REVISION": commit, "APP_STATUS_INPUT_CLUSTERS": clusters.String(),
		"APP_STATUS_INPUT_TIMEOUT": "2m", "APP_STATUS_INPUT_RECONCILE": "false", "APP_STATUS_INPUT_ALLOW_EXEC": "false", "APP_STATUS_INPUT_ARGS": "--quiet",
	}
	if diff := cmp.Diff(slices.Sorted(maps.Keys(inputs)), slices.Sorted(maps.Keys(job.Variables))); diff != "" {
		t.Fatalf("the template's variables changed (-test +template):\n%s", diff)
	}
	args := []string{"run", "--rm", "-i", "--entrypoint", "", "-v", project + ":/builds/project", "--workdir", "/builds/project",
		"-e", "CI_PROJECT_DIR=/builds/project", "-e", "GITLAB_CI=true"}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	for k, v := range inputs {
		args = append(args, "-e", k)
		env = append(env, k+"="+v)
	}
	args = append(args, image, "sh", "-c", gitlabShellDetect)
	run := exec.CommandContext(ctx, podmanScript(), args...)
	run.Env = env
	// What the runner's script does around the job's own: applets that are not the shell's
	// built-ins (mkdir, rm) must be there.
	run.Stdin = strings.NewReader("set -e\nmkdir -p .runner/tmp && rm -rf .runner\n" + strings.Join(job.Script, "\n") + "\n")
	out, err := run.CombinedOutput()
	log := string(out)
	if ee := (*exec.ExitError)(nil); !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("the job's script: %v, want exit status 1 (a cluster failed)\n%s", err, log)
	}
	if !strings.Contains(log, "gamma    Failed(image-pull)") {
		t.Errorf("the log does not show gamma's failure:\n%s", log)
	}
	dotenv, err := os.ReadFile(filepath.Join(project, "app-status.env"))
	if err != nil {
		t.Fatalf("no dotenv report: %v\n%s", err, log)
	}
	for _, want := range []string{"APP_STATUS=failure\n", "APP_STATUS_FAILED=[\"gamma\"]\n", "APP_STATUS_READY=[\"alpha\",\"beta\"]\n"} {
		if !strings.Contains(string(dotenv), want) {
			t.Errorf("dotenv report lacks %q:\n%s", want, dotenv)
		}
	}
	for _, name := range []string{"app-status-junit.xml", "app-status-summary.md"} {
		if _, err := os.Stat(filepath.Join(project, name)); err != nil {
			t.Errorf("no %s: %v", name, err)
		}
	}
}
