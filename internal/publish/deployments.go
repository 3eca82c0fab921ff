package publish

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/google/go-github/v89/github"

	"github.com/org/app-status-action/internal/report"
	"github.com/org/app-status-action/internal/result"
)

const (
	// deploymentTask names the deployments app-status creates, apart from GitHub's default
	// task "deploy" (the task of the deployments of jobs with an environment:, and of most
	// deployment tools), so that a re-run finds its own and never writes onto another's. It
	// is a deploy task in GitHub's own form (deploy:migrations), for tools that count them.
	deploymentTask = "deploy:app-status"
	// payloadKey holds, in a deployment's payload, what app-status verifies there.
	payloadKey = "app-status"
	// concurrentRequests bounds the requests on their way to GitHub at once.
	concurrentRequests = 4
	livePoll           = 2 * time.Second
)

// Start creates (or finds, on a re-run) the deployments and marks them in_progress, then
// keeps their description up to date with the clusters' progress until Finish, and posts a
// commit status pending once its cluster starts waiting. It returns at once: the
// verification never waits for GitHub.
func (p *Publisher) Start(ctx context.Context) {
	if p == nil {
		return
	}
	p.startStatuses(ctx)
	liveCtx, stop := context.WithCancel(ctx)
	p.stopLive = stop
	go func() {
		defer close(p.liveDone)
		p.createAll(ctx)
		close(p.started)
		p.live(liveCtx)
	}()
}

// StartFinal is Start for a run whose verdicts are already known (a merge of reports): the
// deployments go straight to their final status in Finish.
func (p *Publisher) StartFinal(ctx context.Context) {
	if p == nil {
		return
	}
	p.finishing.Store(true)
	p.Start(ctx)
}

// Observe records a cluster's progress (called from the verification's progress goroutine).
func (p *Publisher) Observe(cluster string, v result.Verdict, message string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.verdicts[cluster], p.messages[cluster] = v, message
	if v == result.VerdictInProgress {
		p.waiting(cluster)
	}
}

func (p *Publisher) createAll(ctx context.Context) {
	if !p.cfg.Deployments || len(p.targets) == 0 {
		return
	}
	if p.ref == "" && p.eventErr != nil {
		p.note("no deployment was created: there is no commit to name (%v): expect a full commit SHA as the revision", p.eventErr)
		p.targets = nil
		return
	}
	if p.ref == "" {
		p.note("no deployment was created: there is no commit to name (set GITHUB_SHA, or expect a commit SHA as the revision)")
		p.targets = nil
		return
	}
	var refused sync.Once
	each(ctx, p.targets, func(t *target) {
		if err := p.create(ctx, t); err != nil {
			if denied(err) {
				refused.Do(func() {
					p.note("deployments not posted: GitHub refused the token (%s): grant the job `deployments: write`", brief(err))
				})
				return
			}
			p.note("deployment of environment %s not posted: %s", t.environment, brief(err))
		}
	})
}

// each runs f on every target, concurrentRequests at a time, and returns when all are done.
func each[T any](ctx context.Context, targets []T, f func(T)) {
	slots := make(chan struct{}, concurrentRequests)
	var wg sync.WaitGroup
	for _, t := range targets {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			return
		}
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			f(t)
		}()
	}
	wg.Wait()
}

// create finds the deployment app-status made of this commit, environment and resources (a
// re-run reuses it) or creates it, then marks it in_progress.
func (p *Publisher) create(ctx context.Context, t *target) error {
	var found []*github.Deployment
	err := p.api.call(ctx, false, func() (*github.Response, error) {
		var resp *github.Response
		var err error
		found, resp, err = p.api.gh.Repositories.ListDeployments(ctx, p.api.owner, p.api.repo, &github.DeploymentsListOptions{
			SHA: p.ref, Environment: t.environment, Task: deploymentTask, ListOptions: github.ListOptions{PerPage: 100},
		})
		return resp, err
	})
	if err != nil {
		return err
	}
	if i := slices.IndexFunc(found, func(d *github.Deployment) bool { return p.ours(d, t) }); i >= 0 {
		t.id = found[i].GetID()
	} else {
		var d *github.Deployment
		err := p.write(ctx, func() (*github.Response, error) {
			var resp *github.Response
			var err error
			d, resp, err = p.api.gh.Repositories.CreateDeployment(ctx, p.api.owner, p.api.repo, github.DeploymentRequest{
				Ref:              p.ref,
				Task:             github.Ptr(deploymentTask),
				Environment:      github.Ptr(t.environment),
				AutoMerge:        github.Ptr(false),
				RequiredContexts: []string{}, // sent as []: no status check to wait for
				Description:      github.Ptr(deploymentDescription(p.cfg.Resources)),
				Payload: map[string]any{payloadKey: map[string]any{"resources": p.cfg.Resources, "clusters": t.clusters,
					"workflow": p.cfg.Workflow, "key": p.cfg.CommentKey}},

				ProductionEnvironment: p.cfg.ProductionEnvironment,
				TransientEnvironment:  p.cfg.TransientEnvironment,
			})
			return resp, err
		})
		if err != nil {
			return err
		}
		t.id = d.GetID()
	}
	if p.finishing.Load() {
		// The verdicts are in: the final status follows at once, in_progress would only spend
		// the content-creation budget.
		return nil
	}
	return p.status(ctx, t, "in_progress", p.liveDescription(t))
}

