package report

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/org/app-status-action/internal/result"
)

// bigRun is a fleet of clusters, every one failing with 200 objects, long logs and events.
func bigRun(clusters int) result.Run {
	var cs []result.Cluster
	for i := range clusters {
		c := result.Cluster{Name: fmt.Sprintf("cluster-%04d", i), Verdict: result.VerdictFailed, Code: result.CodeCrashLoop,
			Message: strings.Repeat("m", 800), Flux: []result.FluxObject{{ID: "Kustomization/flux-system/app"}, {ID: "HelmRelease/app/db", Owner: "Kustomization/flux-system/app"}}}
		for j := range 200 {
			o := result.Object{ID: fmt.Sprintf("Deployment/app/web-%03d", j), Kind: "Deployment", Status: result.ObjectCurrent}
			if j == 0 {
				o.Status = result.ObjectFailed
				o.Failure = &result.Failure{Code: result.CodeCrashLoop, Logs: strings.Repeat("a log line\n", 40),
					Events: []result.Event{{Reason: "BackOff"}, {Reason: "Failed"}, {Reason: "Killing"}, {Reason: "Pulled"}}}
			}
			c.Objects = append(c.Objects, o)
		}
		cs = append(cs, c)
	}
	return result.NewRun([]string{"Kustomization/flux-system/app"}, "", cs, 0)
}

func TestFit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		run       result.Run
		max       int
		truncated bool
	}{
		{"fits as it is", mixedRun(), 1 << 20, false},
		{"a few clusters, cut to objects", bigRun(3), 20 << 10, true},
		{"a fleet, cut to clusters", bigRun(400), 100 << 10, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			before := size(tt.run)
			got, cut := Fit(tt.run, tt.max)
			if cut != tt.truncated || got.Truncated != tt.truncated {
				t.Fatalf("Fit() cut = %t (Truncated %t), want %t (size %d, max %d)", cut, got.Truncated, tt.truncated, before, tt.max)
			}
			if s := size(got); s > tt.max {
				t.Errorf("Fit() size = %d, want at most %d", s, tt.max)
			}
			if diff := cmp.Diff(tt.run.ReadyClusters, got.ReadyClusters); diff != "" {
				t.Errorf("ready clusters changed (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.run.FailedClusters, got.FailedClusters); diff != "" {
				t.Errorf("failed clusters changed (-want +got):\n%s", diff)
			}
			for i, c := range got.Results {
				if c.Name == LeftOutName {
					// The last entry stands for the clusters left out, and says how many.
					left := len(tt.run.Results) - i
					if i != len(got.Results)-1 || !c.Truncated || c.Verdict != result.VerdictFailed || !strings.HasPrefix(c.Message, fmt.Sprintf("%d more clusters left out", left)) {
						t.Errorf("entry %d of %d = %+v, want the last, Failed, saying %d clusters were left out", i, len(got.Results), c, left)
					}
					continue
				}
				orig := tt.run.Results[i]
				if c.Name != orig.Name || c.Verdict != orig.Verdict || c.Code != orig.Code {
					t.Errorf("cluster %d = %s %s %s, want %s %s %s", i, c.Name, c.Verdict, c.Code, orig.Name, orig.Verdict, orig.Code)
				}
				if tt.truncated && !c.Truncated {
					t.Errorf("cluster %s was cut but does not say so", c.Name)
				}
			}
			if tt.truncated && size(tt.run) != before {
				t.Error("Fit() changed the run it was given")
			}
		})
	}
}

// TestFitSizesAddUp: the sizes Fit adds up from a run's parts are the size of its encoding,
// for the fixtures and for runs cut at every step.
func TestFitSizesAddUp(t *testing.T) {
	t.Parallel()
	runs := map[string]result.Run{"mixed": mixedRun(), "big": bigRun(3), "empty": result.NewRun(nil, "", nil, 0)}
	for _, max := range []int{200 << 10, 60 << 10, 20 << 10, 8 << 10, 2 << 10} {
		got, _ := Fit(bigRun(3), max)
		runs[fmt.Sprintf("cut to %d", max)] = got
	}
	for name, run := range runs {
		if got, want := measureRun(&run).total(), size(run); got != want {
			t.Errorf("%s: sizes add up to %d, the encoding is %d bytes", name, got, want)
		}
	}
}

