package main

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/org/app-status-action/internal/testing/testbed"
)

// latencyResult is one timed measure of the three tools on the same events.
type latencyResult struct {
	Runs, Clusters, Objects int
	Tools                   []toolTimes
	// Rollout is how long each run's rollout took, from publishing the revision to the last
	// object Current (or the first fatal pod state): context for the latencies.
	Rollout []time.Duration
}

// toolTimes are one tool's delays after the event.
type toolTimes struct {
	Name string
	// PerCluster is, for every cluster of every run, from the cluster's event to the tool's
	// verdict line for that cluster.
	PerCluster []time.Duration
	// Run is, for every run, from the last cluster's event to the tool's exit: what a CI step
	// waits.
	Run []time.Duration
	// Wrong counts verdicts other than the expected one (they are left out of the times).
	Wrong []string
}

func (r *latencyResult) tool(name string) *toolTimes {
	for i := range r.Tools {
		if r.Tools[i].Name == name {
			return &r.Tools[i]
		}
	}
	r.Tools = append(r.Tools, toolTimes{Name: name})
	return &r.Tools[len(r.Tools)-1]
}

// record adds one run of tools, timed against the watcher's moments per cluster. failure says
// whether the verdict expected is a failure (else Current).
func (r *latencyResult) record(tools []*tool, moments map[string]time.Time, failure bool) {
	expected := func(said string) bool {
		if failure {
			return said != "Current" && !strings.HasPrefix(said, "error")
		}
		return said == "Current"
	}
	var last time.Time
	for _, t := range moments {
		if t.After(last) {
			last = t
		}
	}
	for _, t := range tools {
		tt := r.tool(t.Name)
		for cluster, event := range moments {
			at, ok := t.Verdict[cluster]
			switch {
			case !ok:
				tt.Wrong = append(tt.Wrong, cluster+": no verdict")
			case !expected(t.Said[cluster]):
				tt.Wrong = append(tt.Wrong, cluster+": "+t.Said[cluster])
			default:
				tt.PerCluster = append(tt.PerCluster, at.Sub(event))
			}
		}
		tt.Run = append(tt.Run, t.Exit.Sub(last))
	}
}

// measureLatency rolls a new revision of an app out on every cluster, runs times, with the
// three tools waiting for it, and times each tool's verdict from the moment the last object
// became Current.
func measureLatency(ctx context.Context, e *env, bed *testbed.Bed, w *watcher, cfg config) (*latencyResult, error) {
	app := fluxApp{Name: "bench-app", Deployments: cfg.deployments, ProgressDeadline: 600}
	res := &latencyResult{Runs: cfg.runs, Clusters: len(bed.Clusters), Objects: 2*app.Deployments + 1}
	dir := filepath.Join(e.workdir, app.Name)
	if err := app.write(dir, 0); err != nil {
		return nil, err
	}
	commit := commitFor(app.Name, 0)
	w.expect(app.Name, app.Name, gitRevision(commit), false)
	if err := eachCluster(ctx, bed, func(c *testbed.Cluster) error {
		_, err := c.DeployApp(ctx, testbed.Kustomization{Name: app.Name, TargetNamespace: app.Name}, dir, commit)
		return err
	}); err != nil {
		return nil, err
	}
	if err := waitDone(ctx, w, app.Name, 3*time.Minute); err != nil {
		return nil, err
	}
	for run := 1; run <= cfg.runs; run++ {
		if err := app.write(dir, run); err != nil {
			return nil, err
		}
		commit := commitFor(app.Name, run)
		rev := gitRevision(commit)
		w.expect(app.Name, app.Name, rev, false)
		tools, err := e.startPeers(app, rev, commit, 3*time.Minute, filepath.Join(e.workdir, fmt.Sprintf("kubectl-cache-l%d", run)))
		if err != nil {
			return nil, err
		}
		// Every tool is connected and waiting before the revision appears.
		time.Sleep(2 * time.Second)
		published := time.Now()
		if err := eachCluster(ctx, bed, func(c *testbed.Cluster) error {
			_, err := c.PublishGit(ctx, "flux-system", app.Name, dir, commit)
			return err
		}); err != nil {
			killAll(tools)
			return nil, err
		}
		if err := waitTools(ctx, tools, 4*time.Minute); err != nil {
			return nil, err
		}
		if err := waitDone(ctx, w, app.Name, 30*time.Second); err != nil {
			return nil, err
		}
		done, _ := w.moments(app.Name)
		res.record(tools, done, false)
		res.Rollout = append(res.Rollout, latest(done).Sub(published))
		logf("latency run %d/%d: rollout %s; after the last object turned Current: %s", run, cfg.runs,
			latest(done).Sub(published).Round(time.Millisecond), describeRun(tools, done))
	}
	return res, nil
}

