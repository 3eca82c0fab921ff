package verify

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"
	"sigs.k8s.io/yaml"

	"github.com/org/app-status-action/internal/assess"
	"github.com/org/app-status-action/internal/flux"
)

var (
	externalArtifactGVR = schema.GroupVersionResource{Group: "source.toolkit.fluxcd.io", Version: "v1", Resource: "externalartifacts"}
	chartGVR            = schema.GroupVersionResource{Group: "source.toolkit.fluxcd.io", Version: "v1", Resource: "helmcharts"}
	releaseGVR          = flux.KindHelmRelease.GroupVersionResource()
)

// sourceControllerFake plays the controllers of a fake dynamic client: every tick it handles
// the reconcile request of the objects it serves (status.lastHandledReconcileAt set to the
// annotation, and Ready as given), and it logs every request sent and handled, in order.
type sourceControllerFake struct {
	dc     *dynamicfake.FakeDynamicClient
	serves map[schema.GroupVersionResource]bool
	ready  string
	mu     sync.Mutex
	log    []string
}

func (f *sourceControllerFake) record(s string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.log = append(f.log, s)
}

// retract takes back an event recorded that did not happen.
func (f *sourceControllerFake) retract(s string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if i := slices.Index(f.log, s); i >= 0 {
		f.log = slices.Delete(f.log, i, i+1)
	}
}

func (f *sourceControllerFake) events() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.log)
}

