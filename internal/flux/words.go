package flux

import (
	"regexp"
	"strings"
)

// The controllers' words: every decision that reads a controller's message, because no
// reason, condition type or status field says the same, reads it here, each with the
// controller version and the file it was read from. words_test.go pins every entry to a
// message copied from that controller's source or test data. A decision whose words are not
// recognised waits (it never fails and never passes) and says so (unrecognised).

// kustomize-controller v1.9.5, internal/controller/kustomization_controller.go.
var (
	// reconcile() marks Reconciling=True, reason Progressing, with "Fetching manifests for
	// revision %s with a timeout of %s", then "Building manifests …", "Detecting drift …"
	// and, after it wrote the new inventory, "Running health checks for revision %s with a
	// timeout of %s" (checkHealth). The revision is the source artifact's, the one it works
	// on, written before lastAttemptedRevision.
	reconcilingRevisionWords = regexp.MustCompile(`^(?:Fetching manifests|Building manifests|Detecting drift|Running health checks) for revision (\S+) with a timeout of `)
	healthCheckingWords      = regexp.MustCompile(`^Running health checks for revision (\S+) with a timeout of `)
	// "Source artifact not found, retrying in %s", "Source is not ready, artifact not found,
	// retrying in %s", "Dependencies do not meet ready condition, retrying in %s": the
	// controller's --requeue-dependency interval.
	retryingInWords = regexp.MustCompile(`retrying in ([0-9][0-9a-z.]*)`)
	// reconcile(): "kustomization path not found: %w" after the artifact is extracted: the
	// revision lacks spec.path, which no retry changes.
	pathMissingWords = regexp.MustCompile(`^kustomization path not found: |path escapes`)
	// An artifact not there yet or not downloadable, retried: checkDependencies' "Source
	// artifact not found, retrying in %s" and reconcile's "Source is not ready, artifact not
	// found, retrying in %s"; getSource's "unable to get source '%s': %w"; and the fetcher's
	// (fluxcd/pkg/http/fetch v0.25.0, archive_fetcher.go) "failed to download archive…",
	// "failed to verify archive: computed digest doesn't match provided '%s' …", "failed to
	// extract archive …".
	artifactRetriedWords = regexp.MustCompile(`artifact not found, retrying in |^unable to get source '|^failed to (?:download|verify|extract) archive`)
	// A build that failed on what may still arrive, retried at retryInterval (Reconcile
	// requeues every failure so): build() wraps a substitution's error as "post build failed
	// for '%s/%s': %w" (the resource's kyaml Gvk, "Deployment.v1.apps", and its name), and
	// fluxcd/pkg/kustomize v1.35.6 (kustomize_varsub.go LoadVariables) writes a
	// postBuild.substituteFrom object it cannot get as "substitute from 'ConfigMap/%s' error:
	// %w" or "substitute from 'Secret/%s' error: %w" (a NotFound skipped only when the
	// reference is optional), the API's `secrets "x" not found` (`Secret "x" not found` from
	// the cache, when the CacheSecretsAndConfigMaps gate is on); a variable that no source
	// defines, under StrictPostBuildSubstitutions (on by default since v1.9.0), is
	// "envsubst error: variable substitution failed: %w" of fluxcd/pkg/envsubst v1.7.1's
	// (template.go evalFunc) "variable not set (strict mode): %q". The next attempt passes
	// once the object or its key exists: an ExternalSecret, a SOPS Secret another
	// Kustomization applies, a key the same merge adds. v1.7.3 (fluxcd/pkg/kustomize v1.24.0,
	// envsubst v1.5.0) writes the same words. Every other build failure is the manifests'.
	buildRetriedWords = regexp.MustCompile(`^post build failed for '[^']*': (?:substitute from '(?:ConfigMap|Secret)/[^']+' error: \S+ "[^"]+" not found$|envsubst error: variable substitution failed: variable not set \(strict mode\): )`)
	// notFoundWords are the API's NotFound of a Secret as a whole message: `secrets "x" not
	// found`, or `Secret "x" not found` from controller-runtime's cache.
	notFoundWords = regexp.MustCompile(`^(?:secrets|Secret) "([^"]+)" not found$`)
	// strictVariableWords are buildRetriedWords' strict-mode variable not set.
	strictVariableWords = regexp.MustCompile(`: variable not set \(strict mode\): `)
	// checkDependencies (kustomize-controller) and helm-controller's checkDependencies name
	// the dependency they wait for: "dependency 'flux-system/infra' is not ready", "unable to
	// get 'apps/redis' dependency: …". Only the message says which; it names, never decides.
	dependencyWords = regexp.MustCompile(`'([^'/\s]+/[^'/\s]+)'`)
)

