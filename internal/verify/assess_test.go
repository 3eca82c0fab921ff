package verify

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/yaml"

	"github.com/org/app-status-action/internal/assess"
	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
)

// fakeCache is an objectCache over fixtures: every kind listed, none watched.
type fakeCache struct {
	lists     map[assess.ListKey]*staticList
	forbidden map[schema.GroupResource]bool
}

func (f *fakeCache) get(key assess.ListKey) assess.List {
	if l, ok := f.lists[key]; ok {
		return l
	}
	l := &staticList{store: cache.NewStore(cache.MetaNamespaceKeyFunc)}
	if f.forbidden[key.GVR.GroupResource()] {
		l.listErr = apierrors.NewForbidden(key.GVR.GroupResource(), "", errors.New("no RBAC"))
	}
	f.lists[key] = l
	return l
}

var (
	ksGVR     = schema.GroupVersionResource{Group: "kustomize.toolkit.fluxcd.io", Version: "v1", Resource: "kustomizations"}
	deployGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	svcGVR    = schema.GroupVersionResource{Version: "v1", Resource: "services"}
	secretGVR = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
	roleGVR   = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"}
	gitGVR    = schema.GroupVersionResource{Group: "source.toolkit.fluxcd.io", Version: "v1", Resource: "gitrepositories"}
)

// mappings are what discovery would answer for the fixtures' kinds.
func fakeMappings() map[schema.GroupVersionKind]*meta.RESTMapping {
	m := map[schema.GroupVersionKind]*meta.RESTMapping{}
	for gvr, kind := range map[schema.GroupVersionResource]string{deployGVR: "Deployment", svcGVR: "Service", secretGVR: "Secret",
		ksGVR: "Kustomization", assess.RSGVR: "ReplicaSet", assess.PodsGVR: "Pod", roleGVR: "Role", gitGVR: "GitRepository", assess.JobsGVR: "Job"} {
		gvk := gvr.GroupVersion().WithKind(kind)
		m[gvk] = &meta.RESTMapping{Resource: gvr, GroupVersionKind: gvk, Scope: meta.RESTScopeNamespace}
	}
	return m
}

