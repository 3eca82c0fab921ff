package verify

import (
	"errors"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/org/app-status-action/internal/assess"
	"github.com/org/app-status-action/internal/classify"
	"github.com/org/app-status-action/internal/result"
)

// hookedView is a view that runs hook on its first read of a list of hookOn, before it
// answers: a change that lands while an assessment runs.
type hookedView struct {
	clusterView
	hookOn assess.ListKey
	hook   func()
}

func (v *hookedView) List(key assess.ListKey) (assess.List, bool) {
	if key == v.hookOn && v.hook != nil {
		v.hook()
		v.hook = nil
	}
	return v.clusterView.List(key)
}

// watchesOf moves the fixture lists of s into watches, as informers hold them after their
// first lists.
func watchesOf(t *testing.T, s *clusterState) *watchSet {
	t.Helper()
	ws := &watchSet{watches: map[assess.ListKey]*watch{}, clock: s.req.Clock}
	for key, l := range s.watches.(*fakeCache).lists {
		w := &watch{since: fixtureNow, store: &notifyingStore{transform: transformFor(key), onChange: func() {}, clock: s.req.Clock}}
		if err := w.store.Replace(l.store.List(), "10"); err != nil {
			t.Fatal(err)
		}
		ws.watches[key] = w
	}
	s.watches = ws
	return ws
}

// TestAssessReadsOneFrozenView: an assessment reads its lists as they were when it began. A
// Deployment deleted from its watch's store once the walk has read the Kustomization changes
// nothing in that pass over a frozen view (the next pass sees it), where the live stores
// would have judged half the tree before the deletion and half after.
func TestAssessReadsOneFrozenView(t *testing.T) {
	t.Parallel()
	ksKey := assess.ListKey{GVR: ksGVR, Namespace: "flux-system"}
	deployKey := assess.ListKey{GVR: deployGVR, Namespace: "shop"}
	docs := kustomization(readyOnB) + "\n---\n" + service + "\n---\n" + deploymentCurrent
	summary := func(e *assess.Assessment) []string {
		var out []string
		for _, o := range e.Objects {
			out = append(out, o.ID+" "+string(o.Status))
		}
		return out
	}
	current := []string{"Deployment/shop/web " + string(result.ObjectCurrent), "Service/shop/web " + string(result.ObjectCurrent)}
	tests := []struct {
		name   string
		frozen bool
		want   []string
	}{
		{name: "frozen", frozen: true, want: current},
		// (The control: the same change seen by a pass over the live stores.)
		{name: "live", want: []string{"Deployment/shop/web " + string(result.ObjectNotFound), "Service/shop/web " + string(result.ObjectCurrent)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newFakeState(t, revB, docs)
			ws := watchesOf(t, s)
			var lists objectCache = ws
			if tt.frozen {
				lists = freezeLists(ws, s.moment(fixtureNow))
			}
			view := &hookedView{clusterView: clusterView{s: s, lists: lists}, hookOn: ksKey, hook: func() {
				w := ws.watches[deployKey]
				obj, ok := w.Object("shop", "web")
				if !ok {
					t.Fatal("no Deployment shop/web in the fixtures")
				}
				if err := w.store.Delete(obj.(*unstructured.Unstructured)); err != nil {
					t.Fatal(err)
				}
			}}
			e := assess.Assess(view, s.mem, s.spec(), fixtureNow)
			if diff := cmp.Diff(tt.want, summary(e)); diff != "" {
				t.Errorf("objects of the pass (-want +got):\n%s", diff)
			}
			if view.hook != nil {
				t.Fatal("the pass never read the Kustomizations")
			}
			next := summary(s.assessFrom(ws, fixtureNow))
			if diff := cmp.Diff(tests[1].want, next); diff != "" {
				t.Errorf("objects of the next pass (-want +got):\n%s", diff)
			}
		})
	}
}