// The words of a failure to apply (ReconciliationFailed, kustomize-controller v1.9.5 apply(),
// from fluxcd/pkg/ssa v0.76.2 and the API server) that say whether something of the same
// rollout may remove it (a CRD or a webhook not served yet, a namespace not created yet, an
// API server that did not answer) or the manifests are refused.
//
// A manifest the API server refuses as invalid is final: kustomize-controller retries it at
// retryInterval, but the same manifests get the same answer until a new commit changes them.
// A field the schema does not declare waits for that retry instead, when the object is of a
// custom resource: the CRD that declares it may be applied by another object of the same
// rollout. For a built-in kind (builtinKinds) no CRD changes the schema: final.
// Server-side apply answers a field the schema lacks with structured-merge-diff's "field not
// declared in schema" (typed/validate.go; several as "errors:" and a line each), prefixed, by
// older API servers, with "failed to create typed patch object (NS/NAME; GVK): " (apimachinery
// managedfields structuredmerge.go objectGVKNN, the GVK as "apps/v1, Kind=Deployment" or
// "/v1, Kind=PersistentVolumeClaim"); ssa writes it as "%s dry-run failed[ (REASON)]: %w"
// (fluxcd/pkg/ssa v0.76.2 and v0.61.0, errors/errors.go DryRunErr, the object as
// utils.FmtUnstructured's Kind/namespace/name or Kind/name, with no group); a strict decode
// answers "strict decoding error: unknown field"; validation answers "is invalid" and
// "Invalid value". ssa's ApplyAllStaged returns the first error of a stage, and
// kustomize-controller appends the change set applied before it, a line an object; a message
// may yet join several errors (flux-operator's steps, an aggregate), so each object's error is
// read by itself (schemaRefusedForGood).
var (
	applyFinalWords = []string{
		"is invalid", "invalid value", "immutable", "denied the request", "is forbidden",
	}
	// A field the schema lacks may be one a CRD of the same rollout adds (a chart's crds/, a
	// Kustomization without dependsOn): it fails once kustomize-controller's retry after the
	// grace still gets it, never at once, never at the timeout; of a built-in kind, at once.
	applySchemaWords = []string{"field not declared in schema", "failed to create typed patch object", "strict decoding error", "unknown field"}
	// The object of a dry-run or apply that failed, its kind first (ssa DryRunErr, and
	// manager_apply.go's "%s apply failed: %w").
	dryRunObjectWords = regexp.MustCompile(`\b([A-Za-z][A-Za-z0-9]*)/[^\s/]+(?:/[^\s/]+)? (?:dry-run|apply) failed`)
	// immutableJobWords are ssa's dry-run error of a Job whose pod template changed (the API
	// server's "field is immutable" of spec.template): its namespace and name.
	immutableJobWords = regexp.MustCompile(`(?:^|\s)Job/([^\s/]+)/([^\s/]+) dry-run failed\b[^\n]*\bfield is immutable`)
	// The group and kind of apimachinery's typed patch words; "" before the slash is the core
	// group.
	typedPatchWords   = regexp.MustCompile(`failed to create typed patch object \([^;)]*; ([^/\s,]*)/[^/\s,]+, Kind=([A-Za-z0-9]+)\)`)
	applyRetriedWords = []string{
		"no matches for kind", "the server could not find the requested resource", "ensure crds are installed first",
		"failed calling webhook", "failed to call webhook", "connection refused", "no endpoints available for service",
		"i/o timeout", "context deadline exceeded", "the server is currently unable to handle the request",
		"etcdserver: request timed out", "too many requests",
	}
	// `namespaces "shop" not found`: the namespace another object of the rollout creates.
	applyNamespaceWords = regexp.MustCompile(`namespaces "[^"]+" not found`)
)

