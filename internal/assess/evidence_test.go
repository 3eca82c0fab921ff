package assess

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
)

// deploymentPastDeadline is Deployment shop/web, whose rollout of revision 2 passed its
// progress deadline, and its current ReplicaSet.
const deploymentPastDeadline = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop, uid: dep-web, generation: 3, annotations: {deployment.kubernetes.io/revision: "2"}}
spec: {replicas: 1, progressDeadlineSeconds: 600}
status:
  observedGeneration: 3
  replicas: 2
  updatedReplicas: 1
  readyReplicas: 1
  availableReplicas: 1
  unavailableReplicas: 1
  conditions:
  - {type: Available, status: "True", reason: MinimumReplicasAvailable}
  - {type: Progressing, status: "False", reason: ProgressDeadlineExceeded, message: 'ReplicaSet "web-7d9f" has timed out progressing.'}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: web-7d9f
  namespace: shop
  uid: rs-web-7d9f
  generation: 1
  annotations: {deployment.kubernetes.io/revision: "2"}
  ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: web, uid: dep-web, controller: true}]
spec: {replicas: 1}
status: {observedGeneration: 1, replicas: 1}`

// deploymentRollingOut is Deployment shop/web rolling out revision 2, within its deadline.
const deploymentRollingOut = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop, uid: dep-web, generation: 3, annotations: {deployment.kubernetes.io/revision: "2"}}
spec: {replicas: 1, progressDeadlineSeconds: 600}
status:
  observedGeneration: 3
  replicas: 2
  updatedReplicas: 1
  readyReplicas: 1
  availableReplicas: 1
  unavailableReplicas: 1
  conditions:
  - {type: Available, status: "True", reason: MinimumReplicasAvailable}
  - {type: Progressing, status: "True", reason: ReplicaSetUpdated}`

