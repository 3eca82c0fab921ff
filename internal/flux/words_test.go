package flux

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// The controllers' format strings, copied from their source; each test below renders them as
// the controller does and pins the table of words.go to them. When a controller rewords one,
// update the copy, the version it names, and words.go together.
const (
	// kustomize-controller v1.9.5, internal/controller/kustomization_controller.go.
	kcFetching        = "Fetching manifests for revision %s with a timeout of %s"    // reconcile()
	kcBuilding        = "Building manifests for revision %s with a timeout of %s"    // reconcile()
	kcDrift           = "Detecting drift for revision %s with a timeout of %s"       // reconcile()
	kcHealth          = "Running health checks for revision %s with a timeout of %s" // checkHealth()
	kcArtifactMissing = "Source artifact not found, retrying in %s"                  // Reconcile()
	kcArtifactGone    = "Source is not ready, artifact not found, retrying in %s"    // Reconcile()
	kcPathMissing     = "kustomization path not found: %s"                           // reconcile(), %w
	kcGetSource       = "unable to get source '%s': %s"                              // getSource(), %w
	kcDependency      = "dependency '%s' is not ready"                               // checkDependencies()
	kcDependencyGet   = "unable to get '%s' dependency: %s"                          // checkDependencies(), %w
	kcPostBuild       = "post build failed for '%s/%s': %s"                          // build(), %w
	// fluxcd/pkg/kustomize v1.35.6 (kustomize-controller v1.9.5's), kustomize_varsub.go.
	kvSubstituteConfigMap = "substitute from 'ConfigMap/%s' error: %s"  // LoadVariables(), %w
	kvSubstituteSecret    = "substitute from 'Secret/%s' error: %s"     // LoadVariables(), %w
	kvEnvsubst            = "envsubst error: %s"                        // SubstituteVariables(), %w
	kvVarSubstitution     = "variable substitution failed: %s"          // varSubstitution(), %w
	kvVarName             = "'%s' var name is invalid, must match '%s'" // varSubstitution()
	// fluxcd/pkg/envsubst v1.7.1, template.go evalFunc: "%w: %q" of errVarNotSet.
	esVarNotSet = "variable not set (strict mode): %q"
	// fluxcd/pkg/http/fetch v0.25.0 (kustomize-controller v1.9.5's), archive_fetcher.go.
	fetchStatus   = "failed to download archive from %s (status: %s)"
	fetchDownload = "failed to download archive: %s" // %w
	fetchVerify   = "failed to verify archive: %s"   // %w of verifyDigest's:
	fetchDigest   = "computed digest doesn't match provided '%s' (check whether file size exceeds max download size)"
	// helm-controller v1.6.4, internal/controller/helmrelease_controller.go, reconcileRelease().
	hcChartLoad = "Could not load chart: %s"
	// helm-controller v1.6.4 (and v1.4.3), internal/reconcile/atomic_release.go, before each
	// action, with its Name() and timeoutForAction.
	hcRunningAction = "Running '%s' action with timeout of %s"
	// fluxcd/pkg/chartutil v1.27.2 (helm-controller v1.6.4's), values.go: ErrValuesReference.Error
	// writes "could not resolve[ optional][ KIND] chart values reference[ 'NAME'][ with key
	// 'KEY']: REASON", and the reasons ErrResourceNotFound, ErrKeyNotFound,
	// ErrUnsupportedRefKind, ErrValuesDataRead (replaced by the error it wraps, when any).
	cuReference         = "could not resolve %s chart values reference '%s' with key '%s': %s"
	cuResourceNotFound  = "resource not found"
	cuKeyNotFound       = "key not found"
	cuUnsupportedKind   = "unsupported values reference kind"
	cuValuesDataRead    = "failed to read values data"
	apiConfigMapMissing = `configmaps "%s" not found` // apimachinery's NewNotFound, the %w of ErrResourceNotFound
)

