package verify

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/yaml"

	"github.com/org/app-status-action/internal/assess"
	"github.com/org/app-status-action/internal/flux"
)

// fakeCache is an objectCache over fixtures: every kind listed, none watched.
type fakeCache struct {
	lists map[assess.ListKey]*staticList
}

func (f *fakeCache) get(key assess.ListKey) assess.List {
	if l, ok := f.lists[key]; ok {
		return l
	}
	l := &staticList{store: cache.NewStore(cache.MetaNamespaceKeyFunc)}
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
func newFakeState(t *testing.T, want string, docs string) *clusterState {
	t.Helper()
	f := &fakeCache{lists: map[assess.ListKey]*staticList{}}
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
		obj, facts, err := transformFor(assess.ListKey{GVR: gvr})(u)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.store.Add(obj); err != nil {
			t.Fatal(err)
		}
		if !facts.IsZero() {
			if l.facts == nil {
				l.facts = map[string]assess.ObjectFacts{}
			}
			l.facts[storeKey(u.GetNamespace(), u.GetName())] = facts
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

func (f *fakeCache) peek(key assess.ListKey) (assess.List, bool) {
	l, ok := f.lists[key]
	return l, ok
}
