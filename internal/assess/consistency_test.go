package assess

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/fluxhealth"
	"github.com/org/app-status-action/internal/result"
)

// fixedDeployment is Deployment shop/web after revision B fixed its pod template (its
// rollout revision 4, resourceVersion 120): it still carries the ReplicaFailure that revision
// 3's ReplicaSet met, until the new ReplicaSet's pods replace it.
const fixedDeployment = `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop, generation: 5, uid: d1, resourceVersion: "120", annotations: {deployment.kubernetes.io/revision: "4"}}
spec: {replicas: 1}
status:
  observedGeneration: 5
  replicas: 1
  unavailableReplicas: 1
  conditions:
  - {type: Available, status: "False"}
  - {type: Progressing, status: "True", reason: ReplicaSetUpdated}
  - {type: ReplicaFailure, status: "True", reason: FailedCreate, lastTransitionTime: "2026-10-01T00:00:00Z", message: "pods \"web-3-x\" is forbidden: violates PodSecurity \"restricted:latest\""}`

// refusedReplicaSet is revision 3's ReplicaSet, whose pods admission refused, as a list read
// before revision 4's ReplicaSet was created holds it.
const refusedReplicaSet = `apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: web-3, namespace: shop, uid: r3, annotations: {deployment.kubernetes.io/revision: "3"}, ownerReferences: [{apiVersion: apps/v1, kind: Deployment, name: web, uid: d1, controller: true}]}
spec: {replicas: 1}
status: {replicas: 0, observedGeneration: 1}`

// TestClassifierReadsAfterTheWorkload: a rollout failure rests on ReplicaSets and pods read no
// earlier than the workload's own state; those that cannot prove it (a watch, a list older
// than the workload, a list made before it) are Unconfirmed, so the failure is read again
// before it fails the cluster, with the workload's own list, which they are read after. A wait
// is not affected.
func TestClassifierReadsAfterTheWorkload(t *testing.T) {
	t.Parallel()
	root := flux.Ref{Kind: flux.KindKustomization, Namespace: "flux-system", Name: "app"}
	app := withRevision(ks("app", "GitRepository", "app", "", revB, "shop_web_apps_Deployment"), "100")
	denied := outcome{Verdict: result.VerdictFailed, Code: result.CodeAdmissionDenied, Reason: "FailedCreate"}
	tests := []struct {
		name            string
		docs            []string
		order           []string
		want            outcome
		wantUnconfirmed []string
	}{
		{name: "ReplicaSets and pods as their watches hold them",
			docs:  []string{app, gitRepo(), fixedDeployment, refusedReplicaSet},
			order: []string{"kustomizations@100", "gitrepositories@100", "deployments@120"},
			want:  denied, wantUnconfirmed: []string{"deployments", "pods", "replicasets"}},
		{name: "ReplicaSets listed at a resourceVersion older than the Deployment's",
			docs:  []string{app, gitRepo(), fixedDeployment, refusedReplicaSet},
			order: []string{"kustomizations@100", "gitrepositories@100", "deployments@120", "replicasets@110", "pods@130"},
			want:  denied, wantUnconfirmed: []string{"deployments", "replicasets"}},
		{name: "ReplicaSets and pods listed at or after the Deployment's resourceVersion",
			docs:  []string{app, gitRepo(), fixedDeployment, refusedReplicaSet},
			order: []string{"replicasets@120", "pods@125", "kustomizations@130", "gitrepositories@130", "deployments@130"},
			want:  denied},
		{name: "read in order, no resourceVersions: ReplicaSets and pods after the Deployment",
			docs:  []string{withRevision(app, ""), gitRepo(), fixedDeployment, refusedReplicaSet},
			order: []string{"kustomizations", "gitrepositories", "deployments", "replicasets", "pods"},
			want:  denied},
		{name: "read in order, no resourceVersions: ReplicaSets before the Deployment",
			docs:  []string{withRevision(app, ""), gitRepo(), fixedDeployment, refusedReplicaSet},
			order: []string{"kustomizations", "gitrepositories", "replicasets", "deployments", "pods"},
			want:  denied, wantUnconfirmed: []string{"deployments", "replicasets"}},
		{name: "a rollout in progress: what the classifier read is not waited on",
			docs:  []string{app, gitRepo(), withRevision(deployment("Deployment", 3, 2), "120")},
			order: []string{"kustomizations@100", "gitrepositories@100", "deployments@120"},
			want:  outcome{Verdict: result.VerdictInProgress, Reason: "InProgress"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rev, err := flux.ParseRevision(revB)
			if err != nil {
				t.Fatal(err)
			}
			for _, snapshot := range []bool{true, false} {
				spec := Spec{Resources: []flux.Ref{root}, Revision: rev, Workloads: true, Snapshot: snapshot, Health: fluxhealth.New(t.Context())}
				e := Assess(newFixtureView(t, strings.Join(tt.docs, "\n---\n"), tt.order...), NewMemory(), spec, fixtureNow)
				var unconfirmed []string
				for _, key := range e.Unconfirmed {
					unconfirmed = append(unconfirmed, key.GVR.Resource)
				}
				slices.Sort(unconfirmed)
				if diff := cmp.Diff(tt.want, outcomeOf(e)); diff != "" {
					t.Errorf("snapshot %t: verdict (-want +got):\n%s\nfatal %+v pending %+v", snapshot, diff, e.Fatal, e.Pending)
				}
				if diff := cmp.Diff(tt.wantUnconfirmed, unconfirmed); diff != "" {
					t.Errorf("snapshot %t: unconfirmed lists (-want +got):\n%s", snapshot, diff)
				}
			}
		})
	}
}