// TestStoreKeepsFacts: what the transform learns of an object from the managedFields it
// drops is kept beside the object, per state: a new state says its own, a deleted object
// none, and a frozen copy those of its moment. Annotations named as the facts once were,
// written in the cluster, are annotations like any other: no fact.
func TestStoreKeepsFacts(t *testing.T) {
	t.Parallel()
	deployments := assess.ListKey{GVR: deployGVR, Namespace: "shop"}
	written := time.Date(2026, 11, 1, 11, 50, 0, 0, time.UTC)
	deployment := func(annotations map[string]string, fields ...metav1.ManagedFieldsEntry) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("apps/v1")
		u.SetKind("Deployment")
		u.SetNamespace("shop")
		u.SetName("web")
		u.SetAnnotations(annotations)
		u.SetManagedFields(fields)
		return u
	}
	annotated := metav1.ManagedFieldsEntry{Manager: "kubectl-annotate", Operation: metav1.ManagedFieldsOperationUpdate,
		Time: &metav1.Time{Time: written}, FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:annotations":{"f:app-status.io/ignore-readiness":{}}},"f:spec":{"f:template":{}}}`)}
	applied := metav1.ManagedFieldsEntry{Manager: "kustomize-controller", Operation: metav1.ManagedFieldsOperationApply,
		Time: &metav1.Time{Time: written}, FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:annotations":{"f:app-status.io/ignore-readiness":{}}}}`)}
	forged := map[string]string{"app-status.internal/not-from-git": "app-status.io/ignore-readiness", "app-status.internal/template-written": "2030-01-01T00:00:00Z"}

	w := &watch{since: fixtureNow, store: &notifyingStore{transform: transformFor(deployments), onChange: func() {}, clock: func() time.Time { return fixtureNow }}}
	learned := assess.ObjectFacts{NotFromGit: []string{classify.AnnotationIgnoreReadiness}, TemplateWritten: written}
	steps := []struct {
		name   string
		change func() error
		want   assess.ObjectFacts
	}{
		{name: "listed, annotated in the cluster", want: learned,
			change: func() error {
				return w.store.Replace([]any{deployment(map[string]string{classify.AnnotationIgnoreReadiness: "true"}, annotated)}, "5")
			}},
		{name: "updated, applied by Flux", want: assess.ObjectFacts{},
			change: func() error {
				return w.store.Update(deployment(map[string]string{classify.AnnotationIgnoreReadiness: "true"}, applied))
			}},
		{name: "updated, annotated in the cluster again", want: learned,
			change: func() error {
				return w.store.Update(deployment(map[string]string{classify.AnnotationIgnoreReadiness: "true"}, annotated))
			}},
		{name: "updated with forged annotations and no managedFields", want: assess.ObjectFacts{},
			change: func() error { return w.store.Update(deployment(forged)) }},
		{name: "added with forged annotations", want: assess.ObjectFacts{},
			change: func() error { return w.store.Add(deployment(forged)) }},
		{name: "deleted", want: assess.ObjectFacts{},
			change: func() error { return w.store.Delete(deployment(nil)) }},
	}
	var before *frozenList
	var beforeWant assess.ObjectFacts
	for _, step := range steps {
		if err := step.change(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if diff := cmp.Diff(step.want, w.Facts("shop", "web"), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s: facts (-want +got):\n%s", step.name, diff)
		}
		if before != nil {
			if diff := cmp.Diff(beforeWant, before.Facts("shop", "web"), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%s: the copy taken before it changed (-want +got):\n%s", step.name, diff)
			}
		}
		before, beforeWant = w.freeze(passMoment{now: fixtureNow}), step.want
	}
}

// TestFrozenReadFacts: a pass's copy of a watch says why its last read failed, classified
// when the error was recorded, and, for a first list awaited assess.SlowListAfter or longer,
// whether this process was short of CPU meanwhile: the words are assess's.
func TestFrozenReadFacts(t *testing.T) {
	t.Parallel()
	wall := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	starved := &cpuWatch{read: func() *metrics.Float64Histogram { return nil }, clock: func() time.Time { return wall },
		windows: []cpuWindow{{start: wall.Add(-time.Minute), end: wall, p99: time.Second}}}
	forbidden := apierrors.NewForbidden(schema.GroupResource{Group: "apps", Resource: "deployments"}, "", errors.New("no RBAC"))
	tests := []struct {
		name   string
		waited time.Duration
		err    error
		cpu    *cpuWatch
		want   assess.ReadFacts
	}{
		{name: "awaited long, short of CPU", waited: 10 * time.Second, cpu: starved,
			want: assess.ReadFacts{CPUShort: &assess.CPUShortage{Latency: time.Second}}},
		{name: "awaited long, CPU to spare", waited: 10 * time.Second},
		{name: "awaited a moment, short of CPU", waited: time.Second, cpu: starved},
		{name: "failed", waited: 10 * time.Second, err: forbidden, cpu: starved,
			want: assess.ReadFacts{Failure: assess.ReadFailure{Cause: assess.ReadForbidden, Detail: forbidden.Error()}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := &watch{since: fixtureNow.Add(-tt.waited), store: &notifyingStore{transform: stripManagedFields, onChange: func() {}}}
			if tt.err != nil {
				w.setErr(tt.err)
			}
			got := w.freeze(passMoment{now: fixtureNow, wall: wall, cpu: tt.cpu}).Read()
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("read facts (-want +got):\n%s", diff)
			}
		})
	}
}