func (f *sourceControllerFake) run(ctx context.Context) {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		for gvr := range f.serves {
			list, err := f.dc.Resource(gvr).Namespace("flux-system").List(ctx, metav1.ListOptions{})
			if err != nil {
				continue
			}
			for i := range list.Items {
				obj := &list.Items[i]
				req := obj.GetAnnotations()[flux.RequestedAtAnnotation]
				handled, _, _ := unstructured.NestedString(obj.Object, "status", "lastHandledReconcileAt")
				if req == "" || req == handled {
					continue
				}
				_ = unstructured.SetNestedField(obj.Object, req, "status", "lastHandledReconcileAt")
				_ = unstructured.SetNestedSlice(obj.Object, []any{map[string]any{"type": "Ready", "status": f.ready}}, "status", "conditions")
				// (Logged before the update shows it: the run may read it and send its next
				// request before Update returns.)
				event := "handled " + gvr.Resource + "/" + obj.GetName()
				f.record(event)
				if _, err := f.dc.Resource(gvr).Namespace("flux-system").Update(ctx, obj, metav1.UpdateOptions{}); err != nil {
					f.retract(event)
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// TestRequestSourcesInTurn: without a revision, nothing says the source has fetched but its
// handling of the run's request. The requested object is asked only once Flux has handled the
// request of its source (a HelmChart's own source first), as `flux reconcile --with-source`
// does: asked at once, kustomize-controller would apply the artifact the source had before the
// run, and the verdict would be Current on it. A source that fails its reconcile has handled
// the request all the same; one never handled holds the object's request, and the progress
// says which request it waits for.
func TestRequestSourcesInTurn(t *testing.T) {
	t.Parallel()
	const git = `apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: app, namespace: flux-system, resourceVersion: "5"}
spec: {interval: 10m}
status:
  lastHandledReconcileAt: old
  artifact: {revision: "main@sha1:1111111111111111111111111111111111111111"}`
	const chart = `apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmChart
metadata: {name: web, namespace: flux-system, resourceVersion: "6"}
spec: {chart: ./charts/web, sourceRef: {kind: GitRepository, name: app}}`
	const ks = `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: app, namespace: flux-system, resourceVersion: "7"}
spec: {sourceRef: {kind: GitRepository, name: app}}`
	const hr = `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: web, namespace: flux-system, resourceVersion: "8"}
spec: {chartRef: {kind: HelmChart, name: web}}`
	const gen = `apiVersion: source.extensions.fluxcd.io/v1beta1
kind: ArtifactGenerator
metadata: {name: gen, namespace: flux-system, resourceVersion: "9"}
spec:
  sources: [{alias: app, kind: GitRepository, name: app}]`
	const artifact = `apiVersion: source.toolkit.fluxcd.io/v1
kind: ExternalArtifact
metadata: {name: app, namespace: flux-system, resourceVersion: "10"}
spec: {sourceRef: {apiVersion: source.extensions.fluxcd.io/v1beta1, kind: ArtifactGenerator, name: gen}}`
	const genOfChart = `apiVersion: source.extensions.fluxcd.io/v1beta1
kind: ArtifactGenerator
metadata: {name: gen, namespace: flux-system, resourceVersion: "9"}
spec:
  sources: [{alias: web, kind: HelmChart, name: web}]`
	const ksOfArtifact = `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: app, namespace: flux-system, resourceVersion: "7"}
spec: {sourceRef: {kind: ExternalArtifact, name: app}}`
	tests := []struct {
		name   string
		objs   []string
		root   flux.Ref
		serves []schema.GroupVersionResource
		ready  string
		want   []string
		// waits is the request the run is left waiting for, "" when it asks the object.
		waits string
	}{
		{name: "the source never handles the request", objs: []string{git, ks}, root: flux.Ref{Kind: flux.KindKustomization, Namespace: "flux-system", Name: "app"},
			want:  []string{"request gitrepositories/app"},
			waits: "GitRepository/flux-system/app: waiting for Flux to handle the reconcile request 2026-11-01T12:00:00Z (status.lastHandledReconcileAt)"},
		{name: "the source handles it", objs: []string{git, ks}, root: flux.Ref{Kind: flux.KindKustomization, Namespace: "flux-system", Name: "app"},
			serves: []schema.GroupVersionResource{gitGVR}, ready: "True",
			want: []string{"request gitrepositories/app", "handled gitrepositories/app", "request kustomizations/app"}},
		{name: "the source fails its reconcile", objs: []string{git, ks}, root: flux.Ref{Kind: flux.KindKustomization, Namespace: "flux-system", Name: "app"},
			serves: []schema.GroupVersionResource{gitGVR}, ready: "False",
			want: []string{"request gitrepositories/app", "handled gitrepositories/app", "request kustomizations/app"}},
		{name: "a chart's own source first", objs: []string{git, chart, hr}, root: flux.Ref{Kind: flux.KindHelmRelease, Namespace: "flux-system", Name: "web"},
			serves: []schema.GroupVersionResource{gitGVR, chartGVR}, ready: "True",
			want: []string{"request gitrepositories/app", "handled gitrepositories/app", "request helmcharts/web", "handled helmcharts/web", "request helmreleases/web"}},
		{name: "the chart never handles it", objs: []string{git, chart, hr}, root: flux.Ref{Kind: flux.KindHelmRelease, Namespace: "flux-system", Name: "web"},
			serves: []schema.GroupVersionResource{gitGVR}, ready: "True",
			want:  []string{"request gitrepositories/app", "handled gitrepositories/app", "request helmcharts/web"},
			waits: "HelmChart/flux-system/web: waiting for Flux to handle"},
		{name: "a generator's sources, then the generator", objs: []string{git, gen, artifact, ksOfArtifact}, root: flux.Ref{Kind: flux.KindKustomization, Namespace: "flux-system", Name: "app"},
			serves: []schema.GroupVersionResource{gitGVR, flux.ArtifactGeneratorGVR}, ready: "True",
			want: []string{"request gitrepositories/app", "handled gitrepositories/app", "request artifactgenerators/gen", "handled artifactgenerators/gen", "request kustomizations/app"}},
		{name: "a generator's HelmChart, after the chart's own source", objs: []string{git, chart, genOfChart, artifact, ksOfArtifact}, root: flux.Ref{Kind: flux.KindKustomization, Namespace: "flux-system", Name: "app"},
			serves: []schema.GroupVersionResource{gitGVR, chartGVR, flux.ArtifactGeneratorGVR}, ready: "True",
			want: []string{"request gitrepositories/app", "handled gitrepositories/app", "request helmcharts/web", "handled helmcharts/web",
				"request artifactgenerators/gen", "handled artifactgenerators/gen", "request kustomizations/app"}},
		{name: "a generator never asked before is waited on", objs: []string{git, gen, artifact, ksOfArtifact}, root: flux.Ref{Kind: flux.KindKustomization, Namespace: "flux-system", Name: "app"},
			serves: []schema.GroupVersionResource{gitGVR}, ready: "True",
			want:  []string{"request gitrepositories/app", "handled gitrepositories/app", "request artifactgenerators/gen"},
			waits: "ArtifactGenerator/flux-system/gen: waiting for Flux to handle"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var objs []runtime.Object
			for _, doc := range tt.objs {
				u := &unstructured.Unstructured{}
				if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
					t.Fatal(err)
				}
				objs = append(objs, u)
			}
			dc := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
				gitGVR: "GitRepositoryList", chartGVR: "HelmChartList", ksGVR: "KustomizationList", releaseGVR: "HelmReleaseList",
				flux.ArtifactGeneratorGVR: "ArtifactGeneratorList", externalArtifactGVR: "ExternalArtifactList"}, objs...)
			ctl := &sourceControllerFake{dc: dc, serves: map[schema.GroupVersionResource]bool{}, ready: tt.ready}
			for _, gvr := range tt.serves {
				ctl.serves[gvr] = true
			}
			dc.PrependReactor("patch", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
				ctl.record("request " + a.GetResource().Resource + "/" + a.(k8stesting.PatchAction).GetName())
				return false, nil, nil
			})
			s := newFakeState(t, "", kustomization(""))
			s.dynamicClient = dc
			s.req.Resources = []flux.Ref{tt.root}
			s.req.Reconcile = ReconcileOn
			// The run ends on its own once it has asked the object; one left waiting is ended
			// by the test (below). The deadline is only a backstop: each source handled costs
			// a poll (sourcePoll), and a loaded machine may take seconds for the chain.
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			go ctl.run(ctx)
			trig := &trigger{start: fixtureNow}
			done := make(chan struct{})
			go func() {
				defer close(done)
				s.requestReconcile(ctx, trig, newRequestSlots(4))
			}()
			waited := ""
			// Once the run waits for the request the case says, it is given a few more
			// polls, time to send a request it should not, then ended.
			var end <-chan time.Time
			for waiting := true; waiting; {
				select {
				case <-done:
					waiting = false
				case <-end:
					cancel()
				case <-time.After(20 * time.Millisecond):
					if w := s.unhandled(trig); w != nil && !w.Sending {
						waited = assess.Conclude(&assess.Assessment{}, assess.Facts{Reconcile: w}).Pending.Message
						if end == nil && tt.waits != "" && strings.HasPrefix(waited, tt.waits) {
							end = time.After(3 * sourcePoll)
						}
					}
				}
			}
			if got := ctl.events(); !slices.Equal(got, tt.want) {
				t.Errorf("requests and their handling: %q, want %q", got, tt.want)
			}
			if tt.waits != "" && !strings.HasPrefix(waited, tt.waits) {
				t.Errorf("while the source's request was not handled, the cluster waited for %q, want %q", waited, tt.waits)
			}
			if _, sent := trig.state(); (len(sent) == 1) != (tt.waits == "") {
				t.Errorf("requests sent to the requested objects: %v", sent)
			}
		})
	}
}