// helm-controller v1.6.4, internal/controller/helmrelease_controller.go, and
// fluxcd/pkg/chartutil v1.27.2, values.go (ErrValuesReference.Error).
var (
	// reconcileRelease(): Ready=False ArtifactFailed "Could not load chart: %s" when the
	// source's artifact is not a chart it can load.
	chartLoadWords = regexp.MustCompile(`^Could not load chart: `)
	// ValuesError: "could not resolve[ optional] KIND chart values reference 'NS/NAME'[ with
	// key 'KEY']: REASON", REASON being ErrResourceNotFound ("resource not found", or the API's
	// `configmaps "x" not found`), ErrKeyNotFound ("key not found"), or what fails for good: a
	// document that does not parse, a target path that cannot be merged, a kind not supported.
	valuesReferenceWords = regexp.MustCompile(`^could not resolve (?:optional )?(?:\S+ )?chart values reference '[^']*'(?: with key '[^']*')?: (.*)$`)
	valuesMissingWords   = regexp.MustCompile(`^(?:resource not found|key not found|(?:configmaps|secrets) "[^"]+" not found)$`)
	// internal/reconcile/atomic_release.go (v1.6.4 and v1.4.3): Reconciling=True
	// ProgressingWithRetry "retrying after %s" when the action's strategy is RetryOnFailure
	// (the strategy's retryInterval). It only times the next try; no verdict rests on it:
	// other words wait for RetryOnFailure's documented default, 5m (helmRetryInterval).
	helmRetryingAfterWords = regexp.MustCompile(`^retrying after ([0-9][0-9a-z.]*)$`)
	// internal/reconcile/atomic_release.go (v1.6.4 and v1.4.3): before each action it runs,
	// Reconciling=True Progressing "Running '%s' action with timeout of %s", the action's
	// Name() ("install", "upgrade", "test", "rollback", "uninstall", "unlock", "correct cluster
	// drift"); only a release action also marks Ready Unknown, so a test or a remediation runs
	// under the Ready of the release before it. The reason alone does not say it: every
	// reconcile starts with Progressing "Fulfilling prerequisites" (helmrelease_controller.go).
	helmRunningActionWords = regexp.MustCompile(`^Running '([^']+)' action with timeout of `)
)

// wording is what a controller's words say of a failure.
type wording int

const (
	unrecognised wording = iota // the words are not the controller's known ones: wait
	retriedWords                // a failure the controller retries, that may pass by itself
	finalWords                  // a failure no retry changes
)

// unrecognisedNote is the message of a decision that waits because the controller's words are
// not the known ones.
func unrecognisedNote(controller, version string) string {
	return "the verdict waits: " + controller + "'s words were not recognised (read from " + version + ")"
}

// applyWording says whether a ReconciliationFailed failure is retried or final.
func applyWording(message string) wording {
	m := strings.ToLower(message)
	for _, w := range applyFinalWords {
		if strings.Contains(m, w) {
			return finalWords
		}
	}
	if schemaRefusedForGood(message) {
		return finalWords
	}
	if applyNamespaceWords.MatchString(m) || containsAny(m, applySchemaWords) {
		return retriedWords
	}
	for _, w := range applyRetriedWords {
		if strings.Contains(m, w) {
			return retriedWords
		}
	}
	return unrecognised
}

// schemaRefusedForGood reports whether message, a failure to apply, holds a field the schema
// does not declare (applySchemaWords) of an object of a built-in kind (builtinKinds): its
// group and kind from the typed patch words when they are there, else its kind from the
// object ssa names before "dry-run failed" (or "apply failed"). Each object's error runs from its name to the next
// object's; words before the first name no object.
func schemaRefusedForGood(message string) bool {
	objects := dryRunObjectWords.FindAllStringSubmatchIndex(message, -1)
	for i, loc := range objects {
		end := len(message)
		if i+1 < len(objects) {
			end = objects[i+1][0]
		}
		own := message[loc[0]:end]
		if !containsAny(strings.ToLower(own), applySchemaWords) {
			continue
		}
		if gk := typedPatchWords.FindStringSubmatch(own); gk != nil {
			if builtinKind(gk[1], true, gk[2]) {
				return true
			}
			continue
		}
		if builtinKind("", false, message[loc[2]:loc[3]]) {
			return true
		}
	}
	return false
}

