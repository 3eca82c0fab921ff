package verify

import (
	"cmp"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/org/app-status-action/internal/assess"
	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/report"
	"github.com/org/app-status-action/internal/result"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// scripted is one progress event of a scripted run, of the kind its source gives it.
type scripted struct {
	cluster string
	at      time.Duration
	kind    progressKind
	verdict result.Verdict
	message string
}

// demoScript is the demo's run as verifyCluster reports it: three clusters, each starting
// on a Kustomization just created, with the internal steps between what a person follows
// (staging's pods cannot pull their image).
func demoScript() []scripted {
	const ms = time.Millisecond
	var s []scripted
	add := func(cluster string, at time.Duration, kind progressKind, message string) {
		s = append(s, scripted{cluster: cluster, at: at, kind: kind, verdict: result.VerdictInProgress, message: message})
	}
	final := func(cluster string, at time.Duration, v result.Verdict, message string) {
		s = append(s, scripted{cluster: cluster, at: at, kind: progressFinal, verdict: v, message: message})
	}
	const ks = "Kustomization/flux-system/my-app: "
	const rev = " for revision main@sha1:5f1c0ffee0ddba11ab1e5eed0f0a1b2c3d4e5f60 with a timeout of 9m30s"
	for i, c := range []string{"prod-eu", "prod-us", "staging"} {
		at := time.Duration(20*i) * ms
		add(c, at, progressStep, "connecting")
		add(c, at+30*ms, progressMilestone, "connected")
		add(c, at+35*ms, progressStep, "waiting for the list of Kustomization in namespace flux-system")
		add(c, at+50*ms, progressState, ks+"waiting for kustomize-controller to report the Ready condition")
	}
	for i, c := range []string{"prod-eu", "prod-us", "staging"} {
		at := time.Duration(300+400*i) * ms
		add(c, at, progressPhase, ks+"Fetching manifests"+rev)
		// A step between two phases does not end the reconcile a person saw start.
		add(c, at+20*ms, progressStep, "waiting for the list of GitRepository in namespace flux-system")
		add(c, at+40*ms, progressPhase, ks+"Building manifests"+rev)
		add(c, at+90*ms, progressPhase, ks+"Detecting drift"+rev)
		add(c, at+150*ms, progressState, ks+"waiting for kustomize-controller to reconcile generation 1 for the first time")
		add(c, at+200*ms, progressMilestone, "Kustomization/flux-system/my-app applied main@sha1:5f1c0ff")
		add(c, at+200*ms, progressStep, "ConfigMap/my-app/web-config: discovering the API of ConfigMap")
		add(c, at+210*ms, progressStep, "waiting for the list of configmaps in namespace my-app")
		add(c, at+220*ms, progressStep, "waiting for the list of deployments in namespace my-app")
		add(c, at+230*ms, progressStep, "waiting for the list of replicasets in namespace my-app")
		add(c, at+240*ms, progressState, "waiting for Deployment/my-app/web: Available: 0/2")
		add(c, at+250*ms, progressStep, "waiting for the list of pods in namespace my-app")
		// The same state after a step: a person saw it already.
		add(c, at+260*ms, progressState, "waiting for Deployment/my-app/web: Available: 0/2")
		if c == "staging" {
			// Text from a cluster is cleaned to one line, whatever it holds.
			add(c, at+270*ms, progressStep, "waiting for the list of pods in namespace my-app\r\n::error::injected")
			final(c, at+300*ms, result.VerdictFailed, "Deployment/my-app/web: container \"web\" of pod web-d78446c75-8sbsx: failed to pull image \"ghcr.io/example/web:1.1.0-typo\": not found")
			continue
		}
		add(c, at+300*ms, progressState, "waiting for Deployment/my-app/web: Available: 1/2")
		final(c, at+380*ms, result.VerdictCurrent, "3 objects Current")
	}
	return s
}

// drain delivers what r holds, as its goroutine does for a writer that keeps up.
func drain(r *reporter) {
	for {
		batch, ok := r.next(false)
		if !ok {
			return
		}
		for _, p := range batch {
			r.fn(p.Progress)
		}
	}
}

// TestProgressGolden: the demo's scripted run, printed as the CLI prints it, by default (what a
// person follows) and with the internal steps (--verbose), against
// testdata/progress/*.golden. Run `go test ./internal/verify -run TestProgressGolden -update`
// to rewrite them, then read the diff.
func TestProgressGolden(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		steps bool
	}{{"default", false}, {"verbose", true}} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var out strings.Builder
			r := newProgressQueue(func(p Progress) {
				out.WriteString(report.ProgressLine(p.Elapsed, p.Cluster, p.Verdict, p.Final, p.Step, p.Message))
			}, tt.steps)
			for _, e := range demoScript() {
				r.report(e.cluster, e.at, e.verdict, e.message, e.kind)
				drain(r)
			}
			path := filepath.Join("testdata", "progress", tt.name+".golden")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if diff := gocmp.Diff(string(want), out.String()); diff != "" {
				t.Errorf("progress of the scripted run mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestProgressCoalescing: a writer that falls behind gets each cluster's latest state, never
// losing a milestone or a verdict to it, nor a state to a step.
func TestProgressCoalescing(t *testing.T) {
	t.Parallel()
	type event struct {
		kind    progressKind
		message string
	}
	tests := []struct {
		name   string
		steps  bool
		events []event
		want   []string
	}{
		{
			name: "states replace states, milestones stay, steps are dropped",
			events: []event{
				{progressStep, "connecting"}, {progressMilestone, "connected"}, {progressState, "Building"},
				{progressStep, "listing pods"}, {progressState, "Available: 0/2"}, {progressMilestone, "applied"},
				{progressState, "Available: 1/2"}, {progressState, "Available: 2/2"}, {progressFinal, "Current"},
			},
			want: []string{"connected", "Available: 0/2", "applied", "Available: 2/2", "Current"},
		},
		{
			name: "with steps: a step replaces a step, never a state; a state replaces both", steps: true,
			events: []event{
				{progressStep, "connecting"}, {progressMilestone, "connected"}, {progressStep, "listing Kustomizations"},
				{progressStep, "listing ConfigMaps"}, {progressState, "Building"}, {progressStep, "listing pods"},
				{progressState, "Available: 0/2"}, {progressStep, "listing ReplicaSets"}, {progressFinal, "Failed"},
			},
			want: []string{"connecting", "connected", "Available: 0/2", "listing ReplicaSets", "Failed"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got []string
			r := newProgressQueue(func(p Progress) { got = append(got, p.Message) }, tt.steps)
			for i, e := range tt.events {
				v := result.VerdictInProgress
				if e.kind == progressFinal {
					v = result.VerdictCurrent
				}
				r.report("prod", time.Duration(i)*time.Second, v, e.message, e.kind)
			}
			drain(r) // all at once: the writer was blocked until now
			if diff := gocmp.Diff(tt.want, got); diff != "" {
				t.Errorf("delivered (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAppliedMessage: the milestone names each requested object and the revision it applied,
// as Flux recorded it when it is the expected one, and waits until every requested object has
// recorded one.
func TestAppliedMessage(t *testing.T) {
	t.Parallel()
	want, err := flux.ParseRevision("5f1c0ff")
	if err != nil {
		t.Fatal(err)
	}
	const full, old = "main@sha1:5f1c0ffee0ddba11ab1e5eed0f0a1b2c3d4e5f60", "main@sha1:0123456789abcdef0123456789abcdef01234567"
	nested := result.FluxObject{ID: "HelmRelease/my-app/web", Owner: "Kustomization/flux-system/my-app"}
	tests := []struct {
		name    string
		objects []result.FluxObject
		want    string
	}{
		{
			name: "applied, as Flux records it",
			objects: []result.FluxObject{
				{ID: "Kustomization/flux-system/my-app", LastAppliedRevision: full, LastAttemptedRevision: full}, nested,
				{ID: "Kustomization/flux-system/infra", LastAppliedRevision: "main@sha1:5f1c0ff"},
			},
			want: "Kustomization/flux-system/my-app applied main@sha1:5f1c0ff; Kustomization/flux-system/infra applied main@sha1:5f1c0ff",
		},
		{
			name:    "health-checking the revision it applied, the previous one still recorded",
			objects: []result.FluxObject{{ID: "Kustomization/flux-system/my-app", LastAppliedRevision: old, LastAttemptedRevision: full}},
			want:    "Kustomization/flux-system/my-app applied main@sha1:5f1c0ff",
		},
		{
			name:    "a revision Flux records otherwise (an OCI artifact's origin)",
			objects: []result.FluxObject{{ID: "Kustomization/flux-system/my-app", LastAppliedRevision: "latest@sha256:abcdef"}},
			want:    "Kustomization/flux-system/my-app applied 5f1c0ff",
		},
		{
			name: "a new object, nothing applied yet",
			objects: []result.FluxObject{
				{ID: "Kustomization/flux-system/my-app", LastAppliedRevision: full},
				{ID: "Kustomization/flux-system/infra", LastAttemptedRevision: full},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := appliedMessage(tt.objects, want); got != tt.want {
				t.Errorf("appliedMessage() = %q, want %q", got, tt.want)
			}
		})
	}
}

// slowCache is a fakeCache whose lists of some kinds are still on their way, or failed.
type slowCache struct {
	objectCache
	inFlight map[schema.GroupResource]bool
	failing  map[schema.GroupResource]error
}

// inFlightList is a first list not arrived yet.
type inFlightList struct{ *staticList }

func (inFlightList) Synced() bool            { return false }
func (inFlightList) Err() error              { return nil }
func (inFlightList) WaitingSince() time.Time { return fixtureNow }

func (c slowCache) peek(key assess.ListKey) (assess.List, bool) {
	if _, ok := c.objectCache.peek(key); !ok {
		return nil, false
	}
	return c.get(key), true
}

func (c slowCache) get(key assess.ListKey) assess.List {
	l := c.objectCache.get(key).(*staticList)
	switch gr := key.GVR.GroupResource(); {
	case c.inFlight[gr]:
		return inFlightList{l}
	case c.failing[gr] != nil:
		return &staticList{store: l.store, listErr: c.failing[gr]}
	}
	return l
}

// deploymentStarting is a Deployment whose pods are not available yet, none of them failing.
const deploymentStarting = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop, generation: 3, uid: dep-web, annotations: {deployment.kubernetes.io/revision: "3"}}
spec: {replicas: 2}
status:
  observedGeneration: 3
  replicas: 2
  updatedReplicas: 2
  readyReplicas: 0
  availableReplicas: 0
  conditions:
  - {type: Progressing, status: "True", reason: ReplicaSetUpdated}`

// TestAssessProgressKind: what a cluster waits for is classified where it is found: a list on
// its way (the Flux objects', an inventory kind's, the classifier's) is an internal step of the
// run; a Flux object's condition, a named workload and a list that fails are what a person
// follows.
func TestAssessProgressKind(t *testing.T) {
	t.Parallel()
	pods, deployments, kustomizations := schema.GroupResource{Resource: "pods"}, schema.GroupResource{Group: "apps", Resource: "deployments"}, ksGVR.GroupResource()
	tests := []struct {
		name     string
		docs     string
		inFlight []schema.GroupResource
		failing  map[schema.GroupResource]error
		want     string // the expected revision, revB when empty
		message  string // the start of the pending message
		kind     progressKind
	}{
		{
			name: "the Kustomizations' list on its way", docs: kustomization(readyOnB) + "\n---\n" + deploymentCurrent + "\n---\n" + service,
			inFlight: []schema.GroupResource{kustomizations}, message: "waiting for the list of Kustomization in namespace flux-system", kind: progressStep,
		},
		{
			name: "an inventory kind's list on its way", docs: kustomization(readyOnB) + "\n---\n" + deploymentCurrent + "\n---\n" + service,
			inFlight: []schema.GroupResource{deployments}, message: "waiting for the list of deployments in namespace shop", kind: progressStep,
		},
		{
			name: "the classifier's pods on their way", docs: kustomization(readyOnB) + "\n---\n" + deploymentStarting + "\n---\n" + service,
			inFlight: []schema.GroupResource{pods}, message: "waiting for the list of pods in namespace shop", kind: progressStep,
		},
		{
			name: "a workload not available yet", docs: kustomization(readyOnB) + "\n---\n" + deploymentStarting + "\n---\n" + service,
			message: "waiting for Deployment/shop/web",
		},
		{
			name: "Flux building the revision", docs: kustomization(buildingB) + "\n---\n" + deploymentCurrent + "\n---\n" + service,
			message: "Kustomization/flux-system/app: Building manifests for revision " + revB, kind: progressPhase,
		},
		{
			name: "Flux health-checking the revision", docs: kustomization(healthCheckingB) + "\n---\n" + deploymentCurrent + "\n---\n" + service,
			message: "Kustomization/flux-system/app: Running health checks for revision " + revB, kind: progressPhase,
		},
		{
			name: "Flux applied another revision", docs: kustomization(readyOnB) + "\n---\n" + deploymentCurrent + "\n---\n" + service, want: revA,
			message: "Kustomization/flux-system/app: applied " + revB[:17] + ", waiting for " + revA[:17],
		},
		{
			name: "an object not created yet", docs: kustomization(readyOnB) + "\n---\n" + deploymentCurrent,
			message: "Service/shop/web not found",
		},
		{
			name: "a list that fails", docs: kustomization(readyOnB) + "\n---\n" + deploymentCurrent + "\n---\n" + service,
			failing: map[schema.GroupResource]error{deployments: apierrors.NewInternalError(errors.New("etcd is down"))},
			message: "listing deployments in namespace shop: ",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newFakeState(t, cmp.Or(tt.want, revB), tt.docs)
			c := slowCache{objectCache: s.watches, inFlight: map[schema.GroupResource]bool{}, failing: tt.failing}
			for _, gr := range tt.inFlight {
				c.inFlight[gr] = true
			}
			s.watches = c
			e := s.assess(fixtureNow)
			if e.Fatal != nil || e.Pending == nil {
				t.Fatalf("assess() settled %+v, pending %+v; want it to wait", e.Fatal, e.Pending)
			}
			if !strings.HasPrefix(e.Pending.Message, tt.message) || progressOf(e.Pending.Progress) != tt.kind {
				t.Errorf("assess() waits for %q, kind %d; want %q..., kind %d", e.Pending.Message, progressOf(e.Pending.Progress), tt.message, tt.kind)
			}
		})
	}
}