// TestEvidenceNeverDecides: a read done only to classify what was judged (the ReplicaSets and
// pods of a Deployment) that fails, whatever the error, or does not answer in time, leaves the
// verdict to the workload's own status, with a note on the object saying what could not be
// read; only the reads of the objects being judged settle the cluster's access verdicts. A
// server (or a restricting proxy) that does not serve ReplicaSets in the app's namespace is no
// reason to call the cluster NotFound, nor a 403 on them to call it Forbidden.
func TestEvidenceNeverDecides(t *testing.T) {
	t.Parallel()
	rs := schema.GroupResource{Group: "apps", Resource: "replicasets"}
	pods := schema.GroupResource{Resource: "pods"}
	deployments := schema.GroupResource{Group: "apps", Resource: "deployments"}
	timeout := &url.Error{Op: "Get", URL: "https://10.0.0.1/apis/apps/v1/namespaces/shop/replicasets", Err: context.DeadlineExceeded}
	notProgressing := outcome{Verdict: result.VerdictFailed, Code: result.CodeNotProgressing, Reason: "ProgressDeadlineExceeded"}
	type fault struct {
		gr    schema.GroupResource
		err   error
		since time.Duration // before fixtureNow, for a list still on its way
	}
	tests := []struct {
		name     string
		workload string
		faults   []fault
		want     outcome
		// wantSnapshot, when set, is get's verdict where it differs (it lists once).
		wantSnapshot *outcome
		note         string // in the Deployment's message ("" for none)
	}{
		{name: "every list read", workload: deploymentPastDeadline, want: notProgressing},
		{name: "ReplicaSets not served in the namespace (404)", workload: deploymentPastDeadline,
			faults: []fault{{gr: rs, err: apierrors.NewNotFound(rs, "")}}, want: notProgressing,
			note: "rollout failures classified without replicasets: listing replicasets in namespace shop failed: "},
		{name: "ReplicaSets forbidden (403)", workload: deploymentPastDeadline,
			faults: []fault{{gr: rs, err: apierrors.NewForbidden(rs, "", errors.New("no RBAC"))}}, want: notProgressing,
			note: "rollout failures classified without replicasets: the credentials may not list replicasets in namespace shop (403)"},
		{name: "ReplicaSets refused with 401", workload: deploymentPastDeadline,
			faults: []fault{{gr: rs, err: apierrors.NewUnauthorized("token expired")}}, want: notProgressing,
			note: "listing replicasets in namespace shop failed: token expired"},
		{name: "ReplicaSets throttled (429)", workload: deploymentPastDeadline,
			faults: []fault{{gr: rs, err: apierrors.NewTooManyRequests("slow down", 30)}}, want: notProgressing,
			note: "listing replicasets in namespace shop failed: slow down"},
		{name: "ReplicaSets failing (500)", workload: deploymentPastDeadline,
			faults: []fault{{gr: rs, err: apierrors.NewInternalError(errors.New("etcdserver: request timed out"))}}, want: notProgressing,
			note: "listing replicasets in namespace shop failed: "},
		{name: "ReplicaSets list timed out", workload: deploymentPastDeadline,
			faults: []fault{{gr: rs, err: timeout}}, want: notProgressing, note: "context deadline exceeded"},
		{name: "ReplicaSets read, pods not served (404)", workload: deploymentPastDeadline,
			faults: []fault{{gr: pods, err: apierrors.NewNotFound(pods, "")}}, want: notProgressing,
			note: "rollout failures classified without pods: listing pods in namespace shop failed: "},
		{name: "ReplicaSets not answered for a minute", workload: deploymentPastDeadline,
			faults: []fault{{gr: rs, since: time.Minute}}, want: notProgressing, note: "replicasets in namespace shop not listed"},
		{name: "ReplicaSets on their way for 2s: the precise reason is waited for", workload: deploymentPastDeadline,
			faults: []fault{{gr: rs, since: 2 * time.Second}}, want: outcome{Verdict: result.VerdictInProgress, Reason: "Listing"},
			wantSnapshot: &notProgressing},
		{name: "rolling out, ReplicaSets not served: the workload's own status waits", workload: deploymentRollingOut,
			faults: []fault{{gr: rs, err: apierrors.NewNotFound(rs, "")}}, want: outcome{Verdict: result.VerdictInProgress, Reason: string(result.ObjectInProgress)},
			note: "rollout failures classified without replicasets"},
		{name: "rolling out, ReplicaSets forbidden", workload: deploymentRollingOut,
			faults: []fault{{gr: rs, err: apierrors.NewForbidden(rs, "", errors.New("no RBAC"))}}, want: outcome{Verdict: result.VerdictInProgress, Reason: string(result.ObjectInProgress)},
			note: "may not list replicasets"},

		// The objects being judged do decide.
		// (A kind the cluster does not serve is waited on, as discovery's answer is: a CRD the
		// same rollout applies may serve it in a moment.)
		{name: "Deployments not served (404)", workload: deploymentPastDeadline,
			faults: []fault{{gr: deployments, err: apierrors.NewNotFound(deployments, "")}}, want: outcome{Verdict: result.VerdictInProgress, Reason: "UnknownKind"}},
		{name: "Deployments forbidden (403)", workload: deploymentPastDeadline,
			faults: []fault{{gr: deployments, err: apierrors.NewForbidden(deployments, "", errors.New("no RBAC"))}}, want: outcome{Verdict: result.VerdictForbidden, Reason: string(result.VerdictForbidden)}},
	}
	root := flux.Ref{Kind: flux.KindKustomization, Namespace: "flux-system", Name: "app"}
	rev, err := flux.ParseRevision(revB)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			docs := strings.Join([]string{ks("app", "GitRepository", "app", "", revB, "shop_web_apps_Deployment", "shop_web__Service"),
				gitRepo(), tt.workload, service}, "\n---\n")
			for _, snapshot := range []bool{false, true} {
				v := newFixtureView(t, docs)
				for _, f := range tt.faults {
					if f.err != nil {
						v.failList(f.gr, f.err)
					} else {
						v.delayList(f.gr, fixtureNow.Add(-f.since))
					}
				}
				e := Assess(v, NewMemory(), Spec{Resources: []flux.Ref{root}, Revision: rev, Workloads: true, Snapshot: snapshot}, fixtureNow)
				want := tt.want
				if snapshot && tt.wantSnapshot != nil {
					want = *tt.wantSnapshot
				}
				if diff := cmp.Diff(want, outcomeOf(e)); diff != "" {
					t.Errorf("snapshot %t (-want +got):\n%s\npending %+v fatal %+v", snapshot, diff, e.Pending, e.Fatal)
				}
				var msg string
				for _, o := range e.Objects {
					if o.ID == "Deployment/shop/web" {
						msg = o.Message
					}
				}
				for _, f := range tt.faults {
					if f.err == nil && f.since < EvidenceWait && !snapshot && !e.Recheck.Equal(fixtureNow.Add(EvidenceWait-f.since)) {
						t.Errorf("recheck at %s, want %s: when the wait for the list ends", e.Recheck, fixtureNow.Add(EvidenceWait-f.since))
					}
				}
				if snapshot && tt.wantSnapshot != nil {
					continue // (what get lists once, it does not wait for)
				}
				if tt.note == "" && strings.Contains(msg, "classified without") {
					t.Errorf("snapshot %t: Deployment's message %q, want no note", snapshot, msg)
				}
				if !strings.Contains(msg, tt.note) {
					t.Errorf("snapshot %t: Deployment's message %q, want it to say %q", snapshot, msg, tt.note)
				}
			}
		})
	}
}