// measureFailFast updates healthy apps to a revision whose pods cannot pull their image, one
// app per run, the runs staggered a few seconds apart so they overlap, and times each tool's
// failure verdict from the first fatal pod state.
func measureFailFast(ctx context.Context, e *env, bed *testbed.Bed, w *watcher, cfg config) (*latencyResult, error) {
	res := &latencyResult{Runs: cfg.runs, Clusters: len(bed.Clusters), Objects: 3}
	apps := make([]fluxApp, cfg.runs)
	dirs := make([]string, cfg.runs)
	for i := range apps {
		apps[i] = fluxApp{Name: fmt.Sprintf("bench-fail-%d", i+1), Deployments: 1, ProgressDeadline: cfg.failDeadline}
		dirs[i] = filepath.Join(e.workdir, apps[i].Name)
		if err := apps[i].write(dirs[i], 0); err != nil {
			return nil, err
		}
		commit := commitFor(apps[i].Name, 0)
		w.expect(apps[i].Name, apps[i].Name, gitRevision(commit), false)
		if err := eachCluster(ctx, bed, func(c *testbed.Cluster) error {
			_, err := c.DeployApp(ctx, testbed.Kustomization{Name: apps[i].Name, TargetNamespace: apps[i].Name}, dirs[i], commit)
			return err
		}); err != nil {
			return nil, err
		}
	}
	for _, a := range apps {
		if err := waitDone(ctx, w, a.Name, 3*time.Minute); err != nil {
			return nil, err
		}
	}
	logf("fail-fast: %d healthy apps rolled out; publishing a revision that cannot pull its image to each, %s apart", len(apps), failStagger)
	var all [][]*tool
	commits := make([]string, len(apps))
	for i := range apps {
		apps[i].Broken = true
		if err := apps[i].write(dirs[i], 1); err != nil {
			return nil, err
		}
		commits[i] = commitFor(apps[i].Name, 1)
		w.expect(apps[i].Name, apps[i].Name, gitRevision(commits[i]), true)
		tools, err := e.startPeers(apps[i], gitRevision(commits[i]), commits[i], 4*time.Minute, filepath.Join(e.workdir, fmt.Sprintf("kubectl-cache-f%d", i+1)))
		if err != nil {
			for _, ts := range all {
				killAll(ts)
			}
			return nil, err
		}
		all = append(all, tools)
	}
	time.Sleep(2 * time.Second)
	published := make([]time.Time, len(apps))
	g, gctx := errgroup.WithContext(ctx)
	for i := range apps {
		g.Go(func() error {
			select {
			case <-gctx.Done():
				return gctx.Err()
			case <-time.After(time.Duration(i) * failStagger):
			}
			published[i] = time.Now()
			return eachCluster(gctx, bed, func(c *testbed.Cluster) error {
				_, err := c.PublishGit(gctx, "flux-system", apps[i].Name, dirs[i], commits[i])
				return err
			})
		})
	}
	if err := g.Wait(); err != nil {
		for _, ts := range all {
			killAll(ts)
		}
		return nil, err
	}
	for i, tools := range all {
		if err := waitTools(ctx, tools, 5*time.Minute); err != nil {
			return nil, err
		}
		_, failed := w.moments(apps[i].Name)
		for cluster, t := range failed {
			if t.IsZero() {
				return nil, fmt.Errorf("%s: the bench saw no fatal pod state on %s", apps[i].Name, cluster)
			}
		}
		res.record(tools, failed, true)
		res.Rollout = append(res.Rollout, latest(failed).Sub(published[i]))
		logf("fail-fast run %d/%d: first fatal pod state %s after publishing; after it: %s", i+1, len(apps),
			latest(failed).Sub(published[i]).Round(time.Millisecond), describeRun(tools, failed))
	}
	return res, nil
}

const failStagger = 4 * time.Second

func eachCluster(ctx context.Context, bed *testbed.Bed, fn func(*testbed.Cluster) error) error {
	g, _ := errgroup.WithContext(ctx)
	for _, c := range bed.Clusters {
		g.Go(func() error { return fn(c) })
	}
	return g.Wait()
}

func waitDone(ctx context.Context, w *watcher, app string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return w.waitDone(ctx, app)
}

func waitTools(ctx context.Context, tools []*tool, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for _, t := range tools {
		if err := t.wait(ctx); err != nil {
			killAll(tools)
			return err
		}
	}
	return nil
}

func killAll(tools []*tool) {
	for _, t := range tools {
		t.kill()
	}
}

func latest(ts map[string]time.Time) time.Time {
	var last time.Time
	for _, t := range ts {
		if t.After(last) {
			last = t
		}
	}
	return last
}

// describeRun says when each tool exited after the run's event and, per cluster, when it gave
// its verdict after the cluster's event.
func describeRun(tools []*tool, moments map[string]time.Time) string {
	event := latest(moments)
	var parts []string
	for _, t := range tools {
		var each []string
		for _, c := range slices.Sorted(maps.Keys(moments)) {
			if at, ok := t.Verdict[c]; ok {
				each = append(each, at.Sub(moments[c]).Round(100*time.Microsecond).String())
			}
		}
		s := fmt.Sprintf("%s exited +%s (clusters %s)", t.Name, t.Exit.Sub(event).Round(time.Millisecond), strings.Join(each, " "))
		if t.Err != nil {
			s += " (" + t.Err.Error() + ")"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}