// containsAny reports whether s contains one of words.
func containsAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// artifactWording says whether a Kustomization's ArtifactFailed failure is retried (the
// artifact is not there, or not downloadable yet) or final (the revision lacks the path).
func artifactWording(message string) wording {
	switch {
	case pathMissingWords.MatchString(message):
		return finalWords
	case artifactRetriedWords.MatchString(message):
		return retriedWords
	}
	return unrecognised
}

// valuesWording says whether a HelmRelease's ValuesError is retried (a ConfigMap or Secret of
// valuesFrom, or its key, does not exist yet: an operator may create it) or final.
func valuesWording(message string) wording {
	m := valuesReferenceWords.FindStringSubmatch(message)
	switch {
	case m == nil:
		return unrecognised
	case valuesMissingWords.MatchString(m[1]):
		return retriedWords
	}
	return finalWords
}

// resourceSetProviderWords: a provider of spec.inputsFrom that cannot be read yet (flux-operator
// v0.59.0 getInputs, "failed to get provider %s/%s: %w", stalled by stallWithTerminalError
// as "failed to compute inputs: %s"); flux-operator reconciles again when the provider is
// created.
var resourceSetProviderWords = regexp.MustCompile(`(?:^|: )failed to compute inputs: failed to get provider `)

// resourceSetStepWords name the step of a ResourceSet's failure (flux-operator v0.59.0
// stepError: step "NAME" ACTION: ERROR).
var resourceSetStepWords = regexp.MustCompile(`(?:^|: )step "([^"]*)" `)

// Flux Operator v0.59.0, internal/controller/resourceset_controller.go. Every failure to apply
// is Ready=False with reason ReconciliationFailed and "reconciliation failed: %s"; a wait for
// the generated objects that failed (spec.wait, or a step before the next) says so in the
// words of fluxcd/pkg/ssa v0.77.0 manager_wait.go, "failed early due to stalled resources: [%s]"
// or "timeout waiting for: [%s]", a named step's prefixed with `step "NAME" health check
// failed: ` (stepError). Only the words tell it from an apply the API server refused.
var resourceSetHealthWords = regexp.MustCompile(`(?:^|: )(?:health check failed|failed early due to stalled resources: \[|timeout waiting for: \[)`)

// ImmutableJob names the Job whose changed pod template a failure to apply (message) is about,
// when it is the failure's only object: the API server refuses a new spec.template of a Job
// ("field is immutable"), and fluxcd/pkg/ssa v0.76.2 (manager_apply.go:254-275) recreates the
// object only under spec.force or its force annotation. kustomize-controller retries the
// apply at spec.retryInterval; once the TTL controller has deleted the finished Job
// (ttlSecondsAfterFinished), the retry creates the new one.
func ImmutableJob(message string) (namespace, name string, ok bool) {
	if len(dryRunObjectWords.FindAllStringIndex(message, 2)) != 1 {
		return "", "", false
	}
	m := immutableJobWords.FindStringSubmatch(message)
	if m == nil {
		return "", "", false
	}
	return m[1], m[2], true
}

// The words of a remote Kustomization's (spec.kubeConfig) client that cannot be built: its
// Secret cannot be read, or holds no kubeconfig (fluxcd/pkg/runtime v0.110.3
// client/impersonator.go:200-222, which kustomize-controller v1.9.5 writes as the failure's
// whole message, ReconciliationFailed, and retries at retryInterval).
var (
	kubeConfigSecretMissingWords = regexp.MustCompile(`^unable to read KubeConfig secret '[^']+' error: (?:secrets|Secret) "[^"]+" not found$`)
	kubeConfigFinalWords         = regexp.MustCompile(`^(?:KubeConfig secret '[^']+' does not contain a '[^']+' key with a kubeconfig|invalid KubeConfig in secret '[^']+': |invalid \.spec\.kubeConfig, )`)
)

// kubeConfigWording says what the failure to build a remote Kustomization's client says: a
// Secret not there yet is retried (Cluster API, or another Kustomization, creates a cluster's
// kubeconfig Secret once the cluster is up); one that holds no kubeconfig, or an invalid one,
// is final until a change. ok is false for other words.
func kubeConfigWording(message string) (wording, bool) {
	switch {
	case kubeConfigSecretMissingWords.MatchString(message):
		return retriedWords, true
	case kubeConfigFinalWords.MatchString(message):
		return finalWords, true
	}
	return unrecognised, false
}
