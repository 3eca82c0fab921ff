package assess

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/fluxhealth"
	"github.com/org/app-status-action/internal/result"
)

const (
	shaA = "aaaaaaa1111111111111111111111111111111aa"
	shaB = "bbbbbbb2222222222222222222222222222222bb"
	revA = "main@sha1:" + shaA
	revB = "main@sha1:" + shaB
	dig1 = "1111111111111111111111111111111111111111111111111111111111111111"
	dig2 = "2222222222222222222222222222222222222222222222222222222222222222"
)

// ks is a Kustomization of flux-system applying from source (a GitRepository app unless set)
// with extra spec fields, its inventory the given entries ("ns_name_group_Kind", "@v2" for
// another version than v1), Ready on rev.
func ks(name, sourceKind, sourceName, spec, rev string, entries ...string) string {
	var inv strings.Builder
	for _, e := range entries {
		id, v, ok := strings.Cut(e, "@")
		if !ok {
			v = "v1"
		}
		fmt.Fprintf(&inv, "    - {id: %s, v: %s}\n", id, v)
	}
	return `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: ` + name + `, namespace: flux-system, generation: 2}
spec: {sourceRef: {kind: ` + sourceKind + `, name: ` + sourceName + `}` + spec + `}
status:
  observedGeneration: 2
  lastAppliedRevision: "` + rev + `"
  lastAttemptedRevision: "` + rev + `"
  conditions:
  - {type: Ready, status: "True", reason: ReconciliationSucceeded, message: "Applied revision: ` + rev + `", observedGeneration: 2}
  inventory:
    entries:` + entryList(inv.String())
}

// entryList is an inventory's YAML list of entries: [] when there are none.
func entryList(entries string) string {
	if entries == "" {
		return " []\n"
	}
	return "\n" + entries
}

func gitRepo() string {
	const rev = revB
	return `apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: app, namespace: flux-system, generation: 1}
status:
  observedGeneration: 1
  artifact: {revision: "` + rev + `"}
  conditions: [{type: Ready, status: "True", reason: Succeeded}]`
}

// deployment is the workload shop/web of kind (a Deployment or a StatefulSet) at generation
// gen, its controller at observed, its replica ready.
func deployment(kind string, gen, observed int) string {
	const readyReplicas = 1
	status := fmt.Sprintf("  observedGeneration: %d\n  replicas: 1\n  updatedReplicas: %d\n  readyReplicas: %d\n  availableReplicas: %d\n",
		observed, readyReplicas, readyReplicas, readyReplicas)
	if kind == "StatefulSet" {
		status = fmt.Sprintf("  observedGeneration: %d\n  replicas: 1\n  readyReplicas: %d\n  currentReplicas: %d\n  updatedReplicas: %d\n  currentRevision: web-1\n  updateRevision: web-1\n",
			observed, readyReplicas, readyReplicas, readyReplicas)
	} else {
		status += "  conditions:\n  - {type: Available, status: \"True\"}\n  - {type: Progressing, status: \"True\", reason: NewReplicaSetAvailable}\n"
	}
	return fmt.Sprintf(`apiVersion: apps/v1
kind: %s
metadata: {name: web, namespace: shop, generation: %d}
spec: {replicas: 1}
status:
%s`, kind, gen, status)
}

// withRevision gives a document a metadata.resourceVersion.
func withRevision(doc, rv string) string {
	return strings.Replace(doc, "metadata: {", `metadata: {resourceVersion: "`+rv+`", `, 1)
}

// helmRelease is HelmRelease shop/web from chartRef (kind/web), at generation gen, Ready on
// chart version (an OCI chart's digest after +) at observed, valuesFrom ConfigMap web-values.
func helmRelease(chartKind string, gen, observed int, version, digest string) string {
	const chartName = "web"
	return fmt.Sprintf(`apiVersion: helm.toolkit.fluxcd.io/v2
kind: HelmRelease
metadata: {name: web, namespace: shop, generation: %d}
spec:
  interval: 10m
  chartRef: {kind: %s, name: %s}
  valuesFrom: [{kind: ConfigMap, name: web-values}]
status:
  observedGeneration: %d
  lastAttemptedGeneration: %d
  lastAttemptedRevision: "%s"
  lastAttemptedReleaseAction: upgrade
  storageNamespace: shop
  conditions:
  - {type: Ready, status: "True", reason: UpgradeSucceeded, message: "Helm upgrade succeeded", observedGeneration: %d}
  - {type: Released, status: "True", reason: UpgradeSucceeded, message: "Helm upgrade succeeded", observedGeneration: %d}
  history:
  - {name: web, namespace: shop, version: 2, status: deployed, chartName: web, chartVersion: "%s", ociDigest: "sha256:%s", digest: "sha256:%s", lastDeployed: "2026-11-01T11:30:00Z"}
  inventory:
    entries: []`, gen, chartKind, chartName, observed, observed, version, observed, observed, version, digest, digest)
}

