package cli

import (
	"strconv"

	"github.com/org/app-status-action/internal/result"
)

// runOrigin is the CI run this process runs in, as its CI names it: the repository, the run
// (the same for every job of it and for its re-runs) and the attempt. A report carries it, and
// a merge takes the reports of its own run alone. It is nil outside a CI that names its runs
// (a laptop, Tekton): a merge there takes reports that are nil too.
func runOrigin(env Env) *result.Origin {
	var o result.Origin
	var attempt string
	switch {
	case env.Getenv("GITHUB_ACTIONS") == "true":
		o = result.Origin{CI: "github", Repository: env.Getenv("GITHUB_REPOSITORY"), RunID: env.Getenv("GITHUB_RUN_ID")}
		attempt = env.Getenv("GITHUB_RUN_ATTEMPT")
	case inGitLabCI(env):
		// A retried job is a new job of the same pipeline; GitLab numbers no attempt.
		o = result.Origin{CI: "gitlab", Repository: env.Getenv("CI_PROJECT_PATH"), RunID: env.Getenv("CI_PIPELINE_ID")}
	case inAzurePipelines(env):
		o = result.Origin{CI: "azure", Repository: env.Getenv("BUILD_REPOSITORY_NAME"), RunID: env.Getenv("BUILD_BUILDID")}
		attempt = env.Getenv("SYSTEM_JOBATTEMPT")
	default:
		return nil
	}
	if o.RunID == "" {
		return nil
	}
	if n, err := strconv.Atoi(attempt); err == nil && n > 0 {
		o.Attempt = n
	}
	return &o
}