// TestFailureReadsAfterItsOwner: a read that alone decides a failure (a root's own source
// stalled, a dependency outside the tree that failed, its own source stalled) comes under the
// same consistency rule as the objects judged: one that cannot prove it was made no earlier
// than the Flux object that led to it (a watch of another kind or namespace) is Unconfirmed,
// so the fetching side reads it again before the failure fails the cluster.
func TestFailureReadsAfterItsOwner(t *testing.T) {
	t.Parallel()
	app := flux.Ref{Kind: flux.KindKustomization, Namespace: "flux-system", Name: "app"}
	apps := flux.Ref{Kind: flux.KindKustomization, Namespace: "flux-system", Name: "apps"}
	// apps waits for Kustomization platform/infra, a watch of its own (another namespace).
	waitsOnPlatform := strings.NewReplacer("dependsOn: [{name: infra}]", "dependsOn: [{name: infra, namespace: platform}]",
		"flux-system/infra", "platform/infra").Replace(waitingKs("apps", "infra"))
	inPlatform := func(doc string) string {
		return strings.Replace(doc, "namespace: flux-system", "namespace: platform", 1)
	}
	stalledRoot := withRevision(ks("app", "GitRepository", "app", "", revA), "100")
	// generatorRoot is the root on ExternalArtifact gen, whose generator stalled after
	// Kustomization flux-system (resourceVersion 120) applied it at B, its source's artifact.
	generatorRoot := []string{withRevision(ks("app", "ExternalArtifact", "gen", "", revA), "100"), gitRepoStored(revB), externalArtifact("gen", "flux-system", revA),
		withRevision(ks("flux-system", "GitRepository", "app", "", revB), "120"),
		withRevision(appliedBy(artifactGenerator("gen", "flux-system", digestOf(revA),
			`{type: Stalled, status: "True", reason: ValidationFailed, message: "invalid path pattern", observedGeneration: 3}`), "kustomize.toolkit.fluxcd.io", "flux-system"), "105")}
	// releaseRoot is generatorRoot with the generator applied by HelmRelease shop/web
	// (resourceVersion 108), Ready on its chart, which Kustomization apps (resourceVersion
	// 120) applied at B.
	releaseRoot := []string{generatorRoot[0], gitRepoStored(revB), externalArtifact("gen", "flux-system", revA),
		withRevision(ownedBy(ks("apps", "GitRepository", "app", "", revB), "kustomize.toolkit.fluxcd.io", "flux-system", "flux-system"), "120"),
		withRevision(ks("flux-system", "GitRepository", "app", "", revB), "90"),
		withRevision(ownedBy(helmRelease("OCIRepository", 2, 2, "1.0.0", dig1), "kustomize.toolkit.fluxcd.io", "flux-system", "apps"), "108"), ociRepo(),
		withRevision(ownedBy(artifactGenerator("gen", "flux-system", digestOf(revA),
			`{type: Stalled, status: "True", reason: ValidationFailed, message: "invalid path pattern", observedGeneration: 3}`), "helm.toolkit.fluxcd.io", "shop", "web"), "105")}
	stalled := func(code result.Code, reason string) outcome {
		return outcome{Verdict: result.VerdictFailed, Code: code, Reason: reason}
	}
	tests := []struct {
		name            string
		root            flux.Ref
		docs            []string
		order           []string
		want            outcome
		wantUnconfirmed []string
	}{
		{name: "a root's source stalled, as its watch holds it",
			root: app, docs: []string{stalledRoot, withRevision(source("GitRepository", "app", stalledSource(revA)), "90")},
			order: []string{"kustomizations@100"},
			want:  stalled(result.CodeFluxArtifactFailed, "SourceStalled"), wantUnconfirmed: []string{"gitrepositories"}},
		{name: "a root's source stalled, listed after the root",
			root: app, docs: []string{stalledRoot, withRevision(source("GitRepository", "app", stalledSource(revA)), "90")},
			order: []string{"kustomizations@100", "gitrepositories@110"},
			want:  stalled(result.CodeFluxArtifactFailed, "SourceStalled")},
		{name: "a root's generator stalled, its applier on B: the generator and the applier's source read after the root, before the applier",
			root: app, docs: generatorRoot, order: []string{"kustomizations@130", "artifactgenerators@110", "gitrepositories@115", "externalartifacts@130"},
			want: stalled(result.CodeFluxArtifactFailed, "SourceStalled"), wantUnconfirmed: []string{"artifactgenerators", "gitrepositories"}},
		{name: "a root's generator stalled, its applier on B: all read after the applier",
			root: app, docs: generatorRoot, order: []string{"kustomizations@130", "artifactgenerators@130", "gitrepositories@130", "externalartifacts@130"},
			want: stalled(result.CodeFluxArtifactFailed, "SourceStalled")},
		{name: "a root's generator stalled, its HelmRelease's Kustomization on B: the HelmRelease read before that Kustomization",
			root: app, docs: releaseRoot, order: []string{"kustomizations@130", "helmreleases@110", "ocirepositories@130", "artifactgenerators@130", "gitrepositories@130", "externalartifacts@130"},
			want: stalled(result.CodeFluxArtifactFailed, "SourceStalled"), wantUnconfirmed: []string{"helmreleases"}},
		{name: "a root's generator stalled, its HelmRelease's Kustomization on B: all read after it",
			root: app, docs: releaseRoot, order: []string{"kustomizations@130", "helmreleases@130", "ocirepositories@130", "artifactgenerators@130", "gitrepositories@130", "externalartifacts@130"},
			want: stalled(result.CodeFluxArtifactFailed, "SourceStalled")},
		{name: "a dependency in another namespace failed, as its watch holds it",
			root: apps, docs: []string{waitsOnPlatform, inPlatform(stalledKs("infra")), gitRepo()},
			want: stalled(result.CodeFluxDependencyFailed, "InvalidCELExpression"), wantUnconfirmed: []string{"kustomizations"}},
		{name: "a dependency of the same namespace failed: read from the dependent's own list",
			root: apps, docs: []string{waitingKs("apps", "infra"), stalledKs("infra"), gitRepo()},
			want: stalled(result.CodeFluxDependencyFailed, "InvalidCELExpression")},
		{name: "a dependency whose own source is stalled, as their watches hold them",
			root: apps, docs: []string{waitingKs("apps", "infra"), source("GitRepository", "infra", stalledSource("")), gitRepo(),
				strings.Replace(ks("infra", "GitRepository", "infra", "", ""), `status: "True", reason: ReconciliationSucceeded, message: "Applied revision: "`,
					`status: "False", reason: ArtifactFailed, message: "Source artifact not found, retrying in 30s"`, 1)},
			want: stalled(result.CodeFluxDependencyFailed, "SourceStalled"), wantUnconfirmed: []string{"gitrepositories"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rev, err := flux.ParseRevision(revB)
			if err != nil {
				t.Fatal(err)
			}
			for _, snapshot := range []bool{true, false} {
				spec := Spec{Resources: []flux.Ref{tt.root}, Revision: rev, Workloads: true, Snapshot: snapshot, Health: fluxhealth.New(t.Context())}
				e := Assess(newFixtureView(t, strings.Join(tt.docs, "\n---\n"), tt.order...), NewMemory(), spec, fixtureNow)
				var unconfirmed []string
				for _, key := range e.Unconfirmed {
					unconfirmed = append(unconfirmed, key.GVR.Resource)
				}
				slices.Sort(unconfirmed)
				if diff := cmp.Diff(tt.want, outcomeOf(e)); diff != "" {
					t.Errorf("snapshot %t: verdict (-want +got):\n%s\nfatal %+v pending %+v", snapshot, diff, e.Fatal, e.Pending)
				}
				if diff := cmp.Diff(tt.wantUnconfirmed, unconfirmed); diff != "" {
					t.Errorf("snapshot %t: unconfirmed lists (-want +got):\n%s", snapshot, diff)
				}
			}
		})
	}
}
