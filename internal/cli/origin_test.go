package cli

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/shard"
)

// TestRunOrigin: a report names the CI run it was written in, as each CI names it, and no run
// outside one (nor where the run has no id).
func TestRunOrigin(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		vars map[string]string
		want *result.Origin
	}{
		{"GitHub Actions", map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_REPOSITORY": "org/app", "GITHUB_RUN_ID": "7001", "GITHUB_RUN_ATTEMPT": "3"},
			&result.Origin{CI: "github", Repository: "org/app", RunID: "7001", Attempt: 3}},
		{"GitLab CI/CD", map[string]string{"GITLAB_CI": "true", "CI_PROJECT_PATH": "group/sub/app", "CI_PIPELINE_ID": "551"},
			&result.Origin{CI: "gitlab", Repository: "group/sub/app", RunID: "551"}},
		{"Azure Pipelines", map[string]string{"TF_BUILD": "True", "BUILD_REPOSITORY_NAME": "org/app", "BUILD_BUILDID": "88", "SYSTEM_JOBATTEMPT": "2"},
			&result.Origin{CI: "azure", Repository: "org/app", RunID: "88", Attempt: 2}},
		{"an attempt that is no number", map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_REPOSITORY": "org/app", "GITHUB_RUN_ID": "7001", "GITHUB_RUN_ATTEMPT": "x"},
			&result.Origin{CI: "github", Repository: "org/app", RunID: "7001"}},
		{"a workstation", map[string]string{}, nil},
		{"GitHub Actions without a run id", map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_REPOSITORY": "org/app"}, nil},
	} {
		env := Env{Getenv: func(k string) string { return tt.vars[k] }}
		if diff := cmp.Diff(tt.want, runOrigin(env)); diff != "" {
			t.Errorf("%s: runOrigin() (-want +got):\n%s", tt.name, diff)
		}
	}
	stamped := stampRun(result.Run{}, time.Unix(0, 0), time.Unix(1, 0), &result.Origin{CI: "github", RunID: "1"}, shard.Shard{}, nil)
	if stamped.Origin == nil || stamped.Origin.RunID != "1" {
		t.Errorf("stampRun() left the origin out: %+v", stamped.Origin)
	}
}