// TestWritesHandled: a request is waited on only where its controller records the requests
// it handled: not a HelmRepository of type oci (source-controller v1.9.5 strips its status),
// nor a producer whose status has never shown it.
func TestWritesHandled(t *testing.T) {
	t.Parallel()
	helmRepoGVR := schema.GroupVersionResource{Group: "source.toolkit.fluxcd.io", Version: "v1", Resource: "helmrepositories"}
	tests := []struct {
		name string
		gvr  schema.GroupVersionResource
		obj  map[string]any
		want bool
	}{
		{name: "a GitRepository never asked before", gvr: gitGVR, obj: map[string]any{}, want: true},
		{name: "a HelmRepository", gvr: helmRepoGVR, obj: map[string]any{"spec": map[string]any{"type": "default"}}, want: true},
		{name: "a HelmRepository of type oci", gvr: helmRepoGVR, obj: map[string]any{"spec": map[string]any{"type": "oci"}}},
		{name: "an ArtifactGenerator never asked before", gvr: flux.ArtifactGeneratorGVR, obj: map[string]any{"status": map[string]any{}}, want: true},
		{name: "an ArtifactGenerator asked before", gvr: flux.ArtifactGeneratorGVR, obj: map[string]any{"status": map[string]any{"lastHandledReconcileAt": "x"}}, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := writesHandled(tt.gvr, &unstructured.Unstructured{Object: tt.obj}); got != tt.want {
				t.Errorf("writesHandled(%s, %v) = %v, want %v", tt.gvr.Resource, tt.obj, got, tt.want)
			}
		})
	}
}