// ours reports whether d is the deployment app-status created for target t of this run's
// workflow, job and step (the comment key) and resources, by its task (the list's filter,
// checked again) and its payload: another tool's, or one of another job or step that
// verifies other resources or other clusters into the same environment, is never written.
func (p *Publisher) ours(d *github.Deployment, t *target) bool {
	if d.GetID() == 0 || d.GetTask() != deploymentTask {
		return false
	}
	var payload map[string]struct {
		Resources []string `json:"resources"`
		Clusters  []string `json:"clusters"`
		Workflow  string   `json:"workflow"`
		Key       string   `json:"key"`
	}
	if err := json.Unmarshal(d.Payload, &payload); err != nil {
		return false
	}
	mine, ok := payload[payloadKey]
	return ok && slices.Equal(mine.Resources, p.cfg.Resources) && slices.Equal(mine.Clusters, t.clusters) &&
		mine.Workflow == p.cfg.Workflow && mine.Key == p.cfg.CommentKey
}

func deploymentDescription(resources []string) string {
	text := "app-status: " + fmt.Sprint(resources)
	if len([]rune(text)) > report.MaxDeploymentDescription {
		text = string([]rune(text)[:report.MaxDeploymentDescription-1]) + "…"
	}
	return text
}

// write runs a content-creating request and counts it.
func (p *Publisher) write(ctx context.Context, do func() (*github.Response, error)) error {
	p.mu.Lock()
	p.writes++
	p.mu.Unlock()
	return p.api.call(ctx, true, do)
}

func (p *Publisher) status(ctx context.Context, t *target, state, description string) error {
	req := github.DeploymentStatusRequest{State: state, Description: github.Ptr(description)}
	if p.cfg.RunURL != "" {
		req.LogURL = github.Ptr(p.cfg.RunURL)
	}
	if t.url != "" {
		req.EnvironmentURL = github.Ptr(t.url)
	}
	err := p.write(ctx, func() (*github.Response, error) {
		_, resp, err := p.api.gh.Repositories.CreateDeploymentStatus(ctx, p.api.owner, p.api.repo, t.id, req)
		return resp, err
	})
	if err == nil {
		t.posted, t.postedAt = state+" "+description, p.clock()
	}
	return err
}

// liveDescription is a deployment's in_progress description now.
func (p *Publisher) liveDescription(t *target) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(t.clusters) == 1 {
		c := t.clusters[0]
		if v := p.verdicts[c]; v != "" && v != result.VerdictInProgress {
			return report.ProgressDescription(string(v) + ": " + p.messages[c])
		}
		return report.ProgressDescription(p.messages[c])
	}
	verdicts := make(map[string]result.Verdict, len(t.clusters))
	for _, c := range t.clusters {
		verdicts[c] = p.verdicts[c]
	}
	return report.FleetDescription(verdicts, false)
}

// live updates each deployment's in_progress description when its clusters' state changed,
// at most once per LiveEvery, until ctx ends or the run has spent its live write budget.
func (p *Publisher) live(ctx context.Context) {
	tick := time.NewTicker(livePoll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		p.mu.Lock()
		spent := p.writes >= liveWriteBudget
		p.mu.Unlock()
		if spent {
			p.note("live progress stopped after %d requests, to stay within GitHub's limits; the final statuses are posted", liveWriteBudget)
			return
		}
		var due []*target
		for _, t := range p.targets {
			if t.id != 0 && p.clock().Sub(t.postedAt) >= p.cfg.LiveEvery && t.posted != "in_progress "+p.liveDescription(t) {
				due = append(due, t)
			}
		}
		each(ctx, due, func(t *target) {
			_ = p.status(ctx, t, "in_progress", p.liveDescription(t)) // a live update that fails is retried at the next change
		})
	}
}

// final is a deployment's final state and description from the run's verdicts.
func (p *Publisher) final(t *target, byName map[string]result.Cluster) (state, description string) {
	if len(t.clusters) == 1 {
		c, ok := byName[t.clusters[0]]
		if !ok {
			return "error", "no verdict"
		}
		return report.DeploymentState(c.Verdict), report.DeploymentDescription(c)
	}
	verdicts := make(map[string]result.Verdict, len(t.clusters))
	state = "success"
	cancelled := 0
	for _, name := range t.clusters {
		c := byName[name]
		verdicts[name] = c.Verdict
		switch s := report.DeploymentState(c.Verdict); {
		case s == "failure":
			state = "failure"
		case s == "inactive":
			cancelled++
		case s != "success" && state == "success":
			state = "error"
		}
	}
	if cancelled == len(t.clusters) {
		state = "inactive"
	} else if cancelled > 0 && state == "success" {
		state = "error"
	}
	return state, report.FleetDescription(verdicts, true)
}

// finishDeployments posts every deployment's final status.
func (p *Publisher) finishDeployments(ctx context.Context, run result.Run) {
	byName := make(map[string]result.Cluster, len(run.Results))
	for _, c := range run.Results {
		byName[c.Name] = c
	}
	var mu sync.Mutex
	var failed []string
	var firstErr error
	each(ctx, p.targets, func(t *target) {
		if t.id == 0 {
			return
		}
		state, description := p.final(t, byName)
		if err := p.status(ctx, t, state, description); err != nil {
			mu.Lock()
			failed = append(failed, t.environment)
			if firstErr == nil {
				firstErr = err
			}
			mu.Unlock()
		}
	})
	if len(failed) > 0 {
		p.note("final deployment status not posted for %s: %s", listSome(failed), brief(firstErr))
	}
}
