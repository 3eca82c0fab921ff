package publish

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/testing/fakegithub"
)

// TestDeploymentEnvironmentFlags: production_environment and transient_environment are sent
// as given, and left out (GitHub's defaults) when unset.
func TestDeploymentEnvironmentFlags(t *testing.T) {
	t.Parallel()
	yes, no := true, false
	for _, tt := range []struct {
		name                  string
		production, transient *bool
		want                  map[string]any
	}{
		{"unset", nil, nil, map[string]any{}},
		{"production", &yes, &no, map[string]any{"production_environment": true, "transient_environment": false}},
		{"preview", &no, &yes, map[string]any{"production_environment": false, "transient_environment": true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := fakegithub.Start(t, fakegithub.Options{Token: token, Owner: "org", Repo: "app"})
			cfg := config(s)
			cfg.ProductionEnvironment, cfg.TransientEnvironment = tt.production, tt.transient
			if notes := publishRun(t, cfg, run(eu)); len(notes) != 0 {
				t.Fatalf("notes %q", notes)
			}
			var bodies []map[string]any
			for _, c := range s.Calls() {
				if c.Method == "POST" && c.Path == "/repos/org/app/deployments" {
					got := map[string]any{}
					for _, k := range []string{"production_environment", "transient_environment"} {
						if v, ok := c.Body[k]; ok {
							got[k] = v
						}
					}
					bodies = append(bodies, got)
				}
			}
			if diff := cmp.Diff([]map[string]any{tt.want}, bodies); diff != "" {
				t.Errorf("the flags of the deployment's request (-want +got):\n%s", diff)
			}
			d := s.Deployments()
			if len(d) != 1 || d[0].ProductionEnvironment != (tt.production != nil && *tt.production) || d[0].TransientEnvironment != (tt.transient != nil && *tt.transient) {
				t.Errorf("deployment %+v, want production %v transient %v", d, tt.production, tt.transient)
			}
		})
	}
}

// TestOthersDeploymentsUntouched: the deployment GitHub created for a job with an
// environment: (task deploy), another tool's with app-status's task, and app-status's own for
// other resources, all of the same commit and environment, never get a status; the run
// creates its own with its task and finds it again on a re-run.
func TestOthersDeploymentsUntouched(t *testing.T) {
	t.Parallel()
	s := fakegithub.Start(t, fakegithub.Options{Token: token, Owner: "org", Repo: "app"})
	seeded := map[int64]int{} // ID → its statuses
	for _, d := range []fakegithub.Deployment{
		{SHA: commit, Environment: "eu", Task: "deploy", Creator: "github-actions[bot]",
			Statuses: []fakegithub.Status{{State: "success", LogURL: "https://github.com/org/app/actions/runs/6/job/1"}}},
		{SHA: commit, Environment: "eu", Task: "deploy:app-status", Creator: "another-tool[bot]", Payload: map[string]any{"version": "1.2.3"}},
		{SHA: commit, Environment: "eu", Task: "deploy:app-status", Creator: "github-actions[bot]",
			Payload: map[string]any{"app-status": map[string]any{"resources": []any{"HelmRelease/apps/other"}, "clusters": []any{"eu"}}}},
	} {
		seeded[s.SeedDeployment(d)] = len(d.Statuses)
	}
	cfg := config(s)
	for i := range 2 {
		if notes := publishRun(t, cfg, run(eu)); len(notes) != 0 {
			t.Fatalf("run %d: notes %q", i+1, notes)
		}
	}
	deps := s.Deployments()
	if len(deps) != len(seeded)+1 {
		t.Fatalf("%d deployments, want the %d seeded and one of ours: %+v", len(deps), len(seeded), deps)
	}
	for _, d := range deps {
		if before, ok := seeded[d.ID]; ok {
			if len(d.Statuses) != before {
				t.Errorf("%s's deployment (task %s) was written: %+v", d.Creator, d.Task, d.Statuses)
			}
			continue
		}
		var states []string
		for _, st := range d.Statuses {
			states = append(states, st.State)
		}
		if d.Task != "deploy:app-status" || d.SHA != commit || !cmp.Equal(states, []string{"in_progress", "success", "in_progress", "success"}) {
			t.Errorf("our deployment: task %s sha %s states %q, want deploy:app-status, %s, two runs' statuses", d.Task, d.SHA, states, commit)
		}
	}
}

// TestDeploymentPerJob: two jobs that verify the same resources into one environment keep a
// deployment each, whether their keys or their clusters differ; a re-run of a job writes its
// own again.
func TestDeploymentPerJob(t *testing.T) {
	t.Parallel()
	s := fakegithub.Start(t, fakegithub.Options{Token: token, Owner: "org", Repo: "app"})
	for _, job := range []struct {
		key     string
		cluster result.Cluster
	}{
		{"staging/verify", eu}, {"production/verify", eu}, {"staging/verify", eu}, {"staging/verify", ap},
	} {
		cfg := config(s)
		cfg.Environment, cfg.CommentKey = "prod", job.key
		if notes := publishRun(t, cfg, run(job.cluster)); len(notes) != 0 {
			t.Fatalf("job %s: notes %q", job.key, notes)
		}
	}
	want := []deployment{
		{Environment: "prod", Ref: commit, States: []string{"in_progress", "success", "in_progress", "success"}, Last: "Current"},
		{Environment: "prod", Ref: commit, States: []string{"in_progress", "success"}, Last: "Current"},
		{Environment: "prod", Ref: commit, States: []string{"in_progress", "error"}, Last: "Unreachable: dial tcp 10.0.0.1:443: i/o timeout"},
	}
	if diff := cmp.Diff(want, deployments(s)); diff != "" {
		t.Errorf("deployments (-want +got):\n%s", diff)
	}
}