// TestAwaitRevisionMovedPast: with a revision, the object is asked once its source has it, or
// once the source has moved past it (the object applied it before, or the artifact moved while
// the run watched): it will never have it, and a forced request never sent would hold the
// verdict until the run's timeout whatever the assessment says. A source that has not moved
// and was not applied from is waited for.
func TestAwaitRevisionMovedPast(t *testing.T) {
	t.Parallel()
	const revC = "main@sha1:ccccccc3333333333333333333333333333333cc"
	gitAt := func(rev string) string {
		return `apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: app, namespace: flux-system, generation: 1, resourceVersion: "5"}
spec: {interval: 10m}
status: {observedGeneration: 1, artifact: {revision: "` + rev + `"}}`
	}
	tests := []struct {
		name    string
		git     string
		applied string // the Kustomization's lastAppliedRevision
		moveTo  string // the revision the source fetches after a second, "" for none
		asked   bool
	}{
		{name: "the source has it", git: gitAt(revA), applied: revC, asked: true},
		{name: "applied, then the source moved on", git: gitAt(revB), applied: revA, asked: true},
		{name: "the source moves past it while the run watches", git: gitAt(revC), applied: revC, moveTo: revB, asked: true},
		{name: "the source has not fetched it yet", git: gitAt(revC), applied: revC},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ks := kustomization("  observedGeneration: 2\n  lastAppliedRevision: " + tt.applied + "\n  lastAttemptedRevision: " + tt.applied + "\n" +
				`  conditions: [{type: Ready, status: "True", reason: ReconciliationSucceeded, observedGeneration: 2}]`)
			var objs []runtime.Object
			for _, doc := range []string{tt.git, ks} {
				u := &unstructured.Unstructured{}
				if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
					t.Fatal(err)
				}
				objs = append(objs, u)
			}
			dc := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
				gitGVR: "GitRepositoryList", ksGVR: "KustomizationList"}, objs...)
			s := newFakeState(t, revA, ks)
			s.dynamicClient = dc
			s.req.Reconcile = ReconcileForce
			// A run that asks returns at once; one that does not waits until its end, which
			// for the others is only a backstop.
			timeout := time.Minute
			if !tt.asked {
				timeout = 3 * time.Second
			}
			ctx, cancel := context.WithTimeout(t.Context(), timeout)
			defer cancel()
			if tt.moveTo != "" {
				// The source moves once the run has read it after its request, and is reading
				// it again: the run saw the revision it had first. (Moved before the first
				// read, it would be the revision the run found.)
				var requested atomic.Bool
				var reads atomic.Int32
				readAgain := make(chan struct{})
				dc.PrependReactor("patch", "gitrepositories", func(k8stesting.Action) (bool, runtime.Object, error) {
					requested.Store(true)
					return false, nil, nil
				})
				dc.PrependReactor("get", "gitrepositories", func(k8stesting.Action) (bool, runtime.Object, error) {
					if requested.Load() && reads.Add(1) == 2 {
						close(readAgain)
					}
					return false, nil, nil
				})
				go func() {
					select {
					case <-readAgain:
					case <-ctx.Done():
						return
					}
					obj, err := dc.Resource(gitGVR).Namespace("flux-system").Get(ctx, "app", metav1.GetOptions{})
					if err != nil {
						return
					}
					_ = unstructured.SetNestedField(obj.Object, tt.moveTo, "status", "artifact", "revision")
					_, _ = dc.Resource(gitGVR).Namespace("flux-system").Update(ctx, obj, metav1.UpdateOptions{})
				}()
			}
			trig := &trigger{start: fixtureNow}
			s.requestReconcile(ctx, trig, newRequestSlots(4))
			_, sent := trig.state()
			if asked := len(sent) == 1; asked != tt.asked {
				t.Errorf("the Kustomization asked: %t, want %t (requests %v)", asked, tt.asked, sent)
			}
			if tt.asked && ctx.Err() != nil {
				t.Error("the requests went on until the run's end")
			}
		})
	}
}

// TestReadSourceStartsNoWatch: the reconcile flow's polls read a source from a watch the
// assessment started, else from the API server; they start no watch of their own (it would
// stay open, and wake the cluster's loop at each change of the source), and a source not
// found is nothing to wait for.
func TestReadSourceStartsNoWatch(t *testing.T) {
	t.Parallel()
	const git = `apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: app, namespace: flux-system}
status: {artifact: {revision: "main@sha1:1111111111111111111111111111111111111111"}}`
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(git), &u.Object); err != nil {
		t.Fatal(err)
	}
	s := newFakeState(t, "", kustomization(""))
	s.dynamicClient = dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{gitGVR: "GitRepositoryList"}, u)
	obj, err := s.readSource(t.Context(), gitGVR, "flux-system", "app")
	if err != nil || obj.GetName() != "app" {
		t.Fatalf("readSource = %v, %v; want the GitRepository", obj, err)
	}
	if _, started := s.watches.peek(assess.ListKey{GVR: gitGVR, Namespace: "flux-system"}); started {
		t.Error("reading a source started a watch of GitRepositories")
	}
	if read, known := s.readArtifact(t.Context(), flux.SourceRef{Kind: "GitRepository", Namespace: "flux-system", Name: "gone"}); known {
		t.Errorf("a source not found is waited for: %+v", read)
	}
}

