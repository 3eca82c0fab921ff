package cli

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sethvargo/go-githubactions"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/publish"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/sanitize"
	"github.com/org/app-status-action/internal/verify"
)

// How long the step goes on posting to GitHub after the verdicts: the final statuses and the
// comment, with rate limits waited out within it; much less once the job is cancelled.
const (
	publishGrace        = 2 * time.Minute
	publishGraceHurried = 10 * time.Second
)

// publishInputs reads the inputs of the GitHub deployments, the commit statuses and the
// pull-request comment.
func publishInputs(gha *githubactions.Action) (publish.Config, error) {
	var c publish.Config
	var err error
	if c.Deployments, err = boolInput(gha, "deployments", false); err != nil {
		return c, err
	}
	if c.CommitStatus, err = boolInput(gha, "commit-status", false); err != nil {
		return c, err
	}
	if c.PRComment, err = boolInput(gha, "pr-comment", false); err != nil {
		return c, err
	}
	if c.GroupAbove, err = intInput(gha, "deployments-group-above", publish.DefaultGroupAbove); err != nil {
		return c, err
	}
	if c.PullRequest, err = intInput(gha, "pull-request", 0); err != nil {
		return c, err
	}
	if c.PullRequest < 0 {
		return c, fmt.Errorf("input pull-request: %d is not a pull request's number", c.PullRequest)
	}
	if c.ProductionEnvironment, err = optionalBool(gha, "production-environment"); err != nil {
		return c, err
	}
	if c.TransientEnvironment, err = optionalBool(gha, "transient-environment"); err != nil {
		return c, err
	}
	c.Token = gha.GetInput("github-token")
	c.Environment = cmp.Or(gha.GetInput("environment"), publish.DefaultEnvironment)
	c.EnvironmentURL = gha.GetInput("environment-url")
	c.GroupEnvironment = cmp.Or(gha.GetInput("environment-group"), publish.DefaultGroupEnvironment)
	c.CommentKey = gha.GetInput("comment-key")
	return c, nil
}

// optionalBool reads a boolean input that is unset (nil: GitHub's default) when empty.
func optionalBool(gha *githubactions.Action, name string) (*bool, error) {
	if gha.GetInput(name) == "" {
		return nil, nil //nolint:nilnil // unset: GitHub's default
	}
	v, err := boolInput(gha, name, false)
	if err != nil {
		return nil, err
	}
	return &v, nil
}

// defaultCommentKey tells apart the comments of the jobs and steps of one workflow: the
// job's id and the step's (GITHUB_JOB, GITHUB_ACTION), and a short hash of the sorted cluster
// names. The hash keeps apart what shares a job's id: a reusable workflow called twice (for
// staging and for production: GITHUB_JOB is the called workflow's job both times) and the
// legs of a matrix; a re-run verifies the same clusters, so it keeps its key.
func defaultCommentKey(env Env, clusters []string) string {
	job, step := env.Getenv("GITHUB_JOB"), env.Getenv("GITHUB_ACTION")
	if job == "" && step == "" {
		return ""
	}
	key := job + "/" + step
	if len(clusters) > 0 {
		key += "/" + clustersHash(clusters)
	}
	return key
}

// clustersHash is 8 hex digits of the SHA-256 of the sorted cluster names, one a line.
func clustersHash(clusters []string) string {
	sorted := slices.Sorted(slices.Values(clusters))
	sum := sha256.Sum256([]byte(strings.Join(sorted, "\n")))
	return hex.EncodeToString(sum[:4])
}

// startPublisher starts posting the run's deployments and commit statuses, when asked. A
// configuration GitHub cannot take (no token, a bad template) is a warning: the verification
// goes on without.
func startPublisher(ctx context.Context, gha *githubactions.Action, env Env, s actionConfig, req verify.Request) *publish.Publisher {
	if !s.shard.IsZero() && publishes(s.publish) {
		// A leg sees its share of the fleet: a group's deployment, the aggregate commit status
		// or the comment it wrote would show that share as the fleet, and the next leg would
		// overwrite it.
		gha.WithFieldsMap(map[string]string{"title": "app-status: nothing posted to GitHub"}).Warningf("%s",
			"a shard posts no deployment, no commit status and no pull-request comment: set deployments, commit-status and pr-comment on the merge step, which posts them once for the fleet")
		return nil
	}
	names := make([]string, len(req.Targets))
	for i, t := range req.Targets {
		names[i] = t.Name
	}
	return newPublisher(ctx, gha, env, s, resourceIDs(req), req.Revision, names, false)
}

