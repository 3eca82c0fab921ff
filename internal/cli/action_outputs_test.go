package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/sethvargo/go-githubactions"

	"github.com/org/app-status-action/internal/report"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/sanitize"
	"github.com/org/app-status-action/internal/testing/runnertest"
)

// TestReportFilePaths: the report file is written where the action can write it and named by
// the path the job's later steps read it at, on the host and in the action's container as
// each version of the runner lays it out (actions/runner ContainerActionHandler).
func TestReportFilePaths(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		vars      map[string]string
		wantLocal string
		wantHost  string
	}{{
		name:      "on the host",
		vars:      map[string]string{"GITHUB_WORKSPACE": "/home/runner/work/deploy/deploy", "RUNNER_TEMP": "/home/runner/work/_temp", "RUNNER_WORKSPACE": "/home/runner/work/deploy"},
		wantLocal: "/home/runner/work/_temp/app-status-verify.json",
		wantHost:  "/home/runner/work/_temp/app-status-verify.json",
	}, {
		name:      "container, runner v2.331 and later: RUNNER_TEMP mounted and rewritten",
		vars:      map[string]string{"GITHUB_WORKSPACE": "/github/workspace", "RUNNER_TEMP": "/github/runner_temp", "RUNNER_WORKSPACE": "/home/runner/work/deploy"},
		wantLocal: "/github/runner_temp/app-status-verify.json",
		wantHost:  "/home/runner/work/_temp/app-status-verify.json",
	}, {
		name:      "container, self-hosted runner with its own work folder",
		vars:      map[string]string{"GITHUB_WORKSPACE": "/github/workspace", "RUNNER_TEMP": "/github/runner_temp", "RUNNER_WORKSPACE": "/srv/actions/_work/deploy"},
		wantLocal: "/github/runner_temp/app-status-verify.json",
		wantHost:  "/srv/actions/_work/_temp/app-status-verify.json",
	}, {
		name:      "container, runner v2.331 and later, no RUNNER_WORKSPACE: the container's path",
		vars:      map[string]string{"GITHUB_WORKSPACE": "/github/workspace", "RUNNER_TEMP": "/github/runner_temp"},
		wantLocal: "/github/runner_temp/app-status-verify.json",
		wantHost:  "/github/runner_temp/app-status-verify.json",
	}, {
		name:      "container, RUNNER_WORKSPACE rewritten too: the container's path",
		vars:      map[string]string{"GITHUB_WORKSPACE": "/github/workspace", "RUNNER_TEMP": "/github/runner_temp", "RUNNER_WORKSPACE": "/github/workspace/x"},
		wantLocal: "/github/runner_temp/app-status-verify.json",
		wantHost:  "/github/runner_temp/app-status-verify.json",
	}, {
		name:      "container, runner before v2.331: RUNNER_TEMP not mounted, its _github_home is",
		vars:      map[string]string{"GITHUB_WORKSPACE": "/github/workspace", "RUNNER_TEMP": "/home/runner/work/_temp", "RUNNER_WORKSPACE": "/home/runner/work/deploy"},
		wantLocal: "/github/home/app-status-verify.json",
		wantHost:  "/home/runner/work/_temp/_github_home/app-status-verify.json",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := Env{Getenv: func(k string) string { return tt.vars[k] }}
			local, host := reportFilePaths(env, tt.vars["RUNNER_TEMP"], "app-status-verify.json")
			if diff := cmp.Diff([2]string{tt.wantLocal, tt.wantHost}, [2]string{local, host}); diff != "" {
				t.Errorf("reportFilePaths() (local, host) (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLogGroups: a collapsed section per cluster that is not Current, failures in the
// summary's order, at most 50; a hostile cluster's text can neither end its group nor make a
// command of its own.
func TestLogGroups(t *testing.T) {
	t.Parallel()
	hostile := "boom\n::endgroup::\n::error::forged%0A::warning::x\r##[error]legacy"
	clusters := []result.Cluster{
		{Name: "zz", Verdict: result.VerdictCurrent},
		{Name: "b", Verdict: result.VerdictUnreachable, Message: "dial tcp: refused"},
		{Name: "a", Verdict: result.VerdictFailed, Code: "crash-loop", Message: hostile,
			Objects: []result.Object{{ID: "apps/Deployment/ns/web", Kind: "Deployment", Namespace: "ns", Name: "web", Status: result.ObjectFailed, Message: hostile}}},
	}
	for i := range 60 {
		clusters = append(clusters, result.Cluster{Name: fmt.Sprintf("t%02d", i), Verdict: result.VerdictTimeout, Message: "waiting"})
	}
	run := result.NewRun([]string{"Kustomization/flux-system/app"}, "", clusters, time.Second)
	var out strings.Builder
	gha := githubactions.New(githubactions.WithWriter(&out))
	writeLogGroups(gha, sanitize.NewCommandsWriter(&out), run)
	var got []string
	for _, c := range runnertest.Commands(out.String()) {
		got = append(got, c.Form+c.Name)
	}
	var want []string
	for range 50 {
		want = append(want, "::group", "::endgroup")
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the runner's commands in the log (-want +got):\n%s\n%s", diff, out.String())
	}
	var titles []string
	for _, line := range strings.Split(out.String(), "\n") {
		if title, ok := strings.CutPrefix(line, "::group::"); ok {
			titles = append(titles, title)
		}
	}
	if len(titles) != 50 || !strings.HasPrefix(titles[0], "a: Failed (crash-loop): ") {
		t.Errorf("titles %q", titles)
	}
	if !strings.Contains(out.String(), "\n12 more clusters are not Current") {
		t.Errorf("the clusters left out are not counted:\n%s", out.String())
	}
	if !strings.Contains(titles[0], "%250A") {
		t.Errorf("title %q: %% is not escaped for the runner", titles[0])
	}
}

// TestLegFileBase: the legs of a matrix share the step's id, and download-artifact's
// merge-multiple extracts their artifacts into one folder: each leg's files are named after
// its shard and a hash of its resources, revision, clusters and moment, so that no two legs
// share a name, not even two of the same share, and the merge sees every one.
func TestLegFileBase(t *testing.T) {
	t.Parallel()
	clusters := func(names ...string) []result.Cluster {
		var out []result.Cluster
		for _, n := range names {
			out = append(out, result.Cluster{Name: n})
		}
		return out
	}
	at := func(sec int64) Env {
		return Env{Getenv: func(k string) string { return map[string]string{"GITHUB_ACTION": "verify"}[k] }, Clock: func() time.Time { return time.Unix(sec, 0) }}
	}
	shard2 := result.Run{Resources: []string{"ks/app"}, ExpectedRevision: "abc", Shard: &result.Shard{Index: 2, Count: 5}, Results: clusters("a")}
	network := result.Run{Resources: []string{"ks/app"}, ExpectedRevision: "abc", Results: clusters("eu-1", "eu-2")}
	otherResource := network
	otherResource.Resources = []string{"ks/other"}
	badInput := result.Run{}
	shape := regexp.MustCompile(`^app-status-verify(-shard-2-of-5)?-[0-9a-f]{12}$`)
	names := map[string]string{}
	for _, leg := range []struct {
		name string
		env  Env
		run  result.Run
	}{
		{"shard 2/5", at(1), shard2},
		{"shard 2/5 again (a matrix of runners and shards)", at(2), shard2},
		{"a leg by network", at(1), network},
		{"the same clusters for another resource", at(1), otherResource},
		{"a leg that stopped on bad input", at(1), badInput},
		{"another leg that stopped on bad input", at(3), badInput},
	} {
		got := legFileBase(leg.env, leg.run)
		if !shape.MatchString(got) || (leg.run.Shard != nil) != strings.Contains(got, "-shard-2-of-5-") {
			t.Errorf("%s: legFileBase() = %q, not of the form %s", leg.name, got, shape)
		}
		if other, ok := names[got]; ok {
			t.Errorf("%s and %s share the name %s", leg.name, other, got)
		}
		names[got] = leg.name
	}
	if a, b := legFileBase(at(1), shard2), legFileBase(at(1), shard2); a != b {
		t.Errorf("one run, two names: %s and %s", a, b)
	}
	odd := Env{Getenv: func(string) string { return "../x y" }}
	if got := legFileBase(odd, shard2); !strings.HasPrefix(got, "app-status-.._x_y-shard-2-of-5-") {
		t.Errorf("a step id that is no file name: legFileBase() = %q", got)
	}
}

// TestReportJSONStreamed: the report file, streamed, holds byte for byte what the whole
// document, cleaned for the runner as JSON and as text, holds: runner commands inside strings
// broken, the JSON decoding to the same values.
func TestReportJSONStreamed(t *testing.T) {
	t.Parallel()
	var clusters []result.Cluster
	for i := range 40 {
		c := result.Cluster{Name: fmt.Sprintf("c%02d", i), Verdict: result.VerdictFailed,
			Message: "##[error]a cluster's text\n::warning::and more ::add-mask::x"}
		for j := range 30 {
			c.Objects = append(c.Objects, result.Object{ID: fmt.Sprintf("Deployment/app/w-%02d", j), Kind: "Deployment",
				Status: result.ObjectFailed, Message: "##[group]" + strings.Repeat("x", j*50)})
		}
		clusters = append(clusters, c)
	}
	run := result.NewRun([]string{"Kustomization/flux-system/app"}, "main@sha1:abc", clusters, time.Second)
	doc, err := report.JSON(run)
	if err != nil {
		t.Fatal(err)
	}
	want := sanitize.CommandsText(sanitize.CommandsJSONText(string(doc)))
	path := filepath.Join(t.TempDir(), "a", "report.json")
	if err := writeReportJSON(path, run); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("the streamed report file (%d bytes) is not the cleaned document (%d bytes)", len(got), len(want))
	}
	if strings.Contains(string(got), "##[") {
		t.Error("the report file holds a runner command")
	}
	var decoded result.Run
	if err := json.Unmarshal(got, &decoded); err != nil || decoded.Results[3].Message != clusters[3].Message {
		t.Errorf("the report file decodes to %v (%v); want the cluster's message as it was", decoded.Results[3].Message, err)
	}
}
