package assess

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/fluxhealth"
)

// TestPasses: a memory counts every assessment made with it, whatever the verdict, and only
// those: each cluster's count is its own.
func TestPasses(t *testing.T) {
	t.Parallel()
	root := flux.Ref{Kind: flux.KindKustomization, Namespace: "flux-system", Name: "app"}
	tests := []struct {
		name string
		// calls are the assessments made with each memory, in turn.
		calls []int
		want  []int
	}{
		{name: "a memory never used", calls: []int{0}, want: []int{0}},
		{name: "one assessment", calls: []int{1}, want: []int{1}},
		{name: "each cluster its own count", calls: []int{3, 1, 0}, want: []int{3, 1, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			spec := Spec{Resources: []flux.Ref{root}, Workloads: true, Health: fluxhealth.New(t.Context())}
			var got []int
			for _, n := range tt.calls {
				mem := NewMemory()
				for i := range n {
					// An empty view, then a view whose Kustomization is there: the pass
					// counts, not what it found.
					view := newFixtureView(t, "")
					if i%2 == 1 {
						view = newFixtureView(t, kustomizationFixture)
					}
					Assess(view, mem, spec, fixtureNow.Add(time.Duration(i)*time.Second))
				}
				got = append(got, mem.Passes())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Passes() per memory (-want +got):\n%s", diff)
			}
		})
	}
}

// kustomizationFixture is a Kustomization Ready at a revision.
const kustomizationFixture = `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: app, namespace: flux-system, generation: 1}
spec: {sourceRef: {kind: GitRepository, name: app}}
status:
  observedGeneration: 1
  lastAppliedRevision: main@sha1:a1b2c3d4e5f60718293a4b5c6d7e8f9012345678
  conditions:
  - {type: Ready, status: "True", reason: ReconciliationSucceeded, observedGeneration: 1}
`