func ociRepo() string {
	const digest = dig1
	const version = "1.0.0"
	return `apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata: {name: web, namespace: shop, generation: 1}
status:
  observedGeneration: 1
  artifact: {revision: "` + version + `@sha256:` + digest + `"}
  conditions: [{type: Ready, status: "True", reason: Succeeded}]`
}

func externalArtifact(name, ns, rev string) string {
	return `apiVersion: source.toolkit.fluxcd.io/v1
kind: ExternalArtifact
metadata: {name: ` + name + `, namespace: ` + ns + `, generation: 1}
spec: {sourceRef: {apiVersion: source.extensions.fluxcd.io/v1beta1, kind: ArtifactGenerator, name: ` + name + `}}
status:
  artifact: {revision: "` + rev + `"}
  conditions: [{type: Ready, status: "True", reason: Succeeded}]`
}

// valuesConfigMap is ConfigMap shop/web-values, last applied by kustomize-controller at at.
func valuesConfigMap(at string) string {
	return `apiVersion: v1
kind: ConfigMap
metadata:
  name: web-values
  namespace: shop
  creationTimestamp: "2026-10-01T00:00:00Z"
  managedFields:
  - {manager: kustomize-controller, operation: Apply, apiVersion: v1, time: "` + at + `", fieldsType: FieldsV1, fieldsV1: {"f:data": {}}}
data: {values.yaml: "replicas: 2"}`
}

const service = `apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec: {type: ClusterIP}`

// outcome is what a table test compares: the verdict, its code and reason.
type outcome struct {
	Verdict result.Verdict
	Code    result.Code
	Reason  string
}

func outcomeOf(e *Assessment) outcome {
	switch {
	case e.Fatal != nil:
		return outcome{Verdict: e.Fatal.Verdict, Code: e.Fatal.Code, Reason: e.Fatal.Reason}
	case e.Pending != nil:
		return outcome{Verdict: result.VerdictInProgress, Code: e.Pending.Code, Reason: e.Pending.Reason}
	case !e.Needs.Empty() || e.Syncing:
		return outcome{Verdict: result.VerdictInProgress, Reason: "Listing"}
	}
	return outcome{Verdict: result.VerdictCurrent}
}

var (
	current    = outcome{Verdict: result.VerdictCurrent}
	confirming = outcome{Verdict: result.VerdictInProgress, Reason: "Confirming"}
)