// newFakeState is a cluster whose objects are the YAML documents, as informers hold them.
func newFakeState(t *testing.T, want string, docs string, forbidden ...schema.GroupResource) *clusterState {
	t.Helper()
	f := &fakeCache{lists: map[assess.ListKey]*staticList{}, forbidden: map[schema.GroupResource]bool{}}
	for _, gr := range forbidden {
		f.forbidden[gr] = true
	}
	for _, doc := range strings.Split(docs, "\n---\n") {
		data, err := yaml.YAMLToJSON([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(data); err != nil { // integers as int64, as informers hold them
			t.Fatal(err)
		}
		var gvr schema.GroupVersionResource
		for _, m := range fakeMappings() {
			if m.GroupVersionKind == u.GroupVersionKind() {
				gvr = m.Resource
			}
		}
		l := f.get(assess.ListKey{GVR: gvr, Namespace: u.GetNamespace()}).(*staticList)
		obj, err := transformFor(assess.ListKey{GVR: gvr})(u)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.store.Add(obj); err != nil {
			t.Fatal(err)
		}
	}
	rev, err := flux.ParseRevision(want)
	if err != nil {
		t.Fatal(err)
	}
	return &clusterState{
		req: Request{
			Resources: []flux.Ref{{Kind: flux.KindKustomization, Namespace: "flux-system", Name: "app"}},
			Revision:  rev, Workloads: true, Clock: func() time.Time { return fixtureNow },
		},
		ctx: t.Context(), watches: f, mem: assess.NewMemory(), mappings: fakeMappings(),
		// No Flagger: discovery says so.
		mappingErrs: map[schema.GroupVersionKind]error{assess.CanaryGVK: assess.NotServedError{GVK: assess.CanaryGVK}},
	}
}

var fixtureNow = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

const (
	revA = "main@sha1:aaaaaaa1111111111111111111111111111111aa"
	revB = "main@sha1:bbbbbbb2222222222222222222222222222222bb"
)

// kustomization is the Kustomization flux-system/app with its status, listing a Deployment
// and a Service of namespace shop.
func kustomization(status string) string {
	return `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: app, namespace: flux-system, generation: 2, resourceVersion: "7"}
spec: {sourceRef: {kind: GitRepository, name: app}}
status:
  inventory:
    entries:
    - {id: shop_web_apps_Deployment, v: v1}
    - {id: shop_web__Service, v: v1}
` + status
}

const readyOnB = `  observedGeneration: 2
  lastAppliedRevision: ` + revB + `
  lastAttemptedRevision: ` + revB + `
  conditions:
  - {type: Ready, status: "True", reason: ReconciliationSucceeded, message: "Applied revision: ` + revB + `", observedGeneration: 2}`

const buildingB = `  observedGeneration: 1
  lastAppliedRevision: ` + revA + `
  lastAttemptedRevision: ` + revB + `
  conditions:
  - {type: Reconciling, status: "True", reason: Progressing, message: "Building manifests for revision ` + revB + ` with a timeout of 5m0s", observedGeneration: 2}
  - {type: Ready, status: Unknown, reason: Progressing, message: Reconciliation in progress, observedGeneration: 2}`

const healthCheckingB = `  observedGeneration: 1
  lastAppliedRevision: ` + revA + `
  lastAttemptedRevision: ` + revB + `
  conditions:
  - {type: Reconciling, status: "True", reason: Progressing, message: "Running health checks for revision ` + revB + ` with a timeout of 5m0s", observedGeneration: 2}
  - {type: Ready, status: Unknown, reason: Progressing, message: Reconciliation in progress, observedGeneration: 2}`

const healthCheckFailedB = `  observedGeneration: 1
  lastAppliedRevision: ` + revA + `
  lastAttemptedRevision: ` + revB + `
  conditions:
  - {type: Ready, status: "False", reason: HealthCheckFailed, message: "health check failed after 30s: timeout waiting for: [Deployment/shop/web status: 'InProgress']", observedGeneration: 2}`

const service = `apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec: {type: ClusterIP}`

const deploymentCurrent = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop, generation: 3, uid: dep-web, annotations: {deployment.kubernetes.io/revision: "3"}}
spec: {replicas: 1}
status:
  observedGeneration: 3
  replicas: 1
  updatedReplicas: 1
  readyReplicas: 1
  availableReplicas: 1
  conditions:
  - {type: Available, status: "True"}
  - {type: Progressing, status: "True", reason: NewReplicaSetAvailable}`

// deploymentPulling is a Deployment whose newest ReplicaSet's pod cannot pull its image.
const deploymentPulling = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop, generation: 3, uid: dep-web, annotations: {deployment.kubernetes.io/revision: "3"}}
spec: {replicas: 1}
status:
  observedGeneration: 3
  replicas: 2
  updatedReplicas: 1
  conditions:
  - {type: Progressing, status: "True", reason: ReplicaSetUpdated}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: web-3
  namespace: shop
  uid: rs-web-3
  annotations: {deployment.kubernetes.io/revision: "3"}
  ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: web, uid: dep-web, controller: true}]
status: {observedGeneration: 1}
---
apiVersion: v1
kind: Pod
metadata:
  name: web-3-x
  namespace: shop
  ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web-3, uid: rs-web-3, controller: true}]
spec: {containers: [{name: web, image: "web:nope"}]}
status:
  phase: Pending
  containerStatuses:
  - {name: web, image: "web:nope", imageID: "", ready: false, restartCount: 0, state: {waiting: {reason: ErrImagePull, message: "web:nope: not found"}}}`

func TestAssess(t *testing.T) {
	t.Parallel()
	type want struct {
		Fatal   result.Verdict
		Code    result.Code
		Pending string // a part of the first pending message
		Objects map[string]result.ObjectStatus
	}
	tests := []struct {
		name      string
		revision  string
		docs      string
		forbidden []schema.GroupResource
		want      want
	}{
		{
			name: "applied and Current", revision: revB,
			docs: kustomization(readyOnB) + "\n---\n" + deploymentCurrent + "\n---\n" + service,
			want: want{Objects: map[string]result.ObjectStatus{"Deployment/shop/web": result.ObjectCurrent, "Service/shop/web": result.ObjectCurrent}},
		},
		{
			name: "Ready on the expected revision, an object not there yet", revision: revB,
			docs: kustomization(readyOnB) + "\n---\n" + deploymentCurrent,
			want: want{Pending: "Service/shop/web not found",
				Objects: map[string]result.ObjectStatus{"Deployment/shop/web": result.ObjectCurrent, "Service/shop/web": result.ObjectNotFound}},
		},
		{
			name: "Ready on another revision: waits, whatever the objects", revision: "main@sha1:ccccccc",
			docs: kustomization(readyOnB) + "\n---\n" + deploymentPulling + "\n---\n" + service,
			want: want{Pending: "applied main@sha1:bbbbbbb, waiting for main@sha1:ccccccc",
				Objects: map[string]result.ObjectStatus{"Deployment/shop/web": result.ObjectInProgress, "Service/shop/web": result.ObjectCurrent}},
		},
		{
			name: "building the expected revision: the previous revision's broken pods do not count", revision: revB,
			docs: kustomization(buildingB) + "\n---\n" + deploymentPulling + "\n---\n" + service,
			want: want{Pending: "Building manifests for revision " + revB,
				Objects: map[string]result.ObjectStatus{"Deployment/shop/web": result.ObjectInProgress, "Service/shop/web": result.ObjectCurrent}},
		},
		{
			name: "health-checking the expected revision: its broken pods fail it", revision: revB,
			docs: kustomization(healthCheckingB) + "\n---\n" + deploymentPulling + "\n---\n" + service,
			want: want{Fatal: result.VerdictFailed, Code: result.CodeImagePull,
				Objects: map[string]result.ObjectStatus{"Deployment/shop/web": result.ObjectFailed, "Service/shop/web": result.ObjectCurrent}},
		},
		{
			name: "Flux's health check failed: the workload's own reason wins", revision: revB,
			docs: kustomization(healthCheckFailedB) + "\n---\n" + deploymentPulling + "\n---\n" + service,
			want: want{Fatal: result.VerdictFailed, Code: result.CodeImagePull,
				Objects: map[string]result.ObjectStatus{"Deployment/shop/web": result.ObjectFailed, "Service/shop/web": result.ObjectCurrent}},
		},
		{
			name: "Flux's health check failed, nothing more precise", revision: revB,
			docs: kustomization(healthCheckFailedB) + "\n---\n" + deploymentCurrent + "\n---\n" + service,
			want: want{Fatal: result.VerdictFailed, Code: result.CodeFluxHealthCheckFailed,
				Objects: map[string]result.ObjectStatus{"Deployment/shop/web": result.ObjectCurrent, "Service/shop/web": result.ObjectCurrent}},
		},
		{
			name: "pods may not be listed: the workload waits on kstatus alone", revision: revB,
			docs:      kustomization(healthCheckingB) + "\n---\n" + deploymentPulling + "\n---\n" + service,
			forbidden: []schema.GroupResource{{Resource: "pods"}},
			want: want{Pending: "rollout failures classified without pods: the credentials may not list pods",
				Objects: map[string]result.ObjectStatus{"Deployment/shop/web": result.ObjectInProgress, "Service/shop/web": result.ObjectCurrent}},
		},
		{
			name: "Deployments may not be listed: Forbidden, naming them", revision: revB,
			docs:      kustomization(readyOnB) + "\n---\n" + service,
			forbidden: []schema.GroupResource{{Group: "apps", Resource: "deployments"}},
			want: want{Fatal: result.VerdictForbidden,
				Objects: map[string]result.ObjectStatus{"Deployment/shop/web": result.ObjectUnknown, "Service/shop/web": result.ObjectCurrent}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newFakeState(t, tt.revision, tt.docs, tt.forbidden...).assess(fixtureNow)
			got := want{Objects: map[string]result.ObjectStatus{}}
			if e.Fatal != nil {
				got.Fatal, got.Code = e.Fatal.Verdict, e.Fatal.Code
			}
			if e.Pending != nil && tt.want.Pending != "" && strings.Contains(e.Pending.Message+" "+objectMessages(e), tt.want.Pending) {
				got.Pending = tt.want.Pending
			} else if e.Pending != nil {
				got.Pending = e.Pending.Message
			}
			for _, o := range e.Objects {
				got.Objects[o.ID] = o.Status
			}
			if tt.want.Fatal != "" || got.Fatal != "" {
				got.Pending = tt.want.Pending // a verdict is given: what it waited for does not matter
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("assess() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func objectMessages(e *assess.Assessment) string {
	var parts []string
	for _, o := range e.Objects {
		parts = append(parts, o.Message)
	}
	return strings.Join(parts, " ")
}

// TestAssessEveryRequestedResourceIsARoot (issue 18): a requested resource that another
// requested one's inventory also lists is judged on the run's revision, whatever the order the
// resources were given in. Here the nested Kustomization comes from another source, so as a
// nested object it would only need to be Ready at whatever it last applied (revision A), and
// the run would be Current while it has not applied B.
func TestAssessEveryRequestedResourceIsARoot(t *testing.T) {
	t.Parallel()
	root := rootWithInfra(readyOnB)
	nested := infra(`  lastAppliedRevision: ` + revA + `
  lastAttemptedRevision: ` + revA + `
  inventory: {entries: []}
  conditions:
  - {type: Ready, status: "True", reason: ReconciliationSucceeded, message: "Applied revision: ` + revA + `", observedGeneration: 1}`)
	app := flux.Ref{Kind: flux.KindKustomization, Namespace: "flux-system", Name: "app"}
	infra := flux.Ref{Kind: flux.KindKustomization, Namespace: "flux-system", Name: "infra"}
	for name, order := range map[string][]flux.Ref{"root first": {app, infra}, "nested first": {infra, app}} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := newFakeState(t, revB, root+"\n---\n"+nested)
			s.req.Resources = order
			e := s.assess(fixtureNow)
			if e.Fatal != nil || e.Pending == nil {
				t.Fatalf("fatal %+v, pending %+v: want the run waiting for infra to apply %s", e.Fatal, e.Pending, revB)
			}
			if !strings.Contains(e.Pending.Message, "infra") {
				t.Errorf("waiting for %q, want infra named", e.Pending.Message)
			}
			for _, f := range e.Flux {
				if f.ID == "Kustomization/flux-system/infra" && f.Owner != "" {
					t.Errorf("infra judged as nested in %s, want it a root", f.Owner)
				}
			}
		})
	}
}

// TestAssessWithoutWorkloadsStillJudgesNestedFluxObjects (issue 18): with workloads off, a
// root Ready right after applying (no wait) whose inventory holds a Kustomization that failed
// is not Current: the nested Flux object's failure is the cluster's.
func TestAssessWithoutWorkloadsStillJudgesNestedFluxObjects(t *testing.T) {
	t.Parallel()
	root := rootWithInfra(readyOnB, "    - {id: shop_web_apps_Deployment, v: v1}\n")
	nested := infra(infraStalledOnA)
	s := newFakeState(t, revB, root+"\n---\n"+nested+"\n---\n"+deploymentPulling)
	s.req.Workloads = false
	e := s.assess(fixtureNow)
	if e.Fatal == nil || e.Fatal.Verdict != result.VerdictFailed || !strings.Contains(e.Fatal.Message, "infra") {
		t.Fatalf("fatal %+v, pending %+v: want the nested Kustomization's failure", e.Fatal, e.Pending)
	}
	if len(e.Objects) != 0 {
		t.Errorf("objects %v: without workloads none is judged", e.Objects)
	}
}

// TestAssessNestedFailureBeforeItsOwnerApplied: a nested Flux object that failed before its
// owner applied the expected revision (which may change its spec and fix it, a values fix
// for a broken release) makes the run wait, not fail; once the owner applied it, it fails.
func TestAssessNestedFailureBeforeItsOwnerApplied(t *testing.T) {
	t.Parallel()
	root := func(status string) string { return rootWithInfra(status) }
	nested := infra(infraStalledOnA)
	for _, workloads := range []bool{true, false} {
		s := newFakeState(t, revB, root(buildingB)+"\n---\n"+nested)
		s.req.Workloads = workloads
		if e := s.assess(fixtureNow); e.Fatal != nil || e.Pending == nil {
			t.Errorf("workloads %t, owner still building B: fatal %+v, pending %+v; want the run waiting", workloads, e.Fatal, e.Pending)
		}
		s = newFakeState(t, revB, root(readyOnB)+"\n---\n"+nested)
		s.req.Workloads = workloads
		if e := s.assess(fixtureNow); e.Fatal == nil || e.Fatal.Verdict != result.VerdictFailed {
			t.Errorf("workloads %t, owner applied B: fatal %+v, pending %+v; want the nested failure", workloads, e.Fatal, e.Pending)
		}
	}
}

// rootWithInfra is the Kustomization flux-system/app of the GitRepository app, whose inventory
// lists the Kustomization flux-system/infra (of another source), then the other entries given.
func rootWithInfra(status string, entries ...string) string {
	return `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: app, namespace: flux-system, generation: 2, resourceVersion: "7"}
spec: {sourceRef: {kind: GitRepository, name: app}}
status:
  inventory:
    entries:
    - {id: flux-system_infra_kustomize.toolkit.fluxcd.io_Kustomization, v: v1}
` + strings.Join(entries, "") + status
}

// infra is the Kustomization flux-system/infra of the GitRepository infra, at generation 1.
func infra(status string) string {
	return `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: infra, namespace: flux-system, generation: 1, resourceVersion: "3"}
spec: {sourceRef: {kind: GitRepository, name: infra}}
status:
  observedGeneration: 1
` + status
}

// infraStalledOnA is infra's status when its build failed for good on revision A.
const infraStalledOnA = `  lastAttemptedRevision: ` + revA + `
  conditions:
  - {type: Ready, status: "False", reason: BuildFailed, message: "kustomize build failed", observedGeneration: 1}
  - {type: Stalled, status: "True", reason: BuildFailed, message: "kustomize build failed", observedGeneration: 1}`

// TestAssessForbiddenKindsWithoutReadiness (issue 19): credentials that may not list the kinds
// an app holds beside its workloads (its own Flux sources, its RBAC) leave those objects "not
// verified"; the cluster is Current on its workloads, never Forbidden.
func TestAssessForbiddenKindsWithoutReadiness(t *testing.T) {
	t.Parallel()
	root := `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: app, namespace: flux-system, generation: 2, resourceVersion: "7"}
spec: {sourceRef: {kind: GitRepository, name: app}}
status:
  inventory:
    entries:
    - {id: shop_web_apps_Deployment, v: v1}
    - {id: shop_web_rbac.authorization.k8s.io_Role, v: v1}
    - {id: shop_config_source.toolkit.fluxcd.io_GitRepository, v: v1}
` + readyOnB
	s := newFakeState(t, revB, root+"\n---\n"+deploymentCurrent, roleGVR.GroupResource(), gitGVR.GroupResource())
	e := s.assess(fixtureNow)
	if e.Fatal != nil || e.Pending != nil {
		t.Fatalf("fatal %+v, pending %+v: want Current, the Role and the GitRepository not verified", e.Fatal, e.Pending)
	}
	unverified := 0
	for _, o := range e.Objects {
		if strings.HasPrefix(o.Message, "not verified: the credentials may not list") {
			unverified++
		}
	}
	if unverified != 2 {
		t.Errorf("objects %+v: want the Role and the GitRepository not verified", e.Objects)
	}
}

// TestAssessWorkloadAnnotations: a team's annotations on a workload, in Git, are honoured:
// ignore-readiness leaves an unready workload reported and not verified; a grace annotation
// lets a retried pull error wait longer than the run's setting; a value that cannot be read
// is ignored and said.
func TestAssessWorkloadAnnotations(t *testing.T) {
	t.Parallel()
	// annotated gives the Deployment an annotation as kustomize-controller applies it (it owns
	// the field in managedFields).
	annotated := func(annotation, pullError string) string {
		key, _, _ := strings.Cut(annotation, ":")
		d := strings.Replace(deploymentPulling, "annotations: {deployment.kubernetes.io/revision: \"3\"}}",
			"annotations: {deployment.kubernetes.io/revision: \"3\", "+annotation+"}, managedFields: [{manager: kustomize-controller, operation: Apply, fieldsType: FieldsV1, fieldsV1: {'f:metadata': {'f:annotations': {'f:"+key+"': {}}}}}]}", 1)
		return strings.Replace(d, `message: "web:nope: not found"`, `message: "`+pullError+`"`, 1)
	}
	const timeout = "dial tcp 10.0.0.1:443: i/o timeout"
	objectMessage := func(e *assess.Assessment) string {
		for _, o := range e.Objects {
			if o.Kind == "Deployment" {
				return o.Message
			}
		}
		return ""
	}

	s := newFakeState(t, revB, kustomization(readyOnB)+"\n---\n"+annotated(`app-status.io/ignore-readiness: "true"`, "web:nope: not found")+"\n---\n"+service)
	e := s.assess(fixtureNow)
	if e.Fatal != nil || e.Pending != nil {
		t.Fatalf("ignore-readiness: fatal %+v, pending %+v; want Current", e.Fatal, e.Pending)
	}
	if m := objectMessage(e); !strings.Contains(m, "not verified (app-status.io/ignore-readiness)") {
		t.Errorf("ignore-readiness: object message %q, want it to say it is not verified", m)
	}
	if got, want := assess.CurrentMessage(e), "1 objects Current, 1 not verified (app-status.io/ignore-readiness)"; got != want {
		t.Errorf("ignore-readiness: Current message %q, want %q", got, want)
	}

	// The same annotation added in the cluster (kubectl annotate), not by Flux: ignored, said.
	byKubectl := strings.Replace(annotated(`app-status.io/ignore-readiness: "true"`, "web:nope: not found"), "manager: kustomize-controller, operation: Apply", "manager: kubectl-annotate, operation: Update", 1)
	s = newFakeState(t, revB, kustomization(readyOnB)+"\n---\n"+byKubectl+"\n---\n"+service)
	e = s.assess(fixtureNow)
	if e.Fatal == nil || e.Fatal.Code != result.CodeImagePull {
		t.Fatalf("ignore-readiness added by kubectl: fatal %+v, pending %+v; want image-pull", e.Fatal, e.Pending)
	}
	if m := objectMessage(e); !strings.Contains(m, "annotations app-status.io/ignore-readiness ignored: not applied by Flux (set them in Git)") {
		t.Errorf("object message %q, want the annotation said ignored", m)
	}

	// The pod's ErrImagePull has no creation or start time in the fixture: the grace runs from
	// the zero time, so only a grace of the workload's own far from it holds it back.
	s = newFakeState(t, revB, kustomization(readyOnB)+"\n---\n"+annotated(`app-status.io/retry-grace: "876000h"`, timeout)+"\n---\n"+service)
	e = s.assess(fixtureNow)
	if e.Fatal == nil {
		t.Fatalf("a grace above 24h is refused: pending %+v; want the run's grace, and a failure", e.Pending)
	}
	if m := objectMessage(e); !strings.Contains(m, "annotation app-status.io/retry-grace=\"876000h\" ignored") {
		t.Errorf("object message %q, want the refused annotation said", m)
	}

	withStart := strings.Replace(annotated(`app-status.io/retry-grace: "10m"`, timeout), "  name: web-3-x\n", "  name: web-3-x\n  creationTimestamp: \"2026-11-01T11:58:00Z\"\n", 1)
	s = newFakeState(t, revB, kustomization(readyOnB)+"\n---\n"+withStart+"\n---\n"+service)
	if e := s.assess(fixtureNow); e.Fatal != nil || e.Pending == nil || !strings.Contains(e.Pending.Message, "fails at 2026-11-01T12:08:00Z") {
		t.Fatalf("retry-grace 10m, failing for 2m: fatal %+v, pending %+v; want waiting until 12:08", e.Fatal, e.Pending)
	}
	s = newFakeState(t, revB, kustomization(readyOnB)+"\n---\n"+strings.Replace(withStart, `retry-grace: "10m"`, `retry-grace: "1m"`, 1)+"\n---\n"+service)
	if e := s.assess(fixtureNow); e.Fatal == nil || e.Fatal.Code != result.CodeImagePull {
		t.Fatalf("retry-grace 1m, failing for 2m: fatal %+v, pending %+v; want image-pull", e.Fatal, e.Pending)
	}
}

func (f *fakeCache) peek(key assess.ListKey) (assess.List, bool) {
	l, ok := f.lists[key]
	return l, ok
}