func TestReconcilingRevisionWords(t *testing.T) {
	t.Parallel()
	rev := "main@sha1:" + shaB
	for _, format := range []string{kcFetching, kcBuilding, kcDrift, kcHealth} {
		msg := fmt.Sprintf(format, rev, (5 * time.Minute).String())
		m := reconcilingRevisionWords.FindStringSubmatch(msg)
		if m == nil || m[1] != rev {
			t.Errorf("reconcilingRevisionWords on %q = %q, want the revision %s", msg, m, rev)
		}
		if got, want := healthCheckingWords.MatchString(msg), format == kcHealth; got != want {
			t.Errorf("healthCheckingWords on %q = %t, want %t", msg, got, want)
		}
	}
	for _, msg := range []string{"Reconciliation in progress", "Fetching revision " + rev} {
		if m := reconcilingRevisionWords.FindStringSubmatch(msg); m != nil {
			t.Errorf("reconcilingRevisionWords on %q = %q, want no match", msg, m)
		}
	}
}

func TestArtifactWording(t *testing.T) {
	t.Parallel()
	url := "http://source-controller.flux-system.svc.cluster.local./gitrepository/flux-system/app/" + shaA + ".tar.gz"
	tests := []struct {
		msg  string
		want wording
	}{
		{fmt.Sprintf(kcArtifactMissing, "30s"), retriedWords},
		{fmt.Sprintf(kcArtifactGone, "30s"), retriedWords},
		{fmt.Sprintf(kcGetSource, "flux-system/app", `gitrepositories.source.toolkit.fluxcd.io "app" not found`), retriedWords},
		{fmt.Sprintf(fetchStatus, url, "503 Service Unavailable"), retriedWords},
		{fmt.Sprintf(fetchDownload, "Get \""+url+"\": dial tcp 10.96.0.9:80: connect: connection refused"), retriedWords},
		{fmt.Sprintf(fetchVerify, fmt.Sprintf(fetchDigest, "sha256:"+shaA+shaA[:24])), retriedWords},
		{fmt.Sprintf(kcPathMissing, "stat /tmp/kustomization-2905563157/apps/production: no such file or directory"), finalWords},
		{"the artifact could not be had", unrecognised},
	}
	for _, tt := range tests {
		if got := artifactWording(tt.msg); got != tt.want {
			t.Errorf("artifactWording(%q) = %d, want %d", tt.msg, got, tt.want)
		}
	}
}

// TestBuildWording: a build that failed on a postBuild substitution lacking a ConfigMap, a
// Secret or a variable is retried (the next attempt passes once it exists); every other build
// failure is the manifests', final.
func TestBuildWording(t *testing.T) {
	t.Parallel()
	postBuild := func(cause string) string { return fmt.Sprintf(kcPostBuild, "Deployment.v1.apps", "web", cause) }
	tests := []struct {
		msg  string
		want wording
	}{
		{postBuild(fmt.Sprintf(kvSubstituteSecret, "cluster-secrets", `secrets "cluster-secrets" not found`)), retriedWords},
		{postBuild(fmt.Sprintf(kvSubstituteConfigMap, "cluster-vars", `configmaps "cluster-vars" not found`)), retriedWords},
		// From the cache, with the CacheSecretsAndConfigMaps feature gate on.
		{postBuild(fmt.Sprintf(kvSubstituteSecret, "cluster-secrets", `Secret "cluster-secrets" not found`)), retriedWords},
		{postBuild(fmt.Sprintf(kvEnvsubst, fmt.Sprintf(kvVarSubstitution, fmt.Sprintf(esVarNotSet, "CLUSTER_NAME")))), retriedWords},
		{postBuild(fmt.Sprintf(kvSubstituteSecret, "cluster-secrets",
			`secrets "cluster-secrets" is forbidden: User "system:serviceaccount:apps:deployer" cannot get resource "secrets" in API group "" in the namespace "apps"`)), finalWords},
		{postBuild(fmt.Sprintf(kvEnvsubst, fmt.Sprintf(kvVarName, "cluster-name", "^[_[:alpha:]][_[:alpha:][:digit:]]*$"))), finalWords},
		{postBuild(fmt.Sprintf(kvEnvsubst, "unable to parse variable name")), finalWords},
		{ksBuildMsg, finalWords},
	}
	substitutes := substitutingView(t, true)
	for _, tt := range tests {
		if got := kustomizationWording(substitutes, condition{reason: "BuildFailed", message: tt.msg}); got != tt.want {
			t.Errorf("kustomizationWording(BuildFailed, %q) = %d, want %d", tt.msg, got, tt.want)
		}
	}
	// Without spec.postBuild.substituteFrom nothing may bring a variable: a typo, final.
	strict := postBuild(fmt.Sprintf(kvEnvsubst, fmt.Sprintf(kvVarSubstitution, fmt.Sprintf(esVarNotSet, "CLUSTER_NAEM"))))
	if got := kustomizationWording(substitutingView(t, false), condition{reason: "BuildFailed", message: strict}); got != finalWords {
		t.Errorf("kustomizationWording(BuildFailed, %q) without substituteFrom = %d, want final (%d)", strict, got, finalWords)
	}
}

