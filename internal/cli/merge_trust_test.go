package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/org/app-status-action/internal/filecommand"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/testing/fakegithub"
)

// TestMergeActionRefusesForeignReports: the merge step of one workflow run, for its own
// resource and revision, is given reports an attacker or a stale folder could put there: each
// is refused, the file named with the reason, and nothing is posted to GitHub. The same
// report of another run merges when merge-foreign-reports says so. Deployments are posted for
// the merge step's own resource and commit, never the report's.
func TestMergeActionRefusesForeignReports(t *testing.T) {
	t.Parallel()
	const (
		reportRev = "main@sha1:a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
		ownCommit = "b2c3d4e5f60718293a4b5c6d7e8f901234567890"
		token     = "ghs_merge_token_0123456789"
	)
	ownRun := &result.Origin{CI: "github", Repository: "org/app", RunID: "7001", Attempt: 1}
	leg := func(resource, revision string, origin *result.Origin) result.Run {
		run := result.NewRun([]string{resource}, revision, []result.Cluster{{Name: "prod-eu-1", Verdict: result.VerdictCurrent}}, time.Second)
		run.Origin = origin
		return run
	}
	for _, tt := range []struct {
		name   string
		report result.Run
		inputs map[string]string
		code   int
		log    string // what the log must say
		deploy string // the commit of the deployment posted, "" for none
	}{
		{"another app at another revision, of another run",
			leg("Kustomization/flux-system/app", reportRev, &result.Origin{CI: "github", Repository: "org/app", RunID: "6998", Attempt: 1}),
			map[string]string{"INPUT_RESOURCE": "ks/other-app", "INPUT_REVISION": "b2c3d4e"}, 1,
			"leg.json is a report of another run: it was written in github run 6998 (attempt 1) of org/app, and this merge runs in github run 7001 (attempt 1) of org/app", ""},
		{"another repository",
			leg("Kustomization/flux-system/app", reportRev, &result.Origin{CI: "github", Repository: "fork/app", RunID: "7001", Attempt: 1}),
			map[string]string{"INPUT_RESOURCE": "ks/app"}, 1, "leg.json is a report of another run: it was written in github run 7001 (attempt 1) of fork/app", ""},
		{"another resource, of this run",
			leg("Kustomization/flux-system/app", reportRev, ownRun),
			map[string]string{"INPUT_RESOURCE": "ks/other-app"}, 1,
			"leg.json is a report of other resources: it verifies Kustomization/flux-system/app, and this merge step's resource input names Kustomization/flux-system/other-app", ""},
		{"another revision, of this run",
			leg("Kustomization/flux-system/app", reportRev, ownRun),
			map[string]string{"INPUT_RESOURCE": "ks/app", "INPUT_REVISION": "b2c3d4e"}, 1,
			`leg.json is a report of another revision: it verifies "` + reportRev + `", and this merge step's revision input is "b2c3d4e"`, ""},
		{"a later attempt of this run than the merge's (forged: it would override the real one)",
			leg("Kustomization/flux-system/app", reportRev, &result.Origin{CI: "github", Repository: "org/app", RunID: "7001", Attempt: 999}),
			map[string]string{"INPUT_RESOURCE": "ks/app"}, 1,
			"leg.json claims a later attempt than this merge's: it was written in github run 7001 (attempt 999) of org/app, and this merge runs in github run 7001 (attempt 1) of org/app", ""},
		{"a report of no run (an older version, a workstation)",
			leg("Kustomization/flux-system/app", reportRev, nil),
			map[string]string{"INPUT_RESOURCE": "ks/app"}, 1, "leg.json is a report of another run: it was written outside a CI run that names itself", ""},
		{"another run, merged on purpose",
			leg("Kustomization/flux-system/app", reportRev, &result.Origin{CI: "github", Repository: "org/app", RunID: "6998", Attempt: 1}),
			map[string]string{"INPUT_RESOURCE": "ks/app", "INPUT_MERGE-FOREIGN-REPORTS": "true"}, 0, "Merged 1 reports", ownCommit},
		{"this run's report: the deployment is of the merge step's commit",
			leg("Kustomization/flux-system/app", reportRev, ownRun),
			map[string]string{"INPUT_RESOURCE": "ks/app"}, 0, "Merged 1 reports", ownCommit},
		{"no resource on the merge step: nothing posted",
			leg("Kustomization/flux-system/app", reportRev, ownRun),
			map[string]string{}, 0, "::warning title=app-status%3A nothing posted to GitHub::a merge step posts deployments, commit statuses and the pull-request comment for its own resource and revision inputs", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			gh := fakegithub.Start(t, fakegithub.Options{Token: token, Owner: "org", Repo: "app"})
			dir := t.TempDir()
			writeReport(t, filepath.Join(dir, "leg.json"), tt.report)
			vars := map[string]string{
				"INPUT_MERGE": filepath.Join(dir, "*.json"), "INPUT_DEPLOYMENTS": "true", "INPUT_GITHUB-TOKEN": token,
				"GITHUB_REPOSITORY": "org/app", "GITHUB_RUN_ID": "7001", "GITHUB_RUN_ATTEMPT": "1", "GITHUB_SHA": ownCommit,
				"GITHUB_API_URL": gh.URL, "GITHUB_EVENT_NAME": "push", "RUNNER_TEMP": t.TempDir(),
			}
			for k, v := range tt.inputs {
				vars[k] = v
			}
			f := newFakeEnv(t, vars)
			code := Run(context.Background(), []string{"action"}, f.env())
			log := f.stdout.String()
			if code != tt.code || !strings.Contains(log, tt.log) {
				t.Fatalf("Run() = %d, want %d with %q in the log:\n%s", code, tt.code, tt.log, log)
			}
			if tt.code != 0 && !strings.Contains(log, "::error title=app-status bad input::") {
				t.Errorf("the refusal is not an error annotation:\n%s", log)
			}
			deps := gh.Deployments()
			switch {
			case tt.deploy == "" && len(deps) != 0:
				t.Errorf("%d deployments posted (the first of %s), want none", len(deps), deps[0].SHA)
			case tt.deploy != "" && (len(deps) != 1 || deps[0].SHA != tt.deploy):
				t.Errorf("deployments %+v, want one of the merge step's own commit %s", deps, tt.deploy)
			}
			outputs, err := filecommand.ParseOutputs(f.file(t, f.output))
			if err != nil {
				t.Fatal(err)
			}
			if want := map[int]string{0: "success", 1: "failure"}[tt.code]; outputs["status"] != want {
				t.Errorf("status output %q, want %q", outputs["status"], want)
			}
		})
	}
}