// TestAssessTrees: whole trees as YAML, each decided the same way by `get` (Spec.Snapshot) and
// `verify` from the same view, whatever the order the requested resources are given in. The
// race: each kind has its own watch stream, so a Kustomization Ready on B may be seen with its
// Deployment still at the previous generation, rolled out; only a read of the Deployment made
// after the Kustomization's status returned can say Current.
func TestAssessTrees(t *testing.T) {
	t.Parallel()
	root := flux.Ref{Kind: flux.KindKustomization, Namespace: "flux-system", Name: "app"}
	appWith := func(entries ...string) string { return ks("app", "GitRepository", "app", "", revB, entries...) }
	web := []string{"shop_web_apps_Deployment", "shop_web__Service"}
	sts := []string{"shop_web_apps_StatefulSet", "shop_web__Service"}
	tests := []struct {
		name      string
		resources []flux.Ref
		docs      []string
		order     []string // the resources in the order they were read; none: watches
		want      outcome
		// fluxOnly: the same verdict when only the Flux objects are verified (no workloads).
		fluxOnly bool
	}{
		// The race, for a Deployment, a StatefulSet and a nested HelmRelease.
		{name: "Kustomization without wait Ready on B, its Deployment as the watch holds it: previous generation, rolled out",
			docs: []string{appWith(web...), gitRepo(), deployment("Deployment", 2, 2), service}, want: confirming},
		{name: "the same state read as lists, the Deployment's before the Kustomization's",
			docs:  []string{appWith(web...), gitRepo(), deployment("Deployment", 2, 2), service},
			order: []string{"deployments", "services", "gitrepositories", "kustomizations"}, want: confirming},
		{name: "read consistently: the Deployment's new generation is not rolled out yet",
			docs:  []string{appWith(web...), gitRepo(), deployment("Deployment", 3, 2), service},
			order: []string{"kustomizations", "gitrepositories", "deployments", "services"}, want: outcome{Verdict: result.VerdictInProgress, Reason: "InProgress"}},
		{name: "read consistently, rolled out",
			docs:  []string{appWith(web...), gitRepo(), deployment("Deployment", 3, 3), service},
			order: []string{"kustomizations", "gitrepositories", "deployments", "services"}, want: current},
		{name: "the Deployment's list at a resourceVersion older than the Kustomization's status, whatever the order of reads",
			docs:  []string{withRevision(appWith(web...), "100"), gitRepo(), deployment("Deployment", 2, 2), service},
			order: []string{"kustomizations@100", "gitrepositories@100", "deployments@90", "services@110"}, want: confirming},
		{name: "the Deployment's list at a resourceVersion at or after the Kustomization's status, read in any order",
			docs:  []string{withRevision(appWith(web...), "100"), gitRepo(), deployment("Deployment", 3, 3), service},
			order: []string{"deployments@120", "services@120", "gitrepositories@120", "kustomizations@120"}, want: current},
		{name: "a tree that comes back to a namespace: lists compared by resourceVersion",
			docs: []string{withRevision(appWith("team_mid_kustomize.toolkit.fluxcd.io_Kustomization"), "100"),
				strings.Replace(withRevision(ks("mid", "GitRepository", "app", "", revB, "flux-system_leaf_kustomize.toolkit.fluxcd.io_Kustomization"), "105"), "namespace: flux-system", "namespace: team", 1),
				withRevision(ks("leaf", "GitRepository", "app", "", revB, "shop_web_apps_Deployment"), "107"), gitRepo(), deployment("Deployment", 3, 3)},
			order: []string{"kustomizations@110", "gitrepositories@110", "deployments@110"}, want: current},
		{name: "a StatefulSet as the watch holds it",
			docs: []string{appWith(sts...), gitRepo(), deployment("StatefulSet", 2, 2), service}, want: confirming},
		{name: "a StatefulSet read consistently, its new generation not rolled out",
			docs:  []string{appWith(sts...), gitRepo(), deployment("StatefulSet", 3, 2), service},
			order: []string{"kustomizations", "gitrepositories", "statefulsets", "services"}, want: outcome{Verdict: result.VerdictInProgress, Reason: "InProgress"}},
		{name: "a nested HelmRelease as the watch holds it: Ready at its previous generation",
			docs: []string{appWith("shop_web_helm.toolkit.fluxcd.io_HelmRelease@v2", "shop_web-values__ConfigMap"), gitRepo(),
				helmRelease("OCIRepository", 1, 1, "1.0.0+"+dig1[:12], dig1), ociRepo(), valuesConfigMap("2026-11-01T11:00:00Z")},
			want: confirming},
		{name: "a nested HelmRelease read consistently: the new generation not reconciled yet",
			docs: []string{appWith("shop_web_helm.toolkit.fluxcd.io_HelmRelease@v2", "shop_web-values__ConfigMap"), gitRepo(),
				helmRelease("OCIRepository", 2, 1, "1.0.0+"+dig1[:12], dig1), ociRepo(), valuesConfigMap("2026-11-01T11:00:00Z")},
			order: []string{"kustomizations", "gitrepositories", "helmreleases", "ocirepositories", "configmaps"}, want: outcome{Verdict: result.VerdictInProgress}},

		// Values in a sibling Kustomization: the HelmRelease waits for helm-controller to
		// compose values applied after its last deploy, whatever the order of the walk.
		{name: "values applied by a sibling Kustomization after the last deploy",
			resources: []flux.Ref{root, {Kind: flux.KindKustomization, Namespace: "flux-system", Name: "config"}},
			docs: []string{appWith("shop_web_helm.toolkit.fluxcd.io_HelmRelease@v2"), ks("config", "GitRepository", "app", "", revB, "shop_web-values__ConfigMap"), gitRepo(),
				helmRelease("OCIRepository", 2, 2, "1.0.0+"+dig1[:12], dig1), ociRepo(), valuesConfigMap("2026-11-01T11:45:00Z")},
			order: []string{"kustomizations", "gitrepositories", "helmreleases", "ocirepositories", "configmaps"}, want: outcome{Verdict: result.VerdictInProgress, Reason: "ValuesNotApplied"}, fluxOnly: true},
		{name: "values applied by a nested sibling Kustomization after the last deploy",
			docs: []string{appWith("shop_web_helm.toolkit.fluxcd.io_HelmRelease@v2", "flux-system_config_kustomize.toolkit.fluxcd.io_Kustomization"),
				ks("config", "GitRepository", "app", "", revB, "shop_web-values__ConfigMap"), gitRepo(),
				helmRelease("OCIRepository", 2, 2, "1.0.0+"+dig1[:12], dig1), ociRepo(), valuesConfigMap("2026-11-01T11:45:00Z")},
			order: []string{"kustomizations", "gitrepositories", "helmreleases", "ocirepositories", "configmaps"}, want: outcome{Verdict: result.VerdictInProgress, Reason: "ValuesNotApplied"}, fluxOnly: true},
		{name: "values applied by a sibling before the last deploy",
			resources: []flux.Ref{root, {Kind: flux.KindKustomization, Namespace: "flux-system", Name: "config"}},
			docs: []string{appWith("shop_web_helm.toolkit.fluxcd.io_HelmRelease@v2"), ks("config", "GitRepository", "app", "", revB, "shop_web-values__ConfigMap"), gitRepo(),
				helmRelease("OCIRepository", 2, 2, "1.0.0+"+dig1[:12], dig1), ociRepo(), valuesConfigMap("2026-11-01T11:00:00Z")},
			order: []string{"kustomizations", "gitrepositories", "helmreleases", "ocirepositories", "configmaps"}, want: current, fluxOnly: true},

		// The values' list is judged too: a ConfigMap as a watch holds it may predate a change
		// helm-controller has not composed yet, with or without the workloads.
		{name: "values in the owner's inventory, the ConfigMap as the watch holds it: applied before the last deploy",
			docs: []string{withRevision(appWith("shop_web_helm.toolkit.fluxcd.io_HelmRelease@v2", "shop_web-values__ConfigMap"), "100"), gitRepo(),
				withRevision(helmRelease("OCIRepository", 2, 2, "1.0.0+"+dig1[:12], dig1), "110"), ociRepo(), valuesConfigMap("2026-11-01T11:00:00Z")},
			order: []string{"kustomizations@100", "gitrepositories@110", "helmreleases@110", "ocirepositories@110"}, want: confirming, fluxOnly: true},
		{name: "values in the owner's inventory, the ConfigMap's list after the owner's status but before the HelmRelease's",
			docs: []string{withRevision(appWith("shop_web_helm.toolkit.fluxcd.io_HelmRelease@v2", "shop_web-values__ConfigMap"), "100"), gitRepo(),
				withRevision(helmRelease("OCIRepository", 2, 2, "1.0.0+"+dig1[:12], dig1), "110"), ociRepo(), valuesConfigMap("2026-11-01T11:00:00Z")},
			order: []string{"configmaps@105", "kustomizations@120", "gitrepositories@120", "helmreleases@120", "ocirepositories@120"}, want: confirming, fluxOnly: true},
		{name: "values in the owner's inventory, the ConfigMap's list after both statuses",
			docs: []string{withRevision(appWith("shop_web_helm.toolkit.fluxcd.io_HelmRelease@v2", "shop_web-values__ConfigMap"), "100"), gitRepo(),
				withRevision(helmRelease("OCIRepository", 2, 2, "1.0.0+"+dig1[:12], dig1), "110"), ociRepo(), valuesConfigMap("2026-11-01T11:00:00Z")},
			order: []string{"configmaps@110", "kustomizations@120", "gitrepositories@120", "helmreleases@120", "ocirepositories@120"}, want: current, fluxOnly: true},
		{name: "values applied by a sibling, the ConfigMap as the watch holds it",
			resources: []flux.Ref{root, {Kind: flux.KindKustomization, Namespace: "flux-system", Name: "config"}},
			docs: []string{appWith("shop_web_helm.toolkit.fluxcd.io_HelmRelease@v2"), ks("config", "GitRepository", "app", "", revB, "shop_web-values__ConfigMap"), gitRepo(),
				helmRelease("OCIRepository", 2, 2, "1.0.0+"+dig1[:12], dig1), ociRepo(), valuesConfigMap("2026-11-01T11:00:00Z")},
			order: []string{"kustomizations", "gitrepositories", "helmreleases", "ocirepositories"}, want: confirming, fluxOnly: true},
		{name: "values applied by a sibling, the ConfigMap's list after the HelmRelease's status but before the sibling's",
			resources: []flux.Ref{root, {Kind: flux.KindKustomization, Namespace: "flux-system", Name: "config"}},
			docs: []string{withRevision(appWith("shop_web_helm.toolkit.fluxcd.io_HelmRelease@v2"), "100"),
				withRevision(ks("config", "GitRepository", "app", "", revB, "shop_web-values__ConfigMap"), "120"), gitRepo(),
				withRevision(helmRelease("OCIRepository", 2, 2, "1.0.0+"+dig1[:12], dig1), "110"), ociRepo(), valuesConfigMap("2026-11-01T11:00:00Z")},
			order: []string{"configmaps@115", "kustomizations@130", "gitrepositories@130", "helmreleases@130", "ocirepositories@130"}, want: confirming, fluxOnly: true},

		// ExternalArtifact sources: a nested object must apply what its artifact offers.
		{name: "a nested Kustomization of an ExternalArtifact behind its artifact",
			docs: []string{appWith("flux-system_gen_kustomize.toolkit.fluxcd.io_Kustomization"), gitRepo(),
				ks("gen", "ExternalArtifact", "gen", "", "latest@sha256:"+dig1), externalArtifact("gen", "flux-system", "latest@sha256:"+dig2)},
			order: []string{"kustomizations", "gitrepositories", "externalartifacts"}, want: outcome{Verdict: result.VerdictInProgress, Reason: "ReconciliationSucceeded"}},
		{name: "a nested Kustomization of an ExternalArtifact on its artifact, its generator's build of its source now",
			docs: []string{appWith("flux-system_gen_kustomize.toolkit.fluxcd.io_Kustomization"), gitRepo(),
				ks("gen", "ExternalArtifact", "gen", "", "latest@sha256:"+dig2), externalArtifact("gen", "flux-system", "latest@sha256:"+dig2),
				artifactGenerator("gen", "flux-system", builtFromGitRepo, generatorReady)},
			order: []string{"kustomizations", "gitrepositories", "artifactgenerators", "externalartifacts"}, want: current},
		{name: "a nested HelmRelease whose chartRef is an ExternalArtifact, behind it",
			docs: []string{appWith("shop_web_helm.toolkit.fluxcd.io_HelmRelease@v2"), gitRepo(),
				helmRelease("ExternalArtifact", 2, 2, "1.0.0+"+dig1[:12], dig1), externalArtifact("web", "shop", "1.1.0@sha256:"+dig2)},
			order: []string{"kustomizations", "gitrepositories", "helmreleases", "externalartifacts"}, want: outcome{Verdict: result.VerdictInProgress}},
		{name: "a nested HelmRelease whose chartRef is an ExternalArtifact, on it, its generator's build of its source now",
			docs: []string{appWith("shop_web_helm.toolkit.fluxcd.io_HelmRelease@v2"), gitRepo(),
				helmRelease("ExternalArtifact", 2, 2, "1.1.0+"+dig2[:12], dig2), externalArtifact("web", "shop", "1.1.0@sha256:"+dig2),
				artifactGenerator("web", "shop", builtFromGitRepo, generatorReady)},
			order: []string{"kustomizations", "helmreleases", "gitrepositories", "artifactgenerators", "externalartifacts"}, want: current},

		// Remote objects (spec.kubeConfig): Current only when Flux itself waited.
		{name: "remote, without wait: not verifiable here, not a failed rollout",
			docs: []string{ks("app", "GitRepository", "app", ", kubeConfig: {secretRef: {name: prod}}", revB, web...), gitRepo()},
			want: outcome{Verdict: result.VerdictUnverified, Code: result.CodeFluxRemoteUnverified, Reason: "RemoteNotVerified"}},
		{name: "remote, with wait",
			docs: []string{ks("app", "GitRepository", "app", ", wait: true, kubeConfig: {secretRef: {name: prod}}", revB, web...), gitRepo()},
			want: current},
		// kustomize-controller's health checks without wait check spec.healthChecks only
		// (v1.9.5 checkHealth: ReferenceToObjMetadataSet(obj.Spec.HealthChecks)).
		{name: "remote, health checks of some of its objects",
			docs: []string{ks("app", "GitRepository", "app", ", healthChecks: [{apiVersion: apps/v1, kind: Deployment, name: web, namespace: shop}], kubeConfig: {secretRef: {name: prod}}", revB, web...), gitRepo()},
			want: outcome{Verdict: result.VerdictUnverified, Code: result.CodeFluxRemoteUnverified, Reason: "RemoteNotVerified"}},
		{name: "remote, health checks of every object with a status (a ConfigMap has none)",
			docs: []string{ks("app", "GitRepository", "app", ", healthChecks: [{apiVersion: apps/v1, kind: Deployment, name: web, namespace: shop}, {apiVersion: v1, kind: Service, name: web, namespace: shop}], kubeConfig: {secretRef: {name: prod}}",
				revB, append(web, "shop_web-config__ConfigMap")...), gitRepo()},
			want: current},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			resources := tt.resources
			if resources == nil {
				resources = []flux.Ref{root}
			}
			rev, err := flux.ParseRevision(revB)
			if err != nil {
				t.Fatal(err)
			}
			docs := strings.Join(tt.docs, "\n---\n")
			workloads := []bool{true}
			if tt.fluxOnly {
				workloads = append(workloads, false)
			}
			// Every order of the requested resources, by get and by verify: one verdict.
			for _, order := range permutations(resources) {
				for _, snapshot := range []bool{true, false} {
					for _, withWorkloads := range workloads {
						spec := Spec{Resources: order, Revision: rev, Workloads: withWorkloads, Snapshot: snapshot, Health: fluxhealth.New(t.Context())}
						e := Assess(newFixtureView(t, docs, tt.order...), NewMemory(), spec, fixtureNow)
						got := outcomeOf(e)
						if tt.want.Reason == "" && tt.want.Verdict == result.VerdictInProgress {
							got.Reason = "" // any reason to wait
						}
						if diff := cmp.Diff(tt.want, got); diff != "" {
							t.Errorf("resources %v, snapshot %t, workloads %t (-want +got):\n%s\npending %+v fatal %+v", order, snapshot, withWorkloads, diff, e.Pending, e.Fatal)
						}
					}
				}
			}
		})
	}
}

