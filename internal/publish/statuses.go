package publish

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/google/go-github/v89/github"

	"github.com/org/app-status-action/internal/report"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/sanitize"
)

const (
	// statusContext is the context of the aggregate commit status, and with a slash and the
	// cluster's name, of a cluster's.
	statusContext = "app-status"
	// maxContextName bounds the cluster's name in a context, in characters.
	maxContextName = 100
)

// statusTarget is one commit status context: a cluster's, or the fleet's above GroupAbove.
type statusTarget struct {
	context  string
	clusters []string
	// pending is set once its pending status is due (held under Publisher.mu).
	pending bool
}

// newStatusTargets is a context per cluster, or the one aggregate above groupAbove clusters.
func newStatusTargets(clusters []string, groupAbove int) []*statusTarget {
	sorted := slices.Sorted(slices.Values(clusters))
	if len(sorted) > groupAbove {
		return []*statusTarget{{context: statusContext, clusters: sorted}}
	}
	out := make([]*statusTarget, len(sorted))
	for i, c := range sorted {
		out[i] = &statusTarget{context: clusterContext(c), clusters: []string{c}}
	}
	return out
}

// clusterContext is a cluster's context, app-status/<cluster>: its name made one line with
// no runner command, and bounded (the names the inputs accept are kept as they are).
func clusterContext(cluster string) string {
	return statusContext + "/" + sanitize.Truncate(sanitize.Commands(sanitize.Line(cluster)), maxContextName)
}

// statusText makes a description one line, with no runner command, of at most the 140
// characters GitHub accepts.
func statusText(s string) string {
	return sanitize.Truncate(sanitize.Commands(sanitize.Line(s)), report.MaxDeploymentDescription)
}

// commitState is the commit status state of a cluster's verdict: success when Current;
// failure when the answer is no or the set-up must be fixed (the rollout failed, the Flux
// object does not exist, the credentials or the kubeconfig are refused or unusable); error
// when the run could not tell (unreachable, throttled, out of time, cancelled, suspended and
// not verified, no report in a merge).
func commitState(v result.Verdict) string {
	switch v {
	case result.VerdictCurrent:
		return "success"
	case result.VerdictFailed, result.VerdictNotFound, result.VerdictInvalidConfig, result.VerdictUnauthorized, result.VerdictForbidden:
		return "failure"
	}
	return "error"
}

// startStatuses posts a context's pending status once one of its clusters starts waiting,
// until Finish; a run whose verdicts are known posts none.
func (p *Publisher) startStatuses(ctx context.Context) {
	switch {
	case !p.cfg.CommitStatus:
		return
	case p.ref == "" && p.eventErr != nil:
		p.note("no commit status was posted: there is no commit to name (%v): expect a full commit SHA as the revision", p.eventErr)
		return
	case p.ref == "":
		p.note("no commit status was posted: there is no commit to name (set GITHUB_SHA, or expect a commit SHA as the revision)")
		return
	case p.finishing.Load():
		// The verdicts are known: the final statuses follow at once.
		p.stopStatuses = func() {}
		close(p.statusesDone)
		return
	}
	loopCtx, stop := context.WithCancel(ctx)
	p.stopStatuses = stop
	go func() {
		defer close(p.statusesDone)
		for {
			select {
			case <-loopCtx.Done():
				return
			case <-p.wake:
			}
			p.postPending(loopCtx)
		}
	}()
}

