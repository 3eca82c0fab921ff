package verify_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/org/app-status-action/internal/assess"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/testing/fakeapi"
	"github.com/org/app-status-action/internal/verify"
)

// stuckCluster starts a fake API server holding the app "app" whose first Deployment,
// app-000, passed its progress deadline, with its current ReplicaSet and an unready pod;
// refusals are the reads it refuses.
func stuckCluster(t *testing.T, refusals ...fakeapi.Refusal) *fakeapi.Server {
	t.Helper()
	resources, objects := fakeapi.App("app", fakeRevision, 3)
	for i, o := range objects {
		md, _ := o["metadata"].(map[string]any)
		if o["kind"] != "Deployment" || md["name"] != "app-000" {
			continue
		}
		objects[i] = map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": "app-000", "namespace": "app", "uid": "uid-app-000", "generation": int64(2), "resourceVersion": "2",
				"annotations": map[string]any{"deployment.kubernetes.io/revision": "2"}},
			"spec": map[string]any{"replicas": int64(1), "progressDeadlineSeconds": int64(60)},
			"status": map[string]any{"observedGeneration": int64(2), "replicas": int64(2), "updatedReplicas": int64(1),
				"readyReplicas": int64(1), "availableReplicas": int64(1), "unavailableReplicas": int64(1),
				"conditions": []any{
					map[string]any{"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable"},
					map[string]any{"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded",
						"message": `ReplicaSet "app-000-7d9f" has timed out progressing.`},
				}}}
	}
	owner := func(kind, name, uid string) []any {
		return []any{map[string]any{"apiVersion": "apps/v1", "kind": kind, "name": name, "uid": uid, "controller": true}}
	}
	objects = append(objects,
		map[string]any{"apiVersion": "apps/v1", "kind": "ReplicaSet",
			"metadata": map[string]any{"name": "app-000-7d9f", "namespace": "app", "uid": "uid-rs", "generation": int64(1), "resourceVersion": "2",
				"annotations":     map[string]any{"deployment.kubernetes.io/revision": "2"},
				"ownerReferences": owner("Deployment", "app-000", "uid-app-000")},
			"spec":   map[string]any{"replicas": int64(1)},
			"status": map[string]any{"observedGeneration": int64(1), "replicas": int64(1)}},
		map[string]any{"apiVersion": "v1", "kind": "Pod",
			"metadata": map[string]any{"name": "app-000-7d9f-abcde", "namespace": "app", "uid": "uid-pod", "resourceVersion": "2",
				"creationTimestamp": time.Now().Add(-5 * time.Minute).UTC().Format(time.RFC3339),
				"ownerReferences":   owner("ReplicaSet", "app-000-7d9f", "uid-rs")},
			"spec": map[string]any{"containers": []any{map[string]any{"name": "app", "image": "app:2"}}},
			"status": map[string]any{"phase": "Running",
				"conditions": []any{map[string]any{"type": "Ready", "status": "False", "reason": "ContainersNotReady"}},
				"containerStatuses": []any{map[string]any{"name": "app", "image": "app:2", "imageID": "", "ready": false, "restartCount": int64(0),
					"state": map[string]any{"running": map[string]any{"startedAt": time.Now().Add(-5 * time.Minute).UTC().Format(time.RFC3339)}}}}}},
	)
	resources = append(resources,
		fakeapi.Resource{Group: "apps", Version: "v1", Kind: "ReplicaSet", Plural: "replicasets", Namespaced: true},
		fakeapi.Resource{Version: "v1", Kind: "Pod", Plural: "pods", Namespaced: true})
	s := fakeapi.Start(fakeapi.Options{Resources: resources, Objects: objects, Refusals: refusals})
	t.Cleanup(s.Close)
	return s
}