// TestDecryptionSecretWording: kustomize-controller v1.9.5's decryptor returns the API's
// NotFound of spec.decryption.secretRef bare, and retries the build: an operator may create
// the Secret. The same words of another Secret, or without decryption, are final.
func TestDecryptionSecretWording(t *testing.T) {
	t.Parallel()
	decrypting := readView(KindKustomization, parseObject(t, "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\n"+
		"metadata: {name: apps, namespace: flux-system}\nspec: {decryption: {provider: sops, secretRef: {name: sops-age}}}"))
	plain := readView(KindKustomization, parseObject(t, "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: apps, namespace: flux-system}\nspec: {}"))
	tests := []struct {
		name string
		v    *view
		msg  string
		want wording
	}{
		{"the API's NotFound", decrypting, `secrets "sops-age" not found`, retriedWords},
		{"the cache's NotFound", decrypting, `Secret "sops-age" not found`, retriedWords},
		{"another Secret", decrypting, `secrets "other" not found`, finalWords},
		{"more words", decrypting, `cannot get sops decryption Secret 'flux-system/sops-age': secrets "sops-age" is forbidden`, finalWords},
		{"no decryption", plain, `secrets "sops-age" not found`, finalWords},
	}
	for _, tt := range tests {
		if got := kustomizationWording(tt.v, condition{reason: "BuildFailed", message: tt.msg}); got != tt.want {
			t.Errorf("%s: kustomizationWording(BuildFailed, %q) = %d, want %d", tt.name, tt.msg, got, tt.want)
		}
	}
}

// substitutingView is the view of a Kustomization with spec.postBuild.substituteFrom when
// substitutes, with postBuild.substitute only otherwise.
func substitutingView(t *testing.T, substitutes bool) *view {
	t.Helper()
	postBuild := "{substitute: {CLUSTER_NAME: prod}}"
	if substitutes {
		postBuild = "{substituteFrom: [{kind: Secret, name: cluster-secrets}]}"
	}
	return readView(KindKustomization, parseObject(t, "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {name: apps, namespace: flux-system}\nspec: {postBuild: "+postBuild+"}"))
}