// TestSourceStepsAcrossPlans: the heights that order the sources are taken over every plan at
// once. A HelmChart four generators up one plan's chain (where the walk stops) is another
// plan's own source, built from a GitRepository: the generator built from the chart is asked
// only after it, and the chart after its GitRepository.
func TestSourceStepsAcrossPlans(t *testing.T) {
	t.Parallel()
	docs := []string{`apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: app, namespace: flux-system}
spec: {interval: 10m}`, `apiVersion: source.toolkit.fluxcd.io/v1
kind: HelmChart
metadata: {name: web, namespace: flux-system}
spec: {chart: ./charts/web, sourceRef: {kind: GitRepository, name: app}}`}
	srcs := map[int]string{1: "{alias: s, kind: ExternalArtifact, name: a2}", 2: "{alias: s, kind: ExternalArtifact, name: a3}", 3: "{alias: s, kind: ExternalArtifact, name: a4}", 4: "{alias: s, kind: HelmChart, name: web}"}
	for i := 1; i <= 4; i++ {
		docs = append(docs, fmt.Sprintf(`apiVersion: source.extensions.fluxcd.io/v1beta1
kind: ArtifactGenerator
metadata: {name: g%d, namespace: flux-system}
spec:
  sources: [%s]`, i, srcs[i]), fmt.Sprintf(`apiVersion: source.toolkit.fluxcd.io/v1
kind: ExternalArtifact
metadata: {name: a%d, namespace: flux-system}
spec: {sourceRef: {apiVersion: source.extensions.fluxcd.io/v1beta1, kind: ArtifactGenerator, name: g%d}}`, i, i))
	}
	var objs []runtime.Object
	for _, d := range docs {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(d), &u.Object); err != nil {
			t.Fatal(err)
		}
		objs = append(objs, u)
	}
	dc := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		gitGVR: "GitRepositoryList", chartGVR: "HelmChartList", flux.ArtifactGeneratorGVR: "ArtifactGeneratorList", externalArtifactGVR: "ExternalArtifactList"}, objs...)
	s := newFakeState(t, "", kustomization(""))
	s.dynamicClient = dc
	graph := &sourceGraph{up: map[string][]flux.SourceRef{}}
	var plans []reconcilePlan
	for _, src := range []flux.SourceRef{{Kind: flux.KindExternalArtifact, Namespace: "flux-system", Name: "a1"}, {Kind: "HelmChart", Namespace: "flux-system", Name: "web"}} {
		plans = append(plans, reconcilePlan{sources: s.withUpstream(t.Context(), graph, src, 0)})
	}
	var got [][]string
	for _, st := range sourceSteps(plans, graph.heights()) {
		var ids []string
		for _, src := range st {
			ids = append(ids, src.ID())
		}
		got = append(got, ids)
	}
	want := [][]string{{"GitRepository/flux-system/app"}, {"HelmChart/flux-system/web"}, {"ExternalArtifact/flux-system/a4"},
		{"ExternalArtifact/flux-system/a3"}, {"ExternalArtifact/flux-system/a2"}, {"ExternalArtifact/flux-system/a1"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
}

// TestSourceHeightsOfALoop: a loop of sources (two generators built from each other's
// artifacts, one of them from a chart too) is cut where the walk enters it, in the order of the
// IDs: the same steps in every run.
func TestSourceHeightsOfALoop(t *testing.T) {
	t.Parallel()
	ref := func(kind, name string) flux.SourceRef {
		return flux.SourceRef{Kind: kind, Namespace: "flux-system", Name: name}
	}
	x, y, chart, git := ref(flux.KindExternalArtifact, "x"), ref(flux.KindExternalArtifact, "y"), ref("HelmChart", "web"), ref("GitRepository", "app")
	g := &sourceGraph{up: map[string][]flux.SourceRef{
		x.ID(): {y}, y.ID(): {x, chart}, chart.ID(): {git}, git.ID(): nil,
	}}
	first := g.heights()
	for range 50 {
		if got := g.heights(); !maps.Equal(got, first) {
			t.Fatalf("heights %v, then %v", first, got)
		}
	}
	if first[y.ID()] <= first[chart.ID()] || first[chart.ID()] <= first[git.ID()] {
		t.Errorf("heights %v: each source must be above what it builds from outside the loop", first)
	}
}