// TestEvidenceReadsNeverDecide: a Deployment past its progress deadline on clusters that
// refuse the reads the classifier makes in the app's namespace (a restricting proxy, a server
// that does not serve ReplicaSets there, RBAC, a failing upstream): each cluster is Failed
// (not-progressing), at once, with a note on the Deployment saying what could not be read;
// never NotFound or Forbidden, which only the reads of the objects judged decide. Nor do the
// events gathered as evidence once it failed (the fake serves none).
func TestEvidenceReadsNeverDecide(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		refuse  []fakeapi.Refusal
		note    string // in the Deployment's message; "" for none
		podName bool   // the failure names the unready pod (the pods were read)
	}{
		{name: "every read served", podName: true},
		{name: "replicasets not served in app (404)", refuse: []fakeapi.Refusal{{Plural: "replicasets", Namespace: "app", Code: http.StatusNotFound}},
			note: "rollout failures classified without replicasets: listing replicasets in namespace app failed: the server could not find the requested resource"},
		{name: "replicasets forbidden in app (403)", refuse: []fakeapi.Refusal{{Plural: "replicasets", Namespace: "app", Code: http.StatusForbidden}},
			note: "rollout failures classified without replicasets: the credentials may not list replicasets in namespace app (403)"},
		{name: "replicasets failing in app (500)", refuse: []fakeapi.Refusal{{Plural: "replicasets", Namespace: "app", Code: http.StatusInternalServerError}},
			note: "rollout failures classified without replicasets: listing replicasets in namespace app failed"},
		{name: "pods not served in app (404)", refuse: []fakeapi.Refusal{{Plural: "pods", Namespace: "app", Code: http.StatusNotFound}},
			note: "rollout failures classified without pods: listing pods in namespace app failed"},
	}
	var targets []verify.Target
	for _, tt := range tests {
		targets = append(targets, fakeTarget(tt.name, stuckCluster(t, tt.refuse...)))
	}
	// By verify (watches) and by get (one list each).
	for _, snapshot := range []bool{false, true} {
		req := fakeRequest(targets, 30*time.Second)
		req.Snapshot = snapshot
		run := verify.Run(context.Background(), req)
		for _, tt := range tests {
			checkEvidenceFault(t, resultOf(run, tt.name), snapshot, tt.note, tt.podName)
		}
	}
}

func checkEvidenceFault(t *testing.T, c result.Cluster, snapshot bool, note string, podName bool) {
	t.Helper()
	if c.Verdict != result.VerdictFailed || c.Code != result.CodeNotProgressing {
		t.Errorf("%s, snapshot %t: %s (%s): %s; want Failed (not-progressing)", c.Name, snapshot, c.Verdict, c.Code, c.Message)
		return
	}
	if c.DurationMs > 5000 {
		t.Errorf("%s, snapshot %t: Failed after %dms, want it within 5s", c.Name, snapshot, c.DurationMs)
	}
	t.Logf("%s, snapshot %t: Failed (not-progressing) in %dms", c.Name, snapshot, c.DurationMs)
	var dep result.Object
	for _, o := range c.Objects {
		if o.ID == "Deployment/app/app-000" {
			dep = o
		}
	}
	if note == "" && strings.Contains(dep.Message, "classified without") {
		t.Errorf("%s, snapshot %t: Deployment's message %q, want no note", c.Name, snapshot, dep.Message)
	}
	if !strings.Contains(dep.Message, note) {
		t.Errorf("%s, snapshot %t: Deployment's message %q, want it to say %q", c.Name, snapshot, dep.Message, note)
	}
	if named := dep.Failure != nil && dep.Failure.Pod != ""; named != podName {
		t.Errorf("%s, snapshot %t: failure %+v names a pod: %t, want %t", c.Name, snapshot, dep.Failure, named, podName)
	}
	// The fake serves no events: the evidence says so, and the verdict stands.
	if dep.Failure == nil || !strings.Contains(dep.Failure.EventsError, "cannot list the events of namespace app") {
		t.Errorf("%s, snapshot %t: failure %+v, want it to say the events could not be listed", c.Name, snapshot, dep.Failure)
	}
}

// TestEvidenceReadHangs: a proxy that never answers the ReplicaSets' list in the app's
// namespace holds the verdict back EvidenceWait at most: Failed (not-progressing), saying the
// list did not answer, long before the list's own timeout or the run's.
func TestEvidenceReadHangs(t *testing.T) {
	t.Parallel()
	target := fakeTarget("hanging", stuckCluster(t, fakeapi.Refusal{Plural: "replicasets", Namespace: "app"}))
	c := resultOf(verify.Run(context.Background(), fakeRequest([]verify.Target{target}, time.Minute)), "hanging")
	if c.Verdict != result.VerdictFailed || c.Code != result.CodeNotProgressing {
		t.Fatalf("%s (%s): %s; want Failed (not-progressing)", c.Verdict, c.Code, c.Message)
	}
	if limit := assess.EvidenceWait + 3*time.Second; c.DurationMs > limit.Milliseconds() {
		t.Errorf("Failed after %dms, want it within %s", c.DurationMs, limit)
	}
	for _, o := range c.Objects {
		if o.ID == "Deployment/app/app-000" && !strings.Contains(o.Message, "rollout failures classified without replicasets: replicasets in namespace app not listed after 10s") {
			t.Errorf("Deployment's message %q, want it to say the ReplicaSets were not listed", o.Message)
		}
	}
	t.Logf("ReplicaSets' list hanging: Failed (not-progressing) in %dms", c.DurationMs)
}
