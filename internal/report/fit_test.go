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
