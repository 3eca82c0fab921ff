package verify_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/testing/fakeapi"
	"github.com/org/app-status-action/internal/verify"
)

// TestProgressOfARun: by default a run tells a person when the cluster answered, when it
// applied the revision and its verdict, and none of its internal steps; ProgressSteps adds
// those (connecting, the lists, discovery), the rest unchanged.
func TestProgressOfARun(t *testing.T) {
	t.Parallel()
	const applied = "Kustomization/flux-system/app applied main@sha1:" + "a1b2c3d"
	tests := []struct {
		name      string
		behaviour fakeapi.Behaviour
		status    map[string]any // the Kustomization's status, when not the fake's
		timeout   time.Duration
		want      []string // what a person follows, in order, with the verdict
		step      string   // a step only ProgressSteps reports
	}{
		{
			name: "healthy", behaviour: fakeapi.Healthy, timeout: time.Minute,
			want: []string{"connected", applied, "verdict Current"},
			step: "waiting for the list of",
		},
		{
			name: "discovery hangs", behaviour: fakeapi.HangDiscovery, timeout: 3 * time.Second,
			want: []string{"connected", applied, "verdict Timeout"},
			step: "discovering",
		},
		{
			// Nothing applied yet, and so nothing to list: not "applied".
			name: "a new Kustomization, its first reconcile under way", timeout: 2 * time.Second,
			status: map[string]any{"conditions": []any{
				map[string]any{"type": "Reconciling", "status": "True", "reason": "Progressing", "message": "Fetching manifests for revision " + fakeRevision + " with a timeout of 9m30s"},
				map[string]any{"type": "Ready", "status": "Unknown", "reason": "Progressing", "message": "Reconciliation in progress"},
			}},
			want: []string{"connected", "Kustomization/flux-system/app: Fetching manifests for revision " + fakeRevision + " with a timeout of 9m30s", "verdict Timeout"},
			step: "waiting for the list of",
		},
	}
	for _, tt := range tests {
		for _, steps := range []bool{false, true} {
			t.Run(tt.name+map[bool]string{false: "", true: " with steps"}[steps], func(t *testing.T) {
				t.Parallel()
				var (
					mu    sync.Mutex
					got   []verify.Progress
					shown []string
				)
				resources, objects := fakeapi.App("app", fakeRevision, 30)
				if tt.status != nil {
					objects[0]["status"] = tt.status
				}
				server := fakeapi.Start(fakeapi.Options{Behaviour: tt.behaviour, Resources: resources, Objects: objects})
				t.Cleanup(server.Close)
				req := fakeRequest([]verify.Target{fakeTarget("prod", server)}, tt.timeout)
				req.ProgressSteps = steps
				req.Progress = func(p verify.Progress) {
					mu.Lock()
					defer mu.Unlock()
					got = append(got, p)
				}
				verify.Run(context.Background(), req)
				var stepSeen, stepsFirst bool
				for i, p := range got {
					if p.Step {
						stepSeen = stepSeen || strings.Contains(p.Message, tt.step)
						stepsFirst = stepsFirst || (i == 0 && p.Message == "connecting")
						continue
					}
					switch {
					case p.Final:
						shown = append(shown, "verdict "+string(p.Verdict))
					case p.Verdict != result.VerdictInProgress:
						shown = append(shown, string(p.Verdict)+" before the verdict: "+p.Message)
					default:
						shown = append(shown, p.Message)
					}
				}
				if diff := cmp.Diff(tt.want, shown); diff != "" {
					t.Errorf("progress a person follows (-want +got):\n%s\nall: %+v", diff, got)
				}
				if steps != stepSeen || steps != stepsFirst {
					t.Errorf("steps reported %t (connecting first: %t, %q: %t), want %t\nall: %+v", steps, stepsFirst, tt.step, stepSeen, steps, got)
				}
			})
		}
	}
}
