package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/sethvargo/go-githubactions"

	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/sanitize"
	"github.com/org/app-status-action/internal/sanitize/runnertest"
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
// its share, a shard or its clusters (in any order), so that none overwrites another.
func TestLegFileBase(t *testing.T) {
	t.Parallel()
	clusters := func(names ...string) []result.Cluster {
		var out []result.Cluster
		for _, n := range names {
			out = append(out, result.Cluster{Name: n})
		}
		return out
	}
	tests := []struct {
		name string
		step string
		run  result.Run
		want string
	}{
		{"shard", "verify", result.Run{Shard: &result.Shard{Index: 2, Count: 5}, Results: clusters("a")}, "app-status-verify-shard-2-of-5"},
		{"a leg by network", "verify", result.Run{Results: clusters("eu-1", "eu-2")}, "app-status-verify-" + hashOf("eu-1\neu-2")},
		{"the same clusters in another order", "verify", result.Run{Results: clusters("eu-2", "eu-1")}, "app-status-verify-" + hashOf("eu-1\neu-2")},
		{"another network", "verify", result.Run{Results: clusters("us-1")}, "app-status-verify-" + hashOf("us-1")},
		{"bad input: no clusters", "verify", result.Run{}, "app-status-verify"},
		{"a step id that is no file name", "../x y", result.Run{Shard: &result.Shard{Index: 1, Count: 2}}, "app-status-.._x_y-shard-1-of-2"},
		{"no step id", "", result.Run{Shard: &result.Shard{Index: 1, Count: 2}}, "app-status-report-shard-1-of-2"},
	}
	for _, tt := range tests {
		env := Env{Getenv: func(k string) string { return map[string]string{"GITHUB_ACTION": tt.step}[k] }}
		if got := legFileBase(env, tt.run); got != tt.want {
			t.Errorf("%s: legFileBase() = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// hashOf is the first 12 hex digits of the SHA-256 of s.
func hashOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:12]
}