// permutations lists every order of refs.
func permutations(refs []flux.Ref) [][]flux.Ref {
	if len(refs) <= 1 {
		return [][]flux.Ref{refs}
	}
	var out [][]flux.Ref
	for i := range refs {
		rest := slices.Concat(refs[:i:i], refs[i+1:])
		for _, p := range permutations(rest) {
			out = append(out, append([]flux.Ref{refs[i]}, p...))
		}
	}
	return out
}

// TestAssessIsDeterministic: the same view and memory give the same assessment, whatever the
// order of the requested resources.
func TestAssessIsDeterministic(t *testing.T) {
	t.Parallel()
	docs := strings.Join([]string{ks("app", "GitRepository", "app", "", revB, "shop_web_apps_Deployment", "shop_web__Service"),
		ks("config", "GitRepository", "app", "", revB, "shop_web-values__ConfigMap"), gitRepo(), deployment("Deployment", 3, 2), service,
		valuesConfigMap("2026-11-01T11:00:00Z")}, "\n---\n")
	rev, _ := flux.ParseRevision(revB)
	refs := []flux.Ref{{Kind: flux.KindKustomization, Namespace: "flux-system", Name: "app"}, {Kind: flux.KindKustomization, Namespace: "flux-system", Name: "config"}}
	var first *Assessment
	for _, order := range permutations(refs) {
		e := Assess(newFixtureView(t, docs, "kustomizations", "gitrepositories", "deployments", "services", "configmaps"), NewMemory(),
			Spec{Resources: order, Revision: rev, Workloads: true, Health: fluxhealth.New(t.Context())}, fixtureNow)
		if first == nil {
			first = e
			continue
		}
		if diff := cmp.Diff(outcomeOf(first), outcomeOf(e)); diff != "" {
			t.Errorf("order %v (-first +got):\n%s", order, diff)
		}
		if diff := cmp.Diff(first.Objects, e.Objects); diff != "" {
			t.Errorf("order %v objects (-first +got):\n%s", order, diff)
		}
	}
}