func TestApplyWording(t *testing.T) {
	t.Parallel()
	// What fluxcd/pkg/ssa v0.76.2 and the API server answer a dry-run, as kustomize-controller
	// v1.9.5 reports it ("%s dry-run failed: %w").
	tests := []struct {
		msg  string
		want wording
	}{
		{`Widget/shop/w dry-run failed: no matches for kind "Widget" in version "example.com/v1"`, retriedWords},
		{`Deployment/shop/web dry-run failed: namespaces "shop" not found`, retriedWords},
		{`Deployment/shop/web dry-run failed: Internal error occurred: failed calling webhook "validate.example.com": failed to call webhook: Post "https://hook.shop.svc:443/validate": dial tcp 10.96.0.4:443: connect: connection refused`, retriedWords},
		{`Deployment/shop/web dry-run failed (Invalid): Deployment.apps "web" is invalid: spec.selector: Invalid value: field is immutable`, finalWords},
		{`Deployment/shop/web dry-run failed: admission webhook "validate.kyverno.svc" denied the request: label required`, finalWords},
		// A field the schema lacks: a CRD of the same rollout may declare it (a chart's crds/, a
		// Kustomization without dependsOn), so the retry is waited for, then it fails.
		{`Server/rabbitmq-instances/rabbitmq-management dry-run failed: .spec.accessPolicy: field not declared in schema`, retriedWords},
		{`Widget/shop/w dry-run failed (BadRequest): failed to create typed patch object (shop/w; example.com/v1, Kind=Widget): .spec.size: field not declared in schema`, retriedWords},
		{`reconciliation failed: Widget/shop/w dry-run failed (BadRequest): error strict decoding YAML: strict decoding error: unknown field "spec.size"`, retriedWords},
		// The group the typed patch words give decides over the kind's name: Knative's Service.
		{`Service/shop/web dry-run failed (BadRequest): failed to create typed patch object (shop/web; serving.knative.dev/v1, Kind=Service): .spec.template.spec.foo: field not declared in schema`, retriedWords},
		// Of a built-in kind, no CRD can declare it: the same manifests get the same answer.
		{`Deployment/apps/podinfo dry-run failed: .spec.template.spec.containers[name="podinfo"].imagePullPolicyy: field not declared in schema`, finalWords},
		{`PersistentVolumeClaim/default/pvc dry-run failed (BadRequest): failed to create typed patch object (default/pvc; /v1, Kind=PersistentVolumeClaim): .spec.persistentVolumeReclaimPolicy: field not declared in schema`, finalWords},
		{`Deployment/shop/web dry-run failed (BadRequest): error strict decoding YAML: error converting YAML to JSON: strict decoding error: unknown field "spec.replica"`, finalWords},
		{`ClusterRole/reader dry-run failed (BadRequest): .rules[0].verb: field not declared in schema`, finalWords},
		{`reconciliation failed: Job/shop/migrate dry-run failed (BadRequest): errors:
  .spec.backofLimit: field not declared in schema
  .spec.ttlSecondsAfterFinish: field not declared in schema`, finalWords},
		{`Deployment/shop/web apply failed: .spec.replica: field not declared in schema`, finalWords},
		// Several errors: each object's words are its own.
		{`[Widget/shop/w dry-run failed: .spec.size: field not declared in schema, Deployment/shop/web dry-run failed: .spec.replica: field not declared in schema]`, finalWords},
		{`[Deployment/shop/web dry-run failed: namespaces "shop" not found, Widget/shop/w dry-run failed: .spec.size: field not declared in schema]`, retriedWords},
		{"Widget/shop/w dry-run failed: .spec.size: field not declared in schema\nDeployment/shop/web configured\nService/shop/web created\n", retriedWords},
		{`Service/shop/web dry-run failed (Invalid): Service "web" is invalid: spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive`, finalWords},
		// What the rollout itself may still remove stays retried.
		{`Deployment/shop/web dry-run failed (InternalError): Internal error occurred: failed calling webhook "validate.example.com": failed to call webhook: Post "https://hook.shop.svc:443/validate?timeout=10s": context deadline exceeded`, retriedWords},
		{`Deployment/shop/web namespace not specified: the server could not find the requested resource`, retriedWords},
		{`something never seen`, unrecognised},
	}
	for _, tt := range tests {
		if got := applyWording(tt.msg); got != tt.want {
			t.Errorf("applyWording(%q) = %d, want %d", tt.msg, got, tt.want)
		}
	}
}

func TestValuesWording(t *testing.T) {
	t.Parallel()
	ref := func(kind, reason string) string {
		return fmt.Sprintf(cuReference, kind, "apps/podinfo-values", "values.yaml", reason)
	}
	tests := []struct {
		msg  string
		want wording
	}{
		{ref("ConfigMap", cuResourceNotFound), retriedWords},
		{ref("ConfigMap", fmt.Sprintf(apiConfigMapMissing, "podinfo-values")), retriedWords},
		{ref("Secret", cuKeyNotFound), retriedWords},
		{ref("ConfigMap", cuValuesDataRead), finalWords},
		{ref("ConfigMap", "error converting YAML to JSON: yaml: line 3: could not find expected ':'"), finalWords},
		{ref("Deployment", cuUnsupportedKind), finalWords},
		{"could not find key 'replicaCount' in ConfigMap 'apps/podinfo-values'", unrecognised},
	}
	for _, tt := range tests {
		if got := valuesWording(tt.msg); got != tt.want {
			t.Errorf("valuesWording(%q) = %d, want %d", tt.msg, got, tt.want)
		}
	}
}

