package cli

import (
	"testing"

	"github.com/google/go-cmp/cmp"
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