// TestSkippedNestedFluxObjects: a Kustomization or HelmRelease its owner Kustomization skips
// (facts.kustomizeSkip, as the view reads its labels and annotations in the cluster) is walked
// as any nested Flux object: kustomize-controller v1.9.5 reads those annotations on it only as
// its owner's apply selectors, and its own reconcile (helm-controller's too) goes on applying
// what its source offers. Only its spec in Git does not reach it. Paused, it is named so and
// counted as not rolled out, its gate and inventory judged as any other's (a failure of what
// it applied fails the cluster), and under fail-on-suspended it fails as flux-suspended unless
// such a failure was found first; ssa: IfNotPresent, it is judged as any other.
func TestSkippedNestedFluxObjects(t *testing.T) {
	t.Parallel()
	const (
		childID = "Kustomization/flux-system/child"
		hrID    = "HelmRelease/shop/web"
	)
	root := ks("app", "GitRepository", "app", "", revB, "flux-system_child_kustomize.toolkit.fluxcd.io_Kustomization")
	// child lists a Deployment that cannot pull its image: judged, it fails the cluster.
	child := func(skip, annotation string) string {
		return "facts: {kustomizeSkip: " + skip + "}\n" + strings.Replace(ks("child", "GitRepository", "app", "", revB, "shop_web_apps_Deployment"),
			"metadata: {name: child, namespace: flux-system, generation: 2}", "metadata: {name: child, namespace: flux-system, generation: 2, annotations: {"+annotation+"}}", 1)
	}
	childFailing := func(skip, annotation string) string {
		return strings.Replace(child(skip, annotation), `{type: Ready, status: "True", reason: ReconciliationSucceeded`, `{type: Ready, status: "False", reason: HealthCheckFailed`, 1)
	}
	rootHR := ks("app", "GitRepository", "app", "", revB, "shop_web_helm.toolkit.fluxcd.io_HelmRelease@v2")
	// The HelmRelease Ready on the previous chart: judged, it waits for the new one.
	hrIgnored := "facts: {kustomizeSkip: ssa-ignore}\n" + strings.Replace(helmRelease("OCIRepository", 2, 2, "1.0.0+"+dig1[:12], dig1),
		"metadata: {name: web, namespace: shop, generation: 2}", "metadata: {name: web, namespace: shop, generation: 2, annotations: {kustomize.toolkit.fluxcd.io/ssa: ignore}}", 1)
	ociOnNew := strings.Replace(ociRepo(), `revision: "1.0.0@sha256:`+dig1+`"`, `revision: "1.1.0@sha256:`+dig2+`"`, 1)
	const disabled = "kustomize.toolkit.fluxcd.io/reconcile: disabled"
	specNotApplied := "its spec in Git is not applied: kustomize-controller skips it (" + disabled + ")"
	imagePull := outcome{Verdict: result.VerdictFailed, Code: result.CodeImagePull, Reason: "ErrImagePull"}
	suspended := outcome{Verdict: result.VerdictSuspended, Code: result.CodeFluxSuspended, Reason: "Suspended"}
	runFixtureCases(t, []fixtureCase{
		{name: "nested Kustomization paused (reconcile: disabled), applied the revision, its Deployment Current: Current, its spec named",
			looks: []fixtureLook{{docs: []string{root, child("reconcile-disabled", disabled), gitRepo(), deploymentCurrent},
				want: expected{Outcome: current, Objects: map[string]result.ObjectStatus{childID: result.ObjectCurrent, "Deployment/shop/web": result.ObjectCurrent},
					ObjectSays: map[string]string{childID: specNotApplied}}}}},
		// It applied the revision itself (lastAppliedRevision): its Deployment's new pod
		// cannot pull its image, and that is the answer.
		{name: "nested Kustomization paused, applied the revision, its Deployment cannot pull: fails",
			looks: []fixtureLook{{docs: []string{root, child("reconcile-disabled", disabled), gitRepo(), deploymentPulling},
				want: expected{Outcome: imagePull, Objects: map[string]result.ObjectStatus{childID: result.ObjectCurrent, "Deployment/shop/web": result.ObjectFailed},
					ObjectSays: map[string]string{childID: specNotApplied}}}}},
		{name: "nested Kustomization paused, its Deployment cannot pull, under fail-on-suspended: the pull is the answer", failOnSuspended: true,
			looks: []fixtureLook{{docs: []string{root, child("reconcile-disabled", disabled), gitRepo(), deploymentPulling},
				want: expected{Outcome: imagePull, Says: []string{"Deployment/shop/web: container \"web\" of pod web-3-x"}}}}},
		{name: "nested Kustomization paused, its Deployment Current, under fail-on-suspended: fails as suspended", failOnSuspended: true,
			looks: []fixtureLook{{docs: []string{root, child("reconcile-disabled", disabled), gitRepo(), deploymentCurrent},
				want: expected{Outcome: suspended, Says: []string{childID + ": " + specNotApplied}}}}},
		{name: "nested Kustomization paused, Flux objects only: Current, its spec named", noWorkloads: true,
			looks: []fixtureLook{{docs: []string{root, child("reconcile-disabled", disabled), gitRepo(), deploymentPulling},
				want: expected{Outcome: current, ObjectSays: map[string]string{childID: specNotApplied}}}}},
		{name: "nested Kustomization paused, Flux objects only, under fail-on-suspended: fails as suspended", noWorkloads: true, failOnSuspended: true,
			looks: []fixtureLook{{docs: []string{root, child("reconcile-disabled", disabled), gitRepo(), deploymentPulling},
				want: expected{Outcome: suspended, Says: []string{childID + ": " + specNotApplied}}}}},
		// helm-controller reads no such annotation: it upgrades to what the source offers.
		{name: "nested HelmRelease paused (ssa: ignore, any case), on the previous chart: waited for, its spec named",
			looks: []fixtureLook{{docs: []string{rootHR, gitRepo(), hrIgnored, ociOnNew, valuesConfigMap("2026-11-01T11:00:00Z")},
				want: expected{Outcome: outcome{Verdict: result.VerdictInProgress, Reason: "UpgradeSucceeded"}, Says: []string{"waiting for 1.1.0@sha256:" + dig2[:12]},
					Objects:    map[string]result.ObjectStatus{hrID: result.ObjectCurrent},
					ObjectSays: map[string]string{hrID: "its spec in Git is not applied: kustomize-controller skips it (kustomize.toolkit.fluxcd.io/ssa: Ignore)"}}}}},
		{name: "nested HelmRelease paused, under fail-on-suspended: fails as suspended", failOnSuspended: true,
			looks: []fixtureLook{{docs: []string{rootHR, gitRepo(), hrIgnored, ociOnNew, valuesConfigMap("2026-11-01T11:00:00Z")},
				want: expected{Outcome: suspended}}}},
		// Created once (ssa: IfNotPresent): its controller still applies what its source
		// offers, so it is judged as any other, Current or not, its inventory too.
		{name: "nested Kustomization created once (ssa: IfNotPresent), Ready: judged, its failing Deployment fails",
			looks: []fixtureLook{{docs: []string{root, child("ssa-if-not-present", "kustomize.toolkit.fluxcd.io/ssa: IfNotPresent"), gitRepo(), deploymentPulling},
				want: expected{Outcome: outcome{Verdict: result.VerdictFailed, Code: result.CodeImagePull, Reason: "ErrImagePull"}}}}},
		{name: "nested Kustomization created once (ssa: IfNotPresent), its health check failed: fails",
			looks: []fixtureLook{{docs: []string{root, childFailing("ssa-if-not-present", "kustomize.toolkit.fluxcd.io/ssa: IfNotPresent"), gitRepo(), deploymentPulling},
				want: expected{Outcome: outcome{Verdict: result.VerdictFailed, Code: result.CodeImagePull, Reason: "ErrImagePull"}}}}},
		{name: "nested Kustomization not skipped: its failing Deployment fails",
			looks: []fixtureLook{{docs: []string{root, strings.Replace(child("reconcile-disabled", disabled), "facts: {kustomizeSkip: reconcile-disabled}\n", "", 1), gitRepo(), deploymentPulling},
				want: expected{Outcome: outcome{Verdict: result.VerdictFailed, Code: result.CodeImagePull, Reason: "ErrImagePull"}}}}},
	})
}

