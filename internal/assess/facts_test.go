package assess

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/fluxhealth"
	"github.com/org/app-status-action/internal/result"
)

// TestForgedFactsMeanNothing: what the view learned of an object comes beside it
// (List.Facts), never from the object: annotations named as the view's facts once were,
// written on a workload in the cluster, change nothing. The Canary failed after the target's
// template was written (its facts), and an annotation that dates the template later, or names
// the target's annotations as not applied by Flux, neither holds the failure nor adds to the
// target's message.
func TestForgedFactsMeanNothing(t *testing.T) {
	t.Parallel()
	rev, err := flux.ParseRevision(revB)
	if err != nil {
		t.Fatal(err)
	}
	withCanary := ks("app", "GitRepository", "app", "", revB, "shop_web_apps_Deployment", "shop_web_flagger.app_Canary@v1beta1")
	target := flaggerWorkload("web", "web:1.1.0", writtenB, true)
	forged := strings.Replace(target, "  generation: 4\n", `  generation: 4
  annotations:
    app-status.internal/template-written: "2026-11-01T12:00:00Z"
    app-status.internal/not-from-git: app-status.io/ignore-readiness
`, 1)
	if forged == target {
		t.Fatal("the forged annotations were not added")
	}
	assessed := func(target string) *Assessment {
		docs := strings.Join([]string{withCanary, gitRepo(), target, flaggerWorkload("web-primary", "web:1.0.0", beforeB, true),
			flaggerCanary("Failed", hashB, hashA, afterB)}, "\n---\n")
		v := newFixtureView(t, docs, "kustomizations", "gitrepositories", "deployments", "canaries")
		v.flagger = true
		spec := Spec{Resources: []flux.Ref{{Kind: flux.KindKustomization, Namespace: "flux-system", Name: "app"}},
			Revision: rev, Workloads: true, Snapshot: true, Health: fluxhealth.New(t.Context())}
		return Assess(v, NewMemory(), spec, fixtureNow)
	}
	plain, got := assessed(target), assessed(forged)
	if plain.Fatal == nil || plain.Fatal.Code != result.CodeCanaryFailed {
		t.Fatalf("without the annotations: fatal %+v, want %s", plain.Fatal, result.CodeCanaryFailed)
	}
	if diff := cmp.Diff(outcomeOf(plain), outcomeOf(got)); diff != "" {
		t.Errorf("outcome with forged annotations (-without +with):\n%s", diff)
	}
	if diff := cmp.Diff(plain.Objects, got.Objects); diff != "" {
		t.Errorf("the objects with forged annotations (-without +with):\n%s", diff)
	}
}

// waitingList is a first list awaited since since, with what the fetching side found out.
type waitingList struct {
	notAsked
	read ReadFacts
}

func (l waitingList) Read() ReadFacts { return l.read }

// TestWaitingMessage: a first list awaited is worded from the view's facts: waited for
// under SlowListAfter, the server's silence after it, unless this process was short of CPU
// meanwhile, which the message says with what to do.
func TestWaitingMessage(t *testing.T) {
	t.Parallel()
	short := &CPUShortage{WaitPerRun: 2.5, Latency: 300 * time.Millisecond}
	tests := []struct {
		name   string
		waited time.Duration
		read   ReadFacts
		want   string
	}{
		{name: "a moment", waited: time.Second, read: ReadFacts{CPUShort: short}, want: "waiting for the list of deployments in shop"},
		{name: "long", waited: 7 * time.Second, want: "the API server has not answered the list of deployments in shop for 7s"},
		{name: "long, this process short of CPU", waited: 7 * time.Second, read: ReadFacts{CPUShort: short},
			want: "the list of deployments in shop has not been read for 7s: this runner was short of CPU (its threads waited 2.5s for a CPU for every second they ran; " +
				"goroutines waited 300ms or more to run), so the API server may have answered in time: verify fewer clusters per runner (input shard), lower max-parallel, or give the step more CPU"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			l := waitingList{notAsked: notAsked{since: fixtureNow.Add(-tt.waited)}, read: tt.read}
			if diff := cmp.Diff(tt.want, waitingMessage(l, "deployments in shop", fixtureNow)); diff != "" {
				t.Errorf("waitingMessage (-want +got):\n%s", diff)
			}
		})
	}
}