// publishMerged posts a merged run's deployments and commit statuses (straight to their
// final status) and comment, for the merge step's own resources and revision (its own commit
// when it names none), never a report's: a merge step given no resource posts nothing, and
// says so.
func publishMerged(ctx context.Context, gha *githubactions.Action, env Env, s actionConfig, resources []string, rev flux.Revision, run result.Run, hurry func() bool) []string {
	if publishes(s.publish) && len(resources) == 0 {
		gha.WithFieldsMap(map[string]string{"title": "app-status: nothing posted to GitHub"}).Warningf("%s",
			"a merge step posts deployments, commit statuses and the pull-request comment for its own resource and revision inputs, never for what a report says: set resource (and revision) on the merge step")
		return nil
	}
	names := make([]string, len(run.Results))
	for i, c := range run.Results {
		names[i] = c.Name
	}
	pub := newPublisher(ctx, gha, env, s, resources, rev, names, true)
	return finishPublisher(ctx, gha, pub, run, hurry, func(s string) string { return s })
}

func newPublisher(ctx context.Context, gha *githubactions.Action, env Env, s actionConfig, resources []string, rev flux.Revision, names []string, final bool) *publish.Publisher {
	cfg := s.publish
	if !publishes(cfg) {
		return nil
	}
	if cfg.Token != "" {
		gha.AddMask(cfg.Token)
	}
	cfg.APIURL = env.Getenv("GITHUB_API_URL")
	cfg.GraphQLURL = env.Getenv("GITHUB_GRAPHQL_URL")
	cfg.CommentKey = cmp.Or(cfg.CommentKey, defaultCommentKey(env, names))
	cfg.Repository = env.Getenv("GITHUB_REPOSITORY")
	cfg.SHA = env.Getenv("GITHUB_SHA")
	cfg.EventName = env.Getenv("GITHUB_EVENT_NAME")
	cfg.EventPath = env.Getenv("GITHUB_EVENT_PATH")
	cfg.Workflow = env.Getenv("GITHUB_WORKFLOW")
	cfg.RunURL = runURL(env)
	cfg.Resources = resources
	cfg.Revision = rev
	cfg.Clock = env.Clock
	pub, err := publish.New(cfg, names)
	if err != nil {
		gha.WithFieldsMap(map[string]string{"title": "app-status: nothing posted to GitHub"}).Warningf("%s", sanitize.Commands(sanitize.Line(err.Error())))
		return nil
	}
	if final {
		pub.StartFinal(ctx)
	} else {
		pub.Start(ctx)
	}
	return pub
}

// publishes reports whether the inputs ask to write anything to GitHub.
func publishes(c publish.Config) bool { return c.Deployments || c.PRComment || c.CommitStatus }

// finishPublisher posts the final statuses and the comment, and turns what could not be
// posted into warnings and lines for the summary.
func finishPublisher(ctx context.Context, gha *githubactions.Action, pub *publish.Publisher, run result.Run, hurry func() bool, redact func(string) string) []string {
	if pub == nil {
		return nil
	}
	grace := publishGrace
	if hurry() {
		grace = publishGraceHurried
	}
	// The run's own context may be cancelled (SIGTERM): the final word is still posted, briefly.
	finishCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), grace)
	defer cancel()
	notes := pub.Finish(finishCtx, run)
	for i, n := range notes {
		notes[i] = redact(n)
		gha.WithFieldsMap(map[string]string{"title": "app-status: not posted to GitHub"}).Warningf("%s", sanitize.Commands(sanitize.Line(notes[i])))
	}
	return notes
}

// runURL links to the workflow run (its attempt), as GitHub names it.
func runURL(env Env) string {
	server, repo, id := env.Getenv("GITHUB_SERVER_URL"), env.Getenv("GITHUB_REPOSITORY"), env.Getenv("GITHUB_RUN_ID")
	if server == "" || repo == "" || id == "" {
		return ""
	}
	u := server + "/" + repo + "/actions/runs/" + id
	if attempt := env.Getenv("GITHUB_RUN_ATTEMPT"); attempt != "" {
		u += "/attempts/" + attempt
	}
	return u
}