// TestPausedNestedFluxObjectCounted: a nested Kustomization its owner pauses, walked and
// Current, is counted in the Current message as not rolled out, beside what it lists.
func TestPausedNestedFluxObjectCounted(t *testing.T) {
	t.Parallel()
	root := ks("app", "GitRepository", "app", "", revB, "flux-system_child_kustomize.toolkit.fluxcd.io_Kustomization")
	child := "facts: {kustomizeSkip: reconcile-disabled}\n" + strings.Replace(ks("child", "GitRepository", "app", "", revB, "shop_web_apps_Deployment"),
		"metadata: {name: child, namespace: flux-system, generation: 2}",
		"metadata: {name: child, namespace: flux-system, generation: 2, annotations: {kustomize.toolkit.fluxcd.io/reconcile: disabled}}", 1)
	rev, err := flux.ParseRevision(revB)
	if err != nil {
		t.Fatal(err)
	}
	view := newFixtureView(t, strings.Join([]string{root, child, gitRepo(), deploymentCurrent}, "\n---\n"), fixtureReads...)
	spec := Spec{Resources: []flux.Ref{{Kind: flux.KindKustomization, Namespace: "flux-system", Name: "app"}}, Revision: rev, Workloads: true,
		Health: fluxhealth.New(t.Context())}
	e := Assess(view, NewMemory(), spec, fixtureNow)
	const want = "2 objects Current, 1 of them not rolled out (kustomize-controller skips them)"
	if got := CurrentMessage(e); got != want {
		t.Errorf("CurrentMessage = %q, want %q (fatal %+v, pending %+v)", got, want, e.Fatal, e.Pending)
	}
}