func TestChartLoadAndDependencyWords(t *testing.T) {
	t.Parallel()
	if msg := fmt.Sprintf(hcChartLoad, "Chart.yaml file is missing"); !chartLoadWords.MatchString(msg) {
		t.Errorf("chartLoadWords does not match %q", msg)
	}
	for _, msg := range []string{fmt.Sprintf(kcDependency, "flux-system/infra"), fmt.Sprintf(kcDependencyGet, "flux-system/infra", "not found")} {
		if m := dependencyWords.FindStringSubmatch(msg); m == nil || m[1] != "flux-system/infra" {
			t.Errorf("dependencyWords on %q = %q, want flux-system/infra", msg, m)
		}
	}
	if m := retryingInWords.FindStringSubmatch(fmt.Sprintf(kcArtifactMissing, (30 * time.Second).String())); m == nil || m[1] != "30s" {
		t.Errorf("retryingInWords = %q, want 30s", m)
	}
}

// TestUnrecognisedWordsWait: a failure whose words decide the verdict, in words the table
// does not know, waits and says so.
func TestUnrecognisedWordsWait(t *testing.T) {
	t.Parallel()
	ks := fromYAML(t, `
metadata: {name: app, namespace: flux-system, generation: 1}
spec: {sourceRef: {kind: GitRepository, name: app}}
status:
  lastAttemptedRevision: main@sha1:`+shaB+`
  conditions:
  - {type: Ready, status: "False", reason: ReconciliationFailed, observedGeneration: 1, message: "the cluster said no in new words"}`)
	g := Evaluate(Ref{KindKustomization, "flux-system", "app"}, ks, mustRevision(t, shaB), nil)
	if g.Verdict != inProgress || g.Retried || !containsAll(g.Message, "kustomize-controller's words were not recognised", "v1.9.5") {
		t.Errorf("unrecognised apply failure: %s retried=%t (%s), want InProgress saying the words were not recognised", g.Verdict, g.Retried, g.Message)
	}
	fetching := fromYAML(t, `
metadata: {name: app, namespace: flux-system, generation: 1}
spec: {sourceRef: {kind: GitRepository, name: app}}
status:
  lastAttemptedRevision: main@sha1:`+shaA+`
  conditions:
  - {type: Reconciling, status: "True", reason: ProgressingWithRetry, observedGeneration: 1, message: "Getting the manifests of main@sha1:`+shaB+`"}
  - {type: Ready, status: "False", reason: ArtifactFailed, observedGeneration: 1, message: "`+fmt.Sprintf(kcPathMissing, "stat /tmp/x/deploy: no such file or directory")+`"}`)
	for _, want := range []string{shaA, shaB} {
		g := Evaluate(Ref{KindKustomization, "flux-system", "app"}, fetching, mustRevision(t, want), nil)
		if g.Verdict != inProgress || !containsAll(g.Message, "words were not recognised") {
			t.Errorf("artifact failure under unrecognised Reconciling words, %s expected: %s (%s), want InProgress saying so", want[:7], g.Verdict, g.Message)
		}
	}
}

func containsAll(s string, words ...string) bool {
	for _, w := range words {
		if !strings.Contains(s, w) {
			return false
		}
	}
	return true
}

// TestResourceSetHealthWords: the words of a ResourceSet's failed wait, as flux-operator
// v0.59.0 writes them from fluxcd/pkg/ssa v0.77.0, against an apply the API server refused.
func TestResourceSetHealthWords(t *testing.T) {
	t.Parallel()
	tests := []struct {
		message string
		want    bool
	}{
		{"reconciliation failed: failed early due to stalled resources: [Kustomization/flux-system/team2 status: 'Failed']", true},
		{"reconciliation failed: timeout waiting for: [Kustomization/flux-system/team1 status: 'InProgress']", true},
		{`reconciliation failed: step "apps" health check failed: timeout waiting for: [HelmRelease/apps/web status: 'InProgress']`, true},
		{`reconciliation failed: Kustomization/flux-system/team1 dry-run failed (Invalid): spec.interval: Required value`, false},
		{"reconciliation failed: failed to build kube client: timeout waiting for the service account", false},
	}
	for _, tt := range tests {
		if got := resourceSetHealthWords.MatchString(tt.message); got != tt.want {
			t.Errorf("resourceSetHealthWords.MatchString(%q) = %t, want %t", tt.message, got, tt.want)
		}
	}
}

