package assess

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
)

// TestUpdatedByUpgrade: while Helm upgrades to the expected chart, a workload is
// the new chart's once its rollout revision changed since the attempt started; not for a
// change of replicas, not when first seen already updated, and a retry after a rollback
// starts from the rollback's revision.
func TestUpdatedByUpgrade(t *testing.T) {
	t.Parallel()
	a := &assessor{mem: NewMemory()}
	deployment := func(revision string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{}}
		u.SetAPIVersion("apps/v1")
		u.SetKind("Deployment")
		u.SetAnnotations(map[string]string{"deployment.kubernetes.io/revision": revision})
		return u
	}
	idle := &flux.Gate{Object: result.FluxObject{ID: "HelmRelease/shop/web", Kind: "HelmRelease"}}
	upgrading := func(attempt string) *flux.Gate {
		g := *idle
		g.Upgrading, g.UpgradeAttempt = "1.1.0", attempt
		return &g
	}
	steps := []struct {
		name    string
		owner   *flux.Gate
		id      string
		rev     string
		updated bool
	}{
		{"seen before the upgrade", idle, "Deployment/shop/web", "1", false},
		{"upgrade started, not rolled out yet", upgrading("1.1.0@2 from release 1"), "Deployment/shop/web", "1", false},
		{"replicas changed (an autoscaler)", upgrading("1.1.0@2 from release 1"), "Deployment/shop/web", "1", false},
		{"Helm rolled out the new template", upgrading("1.1.0@2 from release 1"), "Deployment/shop/web", "2", true},
		{"first seen during the upgrade", upgrading("1.1.0@2 from release 1"), "Deployment/shop/api", "5", false},
		{"rolled back", idle, "Deployment/shop/web", "3", false},
		{"retry after the rollback, not rolled out yet", upgrading("1.1.0@2 from release 3"), "Deployment/shop/web", "3", false},
		{"retry rolled out", upgrading("1.1.0@2 from release 3"), "Deployment/shop/web", "4", true},
	}
	for _, st := range steps {
		if got := a.updatedByUpgrade(st.owner, st.id, deployment(st.rev)); got != st.updated {
			t.Errorf("%s: updated %t, want %t", st.name, got, st.updated)
		}
	}
	if a.updatedByUpgrade(&flux.Gate{Object: result.FluxObject{Kind: "Kustomization"}, Upgrading: "x"}, "Deployment/shop/web", deployment("9")) {
		t.Error("a Kustomization's workload: want never updated by a Helm upgrade")
	}
}

// TestInstallObjects: during Helm's install, the workloads of the release created since the
// run saw the install start are judged; one left by an earlier attempt, one being deleted and
// one of another release are not.
func TestInstallObjects(t *testing.T) {
	t.Parallel()
	deployment := func(name, release, created, extra string) string {
		return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ` + name + `
  namespace: prod
  creationTimestamp: "` + created + `"
  annotations: {meta.helm.sh/release-name: ` + release + `, meta.helm.sh/release-namespace: prod}` + extra + `
spec: {replicas: 1}`
	}
	docs := strings.Join([]string{
		deployment("web", "prod-web", "2026-11-01T12:00:05Z", ""),
		deployment("kept", "prod-web", "2026-11-01T11:30:00Z", ""),
		deployment("going", "prod-web", "2026-11-01T12:00:06Z", "\n  deletionTimestamp: \"2026-11-01T12:00:07Z\"\n  finalizers: [x]"),
		deployment("other", "prod-api", "2026-11-01T12:00:05Z", ""),
	}, "\n---\n")
	a := &assessor{view: newFixtureView(t, docs), mem: NewMemory(), e: &Assessment{}}
	g := &flux.Gate{Installing: "1.0.0+abc", ReleaseName: "prod-web", ReleaseNamespace: "prod"}
	refs, ok := a.installObjects(a.e, g, fixtureNow)
	if !ok {
		t.Fatal("installObjects: not ok")
	}
	var got []string
	for _, r := range refs {
		got = append(got, r.ID())
	}
	if diff := cmp.Diff([]string{"Deployment/prod/web"}, got); diff != "" {
		t.Errorf("install objects (-want +got):\n%s", diff)
	}
}

// goneList is a list that saw some Jobs deleted: their last state and when.
type goneList struct {
	fixtureList
	gone map[string]goneJob
}

type goneJob struct {
	job *batchv1.Job
	at  time.Time
}

func (l *goneList) Gone(namespace, name string) (any, time.Time, bool) {
	g, ok := l.gone[namespace+"/"+name]
	return g.job, g.at, ok
}

// TestJobGone: a Job of the inventory that is gone counts as finished when the run saw it
// complete before its TTL deleted it, after its owner started on the expected revision; one
// deleted after it failed is a failure; one deleted before, or never seen, is waited for,
// unless its owner's own health check (spec.wait) counted it.
func TestJobGone(t *testing.T) {
	t.Parallel()
	ttl := int32(1)
	job := func(condition batchv1.JobConditionType) *batchv1.Job {
		return &batchv1.Job{Spec: batchv1.JobSpec{TTLSecondsAfterFinished: &ttl},
			Status: batchv1.JobStatus{Conditions: []batchv1.JobCondition{{Type: condition, Status: corev1.ConditionTrue}}}}
	}
	applied := fixtureNow
	w := &goneList{gone: map[string]goneJob{
		"shop/migrate": {job(batchv1.JobComplete), applied.Add(time.Second)},
		"shop/seed":    {job(batchv1.JobFailed), applied.Add(time.Second)},
		"shop/old":     {job(batchv1.JobComplete), applied.Add(-time.Second)},
	}}
	owner := &flux.Gate{Applied: true}
	ref := func(name string) flux.ObjectRef {
		return flux.ObjectRef{Group: "batch", Kind: "Job", Namespace: "shop", Name: name}
	}
	if done, failed, msg := jobGone(w, "shop", ref("migrate"), owner, applied); !done || failed != nil || !strings.Contains(msg, "completed") {
		t.Errorf("migrate: done %t, failed %v, %q; want done, deleted after it completed", done, failed, msg)
	}
	if done, failed, _ := jobGone(w, "shop", ref("seed"), owner, applied); done || failed == nil {
		t.Errorf("seed: done %t, failed %v; want its failure", done, failed)
	}
	for _, name := range []string{"other", "old"} {
		if done, failed, _ := jobGone(w, "shop", ref(name), owner, applied); done || failed != nil {
			t.Errorf("%s (never seen, deleted before the owner applied): done %t, failed %v; want neither", name, done, failed)
		}
	}
	if done, failed, _ := jobGone(w, "shop", ref("migrate"), &flux.Gate{}, time.Time{}); done || failed != nil {
		t.Errorf("owner not applied: done %t, failed %v; want neither", done, failed)
	}
	waited := &flux.Gate{Applied: true, WaitsForAll: true, Verdict: result.VerdictCurrent}
	if done, _, msg := jobGone(w, "shop", ref("other"), waited, applied); !done || !strings.Contains(msg, "spec.wait") {
		t.Errorf("owner Ready with spec.wait: done %t, %q; want done, saying why", done, msg)
	}
}

func TestFewOf(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		names []string
		want  string
	}{
		{nil, ""},
		{[]string{"a"}, "a"},
		{[]string{"a", "b", "c"}, "a, b, c"},
		{[]string{"a", "b", "c", "d", "e"}, "a, b, c and 2 more"},
	} {
		if got := FewOf(tt.names); got != tt.want {
			t.Errorf("FewOf(%q) = %q, want %q", tt.names, got, tt.want)
		}
	}
}