// TestValuesEvidenceNeverDecides: whether a ConfigMap of a failed HelmRelease's valuesFrom
// changed after the failure only extends helm-controller's retry window; a list of ConfigMaps
// that fails leaves the failure standing, saying what was not compared, and one on its way is
// waited for (within EvidenceWait) rather than taken as "unchanged".
func TestValuesEvidenceNeverDecides(t *testing.T) {
	t.Parallel()
	const valuesFailed = `apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: web, namespace: shop, generation: 2}
spec:
  interval: 10m
  chartRef: {kind: OCIRepository, name: web}
  valuesFrom: [{kind: ConfigMap, name: web-values}]
status:
  observedGeneration: 2
  lastAttemptedGeneration: 2
  conditions:
  - {type: Ready, status: "False", reason: ValuesError, lastTransitionTime: "2026-11-01T11:30:00Z", observedGeneration: 2,
     message: "could not resolve ConfigMap chart values reference 'shop/web-values' with key 'values.yaml': key not found"}`
	configMaps := schema.GroupResource{Resource: "configmaps"}
	failed := outcome{Verdict: result.VerdictFailed, Code: result.CodeFluxValuesFailed, Reason: "ValuesError"}
	tests := []struct {
		name  string
		err   error
		since time.Duration
		want  outcome
		// wantSnapshot, when set, is get's verdict where it differs (it lists once).
		wantSnapshot *outcome
		message      string // in the verdict's message or the HelmRelease's
	}{
		{name: "read: changed after the failure, retried", want: outcome{Verdict: result.VerdictInProgress, Code: result.CodeFluxValuesFailed, Reason: "ValuesError"},
			message: "changed at 2026-11-01T11:59:00Z, after the failure"},
		{name: "ConfigMaps not served (404)", err: apierrors.NewNotFound(configMaps, ""), want: failed,
			message: "ConfigMap/web-values not compared: listing configmaps in namespace shop failed"},
		{name: "ConfigMaps throttled (429)", err: apierrors.NewTooManyRequests("slow down", 30), want: failed,
			message: "ConfigMap/web-values not compared: listing configmaps in namespace shop failed: slow down"},
		{name: "ConfigMaps forbidden (403)", err: apierrors.NewForbidden(configMaps, "", errors.New("no RBAC")), want: failed,
			message: "may not list configmaps in namespace shop (403)"},
		{name: "ConfigMaps on their way", since: time.Second, want: outcome{Verdict: result.VerdictInProgress, Reason: "Listing"},
			wantSnapshot: &failed, message: "reading ConfigMap/web-values, which its values come from"},
	}
	ref := flux.Ref{Kind: flux.KindHelmRelease, Namespace: "shop", Name: "web"}
	docs := strings.Join([]string{valuesFailed, ociRepo(), valuesConfigMap("2026-11-01T11:59:00Z")}, "\n---\n")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, snapshot := range []bool{false, true} {
				spec := Spec{Resources: []flux.Ref{ref}, Workloads: true, Snapshot: snapshot}
				mem := NewMemory()
				// The run saw the failure first three minutes ago: its retry window is over.
				Assess(newFixtureView(t, docs), mem, spec, fixtureNow.Add(-3*time.Minute))
				v := newFixtureView(t, docs)
				if tt.err != nil {
					v.failList(configMaps, tt.err)
				}
				if tt.since > 0 {
					v.delayList(configMaps, fixtureNow.Add(-tt.since))
				}
				e := Assess(v, mem, spec, fixtureNow)
				want := tt.want
				if snapshot && tt.wantSnapshot != nil {
					want = *tt.wantSnapshot
				}
				if diff := cmp.Diff(want, outcomeOf(e)); diff != "" {
					t.Errorf("snapshot %t (-want +got):\n%s\npending %+v fatal %+v", snapshot, diff, e.Pending, e.Fatal)
					continue
				}
				if snapshot && tt.wantSnapshot != nil {
					continue
				}
				msg := ""
				switch {
				case e.Fatal != nil:
					msg = e.Fatal.Message
				case e.Pending != nil:
					msg = e.Pending.Message
				}
				for _, o := range e.Flux {
					msg += "\n" + o.Message
				}
				if !strings.Contains(msg, tt.message) {
					t.Errorf("snapshot %t: message %q, want it to say %q", snapshot, msg, tt.message)
				}
			}
		})
	}
}