// TestFitKeepsEveryClusterWhateverItsMessages: one Flux object's huge message, many
// clusters with long ones, or huge preflight warnings and notes never cost a cluster its
// entry (issue 20: `results = []` for one 500 KB Kustomization message, 59 of 100 clusters
// with 5.6 KB messages).
func TestFitKeepsEveryClusterWhateverItsMessages(t *testing.T) {
	t.Parallel()
	huge := result.NewRun(nil, "", []result.Cluster{{Name: "prod", Verdict: result.VerdictFailed, Code: result.CodeFluxBuildFailed,
		Message: strings.Repeat("x", 500<<10),
		Flux:    []result.FluxObject{{ID: "Kustomization/flux-system/app", Message: strings.Repeat("y", 500<<10)}}}}, 0)
	var many []result.Cluster
	for i := range 100 {
		many = append(many, result.Cluster{Name: fmt.Sprintf("c%03d", i), Verdict: result.VerdictFailed, Code: result.CodeFluxBuildFailed,
			Flux: []result.FluxObject{{ID: "Kustomization/flux-system/app", Message: strings.Repeat("z", 5600)}}})
	}
	var preflight []result.Cluster
	for i := range 3 {
		preflight = append(preflight, result.Cluster{Name: fmt.Sprintf("p%d", i), Verdict: result.VerdictFailed, Code: result.CodeFluxBuildFailed,
			Flux: []result.FluxObject{{ID: "Kustomization/flux-system/app"}},
			Preflight: &result.Preflight{Warnings: []string{"helm-controller in flux-system is not available (" + strings.Repeat("w", 400<<10) + ")"},
				Notes: []string{"source-controller in flux-system: " + strings.Repeat("n", 400<<10)}}})
	}
	for name, tt := range map[string]struct {
		run result.Run
		max int
	}{
		"one 500 KB message":     {huge, 400 << 10},
		"100 clusters of 5.6 KB": {result.NewRun(nil, "", many, 0), 400 << 10},
		"400 KB preflight texts": {result.NewRun(nil, "", preflight, 0), 100 << 10},
	} {
		before := size(tt.run)
		got, cut := Fit(tt.run, tt.max)
		if size(tt.run) != before {
			t.Errorf("%s: Fit changed the run it was given", name)
		}
		if !cut || len(got.Results) != len(tt.run.Results) || size(got) > tt.max {
			t.Errorf("%s: cut %t, %d of %d clusters, %d bytes (max %d)", name, cut, len(got.Results), len(tt.run.Results), size(got), tt.max)
		}
		for _, c := range got.Results {
			if !c.Truncated || len(c.Flux) != 1 || c.Verdict != result.VerdictFailed {
				t.Errorf("%s: cluster %s = %+v", name, c.Name, c)
			}
		}
	}
}

// BenchmarkFit: fitting a fleet's run into the outputs' budget costs about one encoding of it.
// Run: go test -run '^$' -bench Fit -benchtime 3x ./internal/report
func BenchmarkFit(b *testing.B) {
	for _, n := range []int{100, 1000} {
		run := bigRun(n)
		b.Run(fmt.Sprintf("clusters=%d", n), func(b *testing.B) {
			for b.Loop() {
				Fit(run, 400<<10)
			}
		})
	}
}

// TestFitNeverOverBudget: at every budget from the run's size down, what Fit returns fits, or
// has no cluster left at all (the budget is below the document with no clusters).
func TestFitNeverOverBudget(t *testing.T) {
	t.Parallel()
	for name, run := range map[string]result.Run{"mixed": mixedRun(), "big": bigRun(1), "hostile": hostileRun()} {
		for max := size(run) - 1; max > 0; max -= 3 {
			got, cut := Fit(run, max)
			if s := size(got); s > max && len(got.Results) > 0 {
				t.Fatalf("%s: Fit(max %d) = %d bytes with %d clusters", name, max, s, len(got.Results))
			}
			if !cut || !got.Truncated {
				t.Fatalf("%s: Fit(max %d) does not say it cut", name, max)
			}
		}
	}
}

// TestFitKeepsRequestedFluxObjects: only the Flux objects nested in others are left out to
// make room while a cluster keeps any; the requested ones (a failing HelmRelease among them)
// stay until every Flux object must go.
func TestFitKeepsRequestedFluxObjects(t *testing.T) {
	t.Parallel()
	c := result.Cluster{Name: "prod", Verdict: result.VerdictFailed, Code: result.CodeFluxUpgradeFailed, Message: strings.Repeat("m", 5000),
		Flux: []result.FluxObject{
			{ID: "Kustomization/flux-system/app", Verdict: result.VerdictCurrent, Message: strings.Repeat("k", 900)},
			{ID: "HelmRelease/app/web", Verdict: result.VerdictFailed, Code: result.CodeFluxUpgradeFailed, Message: strings.Repeat("w", 900)},
			{ID: "HelmRelease/app/db", Owner: "Kustomization/flux-system/app", Verdict: result.VerdictCurrent, Message: strings.Repeat("d", 900)},
		}}
	run := result.NewRun(nil, "", []result.Cluster{c}, 0)
	sawNestedGo := false
	for max := size(run); max > 500; max -= 50 {
		got, _ := Fit(run, max)
		if len(got.Results) == 0 {
			break
		}
		var ids []string
		for _, f := range got.Results[0].Flux {
			ids = append(ids, f.ID)
		}
		switch len(ids) {
		case 3, 0:
		case 2:
			sawNestedGo = true
			if diff := cmp.Diff([]string{"Kustomization/flux-system/app", "HelmRelease/app/web"}, ids); diff != "" {
				t.Errorf("max %d: Flux objects kept (-want +got):\n%s", max, diff)
			}
		default:
			t.Errorf("max %d: Flux objects kept %v: a requested one went before the nested one or with it", max, ids)
		}
	}
	if !sawNestedGo {
		t.Error("no budget left out the nested Flux object alone")
	}
}

// TestFitSaysWhenClustersAreLeftOut: a fleet too large for even minimal entries keeps the
// first clusters and ends with one entry that says how many were left out.
func TestFitSaysWhenClustersAreLeftOut(t *testing.T) {
	t.Parallel()
	run := bigRun(400)
	got, _ := Fit(run, 20<<10)
	n := len(got.Results)
	if n < 2 || n >= len(run.Results) {
		t.Fatalf("%d of %d clusters kept: the test wants some left out", n, len(run.Results))
	}
	last := got.Results[n-1]
	if last.Name != LeftOutName || !strings.HasPrefix(last.Message, fmt.Sprintf("%d more clusters left out", len(run.Results)-n+1)) {
		t.Errorf("last entry = %+v, want the one that says how many were left out", last)
	}
	if s := size(got); s > 20<<10 {
		t.Errorf("size %d, want at most %d", s, 20<<10)
	}
}