// TestImmutableJob: the one object of a failure to apply that is a Job whose template the API
// server refuses as immutable (fluxcd/pkg/ssa's dry-run error); none for another kind, another
// refusal, or a failure of several objects.
func TestImmutableJob(t *testing.T) {
	t.Parallel()
	const job = `Job/shop/migrate dry-run failed (Invalid): Job.batch "migrate" is invalid: spec.template: Invalid value: core.PodTemplateSpec{}: field is immutable`
	tests := []struct {
		name, msg       string
		wantNS, wantJob string
	}{
		{name: "a Job's template", msg: job, wantNS: "shop", wantJob: "migrate"},
		{name: "with the change set applied before it", msg: "Namespace/shop configured\n" + job, wantNS: "shop", wantJob: "migrate"},
		{name: "a Deployment's selector", msg: `Deployment/shop/web dry-run failed (Invalid): Deployment.apps "web" is invalid: spec.selector: Invalid value: v1.LabelSelector{}: field is immutable`},
		{name: "a Job refused otherwise", msg: `Job/shop/migrate dry-run failed (Invalid): Job.batch "migrate" is invalid: spec.template.spec.containers[0].image: Required value`},
		{name: "two objects", msg: job + "\n" + `Deployment/shop/web dry-run failed (Invalid): Deployment.apps "web" is invalid: spec.replicas: Invalid value: -1`},
	}
	for _, tt := range tests {
		ns, name, ok := ImmutableJob(tt.msg)
		if ns != tt.wantNS || name != tt.wantJob || ok != (tt.wantJob != "") {
			t.Errorf("%s: ImmutableJob() = %q, %q, %t; want %q, %q", tt.name, ns, name, ok, tt.wantNS, tt.wantJob)
		}
	}
}

// TestKubeConfigWording: a remote Kustomization whose kubeconfig Secret is not there yet is
// retried (Cluster API creates it once the cluster is up); one that holds no kubeconfig, or an
// invalid one, is final; fluxcd/pkg/runtime v0.110.3's words, as kustomize-controller v1.9.5
// writes them.
func TestKubeConfigWording(t *testing.T) {
	t.Parallel()
	v := readView(KindKustomization, parseObject(t, "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\n"+
		"metadata: {name: apps, namespace: flux-system}\nspec: {kubeConfig: {secretRef: {name: prod-kubeconfig}}}"))
	tests := []struct {
		msg  string
		want wording
	}{
		{`unable to read KubeConfig secret 'flux-system/prod-kubeconfig' error: secrets "prod-kubeconfig" not found`, retriedWords},
		{`unable to read KubeConfig secret 'flux-system/prod-kubeconfig' error: Secret "prod-kubeconfig" not found`, retriedWords},
		{`KubeConfig secret 'flux-system/prod-kubeconfig' does not contain a 'value' key with a kubeconfig`, finalWords},
		{`invalid KubeConfig in secret 'flux-system/prod-kubeconfig': couldn't get version/kind; json parse error`, finalWords},
		{`unable to read KubeConfig secret 'flux-system/prod-kubeconfig' error: secrets "prod-kubeconfig" is forbidden: User "x" cannot get resource "secrets"`, finalWords},
	}
	for _, tt := range tests {
		if got := kustomizationWording(v, condition{reason: "ReconciliationFailed", message: tt.msg}); got != tt.want {
			t.Errorf("kustomizationWording(ReconciliationFailed, %q) = %d, want %d", tt.msg, got, tt.want)
		}
	}
}

func TestHelmRunningActionWords(t *testing.T) {
	t.Parallel()
	for _, action := range []string{"install", "upgrade", "test", "rollback", "uninstall", "unlock", "correct cluster drift"} {
		msg := fmt.Sprintf(hcRunningAction, action, (5 * time.Minute).String())
		if m := helmRunningActionWords.FindStringSubmatch(msg); m == nil || m[1] != action {
			t.Errorf("helmRunningActionWords on %q = %q, want %s", msg, m, action)
		}
	}
	for _, msg := range []string{"Fulfilling prerequisites", "retrying after 5m0s"} {
		if helmRunningActionWords.MatchString(msg) {
			t.Errorf("helmRunningActionWords matches %q", msg)
		}
	}
}