// waiting records that a cluster waits, and wakes the pending statuses' goroutine the first
// time; p.mu is held.
func (p *Publisher) waiting(cluster string) {
	if !p.cfg.CommitStatus || p.waits[cluster] {
		return
	}
	p.waits[cluster] = true
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// postPending posts the pending status of each context one of whose clusters waits and has
// no verdict yet, once.
func (p *Publisher) postPending(ctx context.Context) {
	p.mu.Lock()
	var due []*statusTarget
	descriptions := map[*statusTarget]string{}
	for _, t := range p.statusTargets {
		if t.pending || !slices.ContainsFunc(t.clusters, func(c string) bool { return p.waits[c] && p.verdicts[c] == result.VerdictInProgress }) {
			continue
		}
		t.pending = true
		due = append(due, t)
		if len(t.clusters) == 1 {
			descriptions[t] = statusText(report.ProgressDescription(p.messages[t.clusters[0]]))
			continue
		}
		verdicts := make(map[string]result.Verdict, len(t.clusters))
		for _, c := range t.clusters {
			verdicts[c] = p.verdicts[c]
		}
		descriptions[t] = statusText(report.FleetDescription(verdicts, false))
	}
	p.mu.Unlock()
	each(ctx, due, func(t *statusTarget) {
		if p.refused.Load() {
			return
		}
		switch err := p.commitStatus(ctx, t, "pending", descriptions[t]); {
		case err == nil:
		case denied(err):
			p.refusedNote(err)
		case ctx.Err() == nil && !p.pendingFailed.Swap(true):
			// Once: the final statuses say what matters, and each one that fails is noted.
			p.note("pending commit status not posted for %s (and maybe others): %s", t.context, brief(err))
		}
	})
}

// commitStatus posts one status of t on the verified commit, linked to the run.
func (p *Publisher) commitStatus(ctx context.Context, t *statusTarget, state, description string) error {
	req := &github.RepoStatus{State: github.Ptr(state), Context: github.Ptr(t.context), Description: github.Ptr(description)}
	if p.cfg.RunURL != "" {
		req.TargetURL = github.Ptr(p.cfg.RunURL)
	}
	return p.write(ctx, func() (*github.Response, error) {
		_, resp, err := p.api.gh.Repositories.CreateStatus(ctx, p.api.owner, p.api.repo, p.ref, *req)
		return resp, err
	})
}

// refusedNote notes, once, that GitHub refused the token the statuses; none is tried after.
func (p *Publisher) refusedNote(err error) {
	if !p.refused.Swap(true) {
		p.note("commit statuses not posted: GitHub refused the token (%s): grant the job `statuses: write`", brief(err))
	}
}

// finalStatus is a context's final state and description from the run's verdicts.
func finalStatus(t *statusTarget, byName map[string]result.Cluster) (state, description string) {
	if len(t.clusters) == 1 {
		c, ok := byName[t.clusters[0]]
		if !ok {
			return "error", "no verdict"
		}
		return commitState(c.Verdict), statusText(report.DeploymentDescription(c))
	}
	verdicts := make(map[string]result.Verdict, len(t.clusters))
	state = "success"
	for _, name := range t.clusters {
		v := result.VerdictUnknown
		if c, ok := byName[name]; ok {
			v = c.Verdict
		}
		verdicts[name] = v
		switch s := commitState(v); {
		case s == "failure":
			state = "failure"
		case s == "error" && state == "success":
			state = "error"
		}
	}
	return state, statusText(countsDescription(verdicts))
}

// countsDescription counts a fleet's verdicts and names the clusters that are not Current, as
// many as fit: "997/1000 Current, 2 Failed, 1 Unreachable; not Current: eu-3, us-7 and 1 more".
func countsDescription(verdicts map[string]result.Verdict) string {
	counts := map[result.Verdict]int{}
	var notCurrent []string
	for _, name := range slices.Sorted(maps.Keys(verdicts)) {
		counts[verdicts[name]]++
		if verdicts[name] != result.VerdictCurrent {
			notCurrent = append(notCurrent, sanitize.Line(name))
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d/%d Current", counts[result.VerdictCurrent], len(verdicts))
	for _, v := range result.Verdicts {
		if v != result.VerdictCurrent && counts[v] > 0 {
			fmt.Fprintf(&b, ", %d %s", counts[v], v)
		}
	}
	if len(notCurrent) == 0 {
		return b.String()
	}
	b.WriteString("; not Current: ")
	for i, n := range notCurrent {
		part := n
		if i > 0 {
			part = ", " + n
		}
		rest := fmt.Sprintf(" and %d more", len(notCurrent)-i)
		if len([]rune(b.String()+part)) > report.MaxDeploymentDescription-len(rest) {
			b.WriteString(rest)
			break
		}
		b.WriteString(part)
	}
	return b.String()
}

// finishStatuses posts every context's final status.
func (p *Publisher) finishStatuses(ctx context.Context, run result.Run) {
	byName := make(map[string]result.Cluster, len(run.Results))
	for _, c := range run.Results {
		byName[c.Name] = c
	}
	var mu sync.Mutex
	var failed []string
	var firstErr error
	each(ctx, p.statusTargets, func(t *statusTarget) {
		if p.refused.Load() {
			return
		}
		state, description := finalStatus(t, byName)
		if err := p.commitStatus(ctx, t, state, description); err != nil {
			if denied(err) {
				p.refusedNote(err)
				return
			}
			mu.Lock()
			failed = append(failed, t.context)
			if firstErr == nil {
				firstErr = err
			}
			mu.Unlock()
		}
	})
	if len(failed) > 0 {
		slices.Sort(failed)
		p.note("final commit status not posted for %s: %s", listSome(failed), brief(firstErr))
	}
}