// TestMergeCLIRefusesForeignReports: app-status merge ties the reports to its own CI run, and
// to --resource and --revision when given; --allow-foreign-reports merges a CI's reports on a
// workstation on purpose.
func TestMergeCLIRefusesForeignReports(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "shard.json")
	run := result.NewRun([]string{"Kustomization/flux-system/app"}, "a1b2c3d", []result.Cluster{{Name: "prod-eu-1", Verdict: result.VerdictCurrent}}, time.Second)
	run.Origin = &result.Origin{CI: "gitlab", Repository: "group/app", RunID: "551"}
	writeReport(t, path, run)
	workstation := func() Env {
		var f fakeEnv
		env := f.env()
		env.Getenv = func(string) string { return "" }
		return env
	}
	for _, tt := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"a pipeline's report on a workstation", nil, 2, "shard.json is a report of another run: it was written in gitlab run 551 of group/app, and this merge runs outside a CI run"},
		{"on purpose", []string{"--allow-foreign-reports"}, 0, ""},
		{"on purpose, of another resource", []string{"--allow-foreign-reports", "--resource", "hr/app"}, 2, "is a report of other resources: it verifies Kustomization/flux-system/app, and this merge step's resource input names HelmRelease/flux-system/app"},
		{"on purpose, of its resource and revision", []string{"--allow-foreign-reports", "--resource", "ks/app", "--revision", "a1b2c3d"}, 0, ""},
		{"on purpose, of another revision", []string{"--allow-foreign-reports", "--revision", "a1b2c3e"}, 2, "is a report of another revision"},
	} {
		var stdout, stderr strings.Builder
		env := workstation()
		env.Stdout, env.Stderr = &stdout, &stderr
		code := Run(context.Background(), append(append([]string{"merge"}, tt.args...), path), env)
		if code != tt.code || !strings.Contains(stderr.String(), tt.want) {
			t.Errorf("%s: Run() = %d, want %d saying %q\n%s", tt.name, code, tt.code, tt.want, stderr.String())
		}
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
}
