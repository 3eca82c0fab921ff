package assess

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/fluxhealth"
	"github.com/org/app-status-action/internal/result"
)

// The moments of the canary fixtures: the template of revision B written at 11:50, Flagger's
// states before it (a previous revision's) or after it.
const (
	beforeB  = "2026-11-01T11:40:00Z"
	writtenB = "2026-11-01T11:50:00Z"
	afterB   = "2026-11-01T11:55:00Z"
)

// flaggerWorkload is Deployment shop/NAME running image, its template last written at written
// (the view's ObjectFacts.TemplateWritten), rolled out when ready.
func flaggerWorkload(name, image, written string, ready bool) string {
	updated := 2
	if !ready {
		updated = 1
	}
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
facts: {templateWritten: "%s"}
metadata:
  name: %s
  namespace: shop
  generation: 4
spec:
  replicas: 2
  template:
    metadata: {labels: {app: %s}}
    spec:
      containers:
      - {name: web, image: "%s"}
status:
  observedGeneration: 4
  replicas: 2
  updatedReplicas: %d
  readyReplicas: 2
  availableReplicas: 2
  conditions:
  - {type: Available, status: "True"}
  - {type: Progressing, status: "True", reason: NewReplicaSetAvailable}`, written, name, name, image, updated)
}

// asDaemonSet turns a flaggerWorkload into the DaemonSet of the same template, rolled out.
func asDaemonSet(doc string) string {
	doc = strings.Replace(doc, "kind: Deployment", "kind: DaemonSet", 1)
	doc = strings.Replace(doc, "  replicas: 2\n  template:", "  template:", 1)
	i := strings.Index(doc, "\nstatus:")
	return doc[:i] + `
status:
  observedGeneration: 4
  desiredNumberScheduled: 2
  currentNumberScheduled: 2
  updatedNumberScheduled: 2
  numberReady: 2
  numberAvailable: 2`
}

// flaggerCanary is Canary shop/web of Deployment web in phase, with the hashes Flagger
// recorded (v1.36.1 wrote such values on the test bed) and its Promoted condition as
// MakeStatusConditions writes it, last updated at since.
func flaggerCanary(phase, applied, promoted, since string) string {
	status, message := "Unknown", "New revision detected, progressing canary analysis."
	switch phase {
	case "Initialized":
		status, message = "True", "Deployment initialization completed."
	case "Succeeded":
		status, message = "True", "Canary analysis completed successfully, promotion finished."
	case "Failed":
		status, message = "False", "Canary analysis failed, Deployment scaled to zero."
	case "WaitingPromotion":
		message = "Waiting for approval."
	}
	return fmt.Sprintf(`apiVersion: flagger.app/v1beta1
kind: Canary
metadata: {name: web, namespace: shop, generation: 1}
spec:
  provider: kubernetes
  targetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  service: {port: 80}
  analysis: {interval: 10s, threshold: 1, iterations: 1}
status:
  phase: %s
  failedChecks: 0
  canaryWeight: 0
  iterations: 1
  lastAppliedSpec: "%s"
  lastPromotedSpec: "%s"
  lastTransitionTime: "%s"
  conditions:
  - {type: Promoted, status: "%s", reason: %s, message: "%s", lastUpdateTime: "%s", lastTransitionTime: "%s"}`,
		phase, applied, promoted, since, status, phase, message, since, since)
}

// The hashes of two templates, as Flagger v1.36.1 recorded them on the test bed (the
// Deployments of TestCanaryCurrentOnlyAfterPromotion, images web:1.0.0 and web:1.1.0).
const (
	hashA = "5499cc7985"
	hashB = "6d99bbd4d"
)

// tracked makes a Canary track ConfigMap shop/web-config, as Flagger's config tracker records
// it (status.trackedConfigs: key, checksum of its data).
func tracked(canary string) string {
	return strings.Replace(canary, "  lastAppliedSpec:", "  trackedConfigs: {configmap/web-config: 5c8f7d}\n  lastAppliedSpec:", 1)
}

// The data of a tracked ConfigMap as revision B applies it, and as a later commit changes it.
const (
	dataB     = "{greeting: hello}"
	dataLater = "{greeting: hola}"
)

// trackedConfig is ConfigMap shop/web-config holding data, last applied by
// kustomize-controller at at.
func trackedConfig(at, data string) string {
	return configObject("ConfigMap", "web-config", "kustomize-controller", at, data)
}

// trackedCopy is ConfigMap shop/web-config-primary, Flagger's copy of dataB, last updated at
// afterB, when Flagger promoted B.
func trackedCopy() string {
	return configObject("ConfigMap", "web-config-primary", "flagger", afterB, dataB)
}

// configObject is a ConfigMap or Secret of shop holding data, last written by manager at at
// (one entry that owns the data and the labels, as kustomize-controller's server-side apply
// writes it). The view's list holds its metadata only; its data are read for their checksum
// (View.Config).
func configObject(kind, name, manager, at, data string) string {
	return `apiVersion: v1
kind: ` + kind + `
metadata:
  name: ` + name + `
  namespace: shop
  managedFields:
  - {manager: ` + manager + `, operation: Apply, apiVersion: v1, time: "` + at + `", fieldsType: FieldsV1, fieldsV1: {"f:data": {}, "f:metadata": {"f:labels": {}}}}
data: ` + data
}

// metadataWrite adds to a configObject a later write by manager at at of its labels only (a
// Helm chart label bump), which leaves its data as it was.
func metadataWrite(doc, manager, at string) string {
	return strings.Replace(doc, "\ndata:", `
  - {manager: `+manager+`, operation: Update, apiVersion: v1, time: "`+at+`", fieldsType: FieldsV1, fieldsV1: {"f:metadata": {"f:labels": {"f:helm.sh/chart": {}}}}}
data:`, 1)
}

// suspended sets a Canary's spec.suspend.
func suspended(canary string) string {
	return strings.Replace(canary, "  provider: kubernetes\n", "  provider: kubernetes\n  suspend: true\n", 1)
}

// trackedSecret makes a Canary track Secret shop/web-token too.
func trackedSecret(canary string) string {
	return strings.Replace(canary, "  lastAppliedSpec:", "  trackedConfigs: {secret/web-token: 9e1f2a}\n  lastAppliedSpec:", 1)
}

// withTemplate replaces the pod template of a flaggerWorkload by tmpl (YAML under
// spec.template, indented by four spaces).
func withTemplate(doc, tmpl string) string {
	i, j := strings.Index(doc, "  template:\n"), strings.Index(doc, "\nstatus:")
	return doc[:i] + "  template:\n" + tmpl + doc[j:]
}

// The pod templates of a target and of its primary as Flagger copies it: tracked ConfigMap and
// Secret renamed, selector values and the pod's selector label suffixed, flagger-id added,
// Flux's annotations dropped.
const (
	richTarget = `    metadata:
      labels: {app: web, kustomize.toolkit.fluxcd.io/name: app}
      annotations: {kustomize.toolkit.fluxcd.io/checksum: abc, prometheus.io/scrape: "true"}
    spec:
      containers:
      - name: web
        image: web:1.1.0
        args: [--listen=:8080]
        env:
        - {name: GREETING, valueFrom: {configMapKeyRef: {name: web-config, key: greeting}}}
        - {name: TOKEN, valueFrom: {secretKeyRef: {name: web-token, key: token}}}
        envFrom:
        - configMapRef: {name: web-config}
      volumes:
      - {name: config, configMap: {name: web-config}}
      - {name: token, secret: {secretName: web-token}}
      topologySpreadConstraints:
      - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}}}
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - topologyKey: kubernetes.io/hostname
            labelSelector: {matchExpressions: [{key: app, operator: In, values: [web]}]}`
	richPrimary = `    metadata:
      labels: {app: web-primary}
      annotations: {flagger-id: 5b1c3a2e-0000-4000-8000-000000000000, prometheus.io/scrape: "true"}
    spec:
      containers:
      - name: web
        image: web:1.1.0
        args: [--listen=:8080]
        env:
        - {name: GREETING, valueFrom: {configMapKeyRef: {name: web-config-primary, key: greeting}}}
        - {name: TOKEN, valueFrom: {secretKeyRef: {name: web-token-primary, key: token}}}
        envFrom:
        - configMapRef: {name: web-config-primary}
      volumes:
      - {name: config, configMap: {name: web-config-primary}}
      - {name: token, secret: {secretName: web-token-primary}}
      topologySpreadConstraints:
      - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web-primary}}}
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - topologyKey: kubernetes.io/hostname
            labelSelector: {matchExpressions: [{key: app, operator: In, values: [web-primary]}]}`
)

// TestAssessCanaries: a Flagger Canary of the tree, or one that targets a Deployment of the
// tree, decides whether the new template serves: Current only once Flagger promoted it, for
// this template; in progress during the analysis; canary-failed when the analysis of this
// template failed. Each case by get and by verify, the Canary in the inventory or not.
func TestAssessCanaries(t *testing.T) {
	t.Parallel()
	root := flux.Ref{Kind: flux.KindKustomization, Namespace: "flux-system", Name: "app"}
	withCanary := ks("app", "GitRepository", "app", "", revB, "shop_web_apps_Deployment", "shop_web_flagger.app_Canary@v1beta1")
	targetOnly := ks("app", "GitRepository", "app", "", revB, "shop_web_apps_Deployment")
	target := flaggerWorkload("web", "web:1.1.0", writtenB, true)
	primaryOld := flaggerWorkload("web-primary", "web:1.0.0", beforeB, true)
	primaryNew := flaggerWorkload("web-primary", "web:1.1.0", afterB, true)
	inProgress := outcome{Verdict: result.VerdictInProgress, Reason: "InProgress"}
	failed := outcome{Verdict: result.VerdictFailed, Code: result.CodeCanaryFailed, Reason: "Failed"}
	tests := []struct {
		name      string
		docs      []string
		notServed bool
		forbidden bool
		// forbidSecrets makes the Secrets' list forbidden (the RBAC we ship).
		forbidSecrets bool
		// unreadable makes every read of a ConfigMap's or Secret's data fail, saying so.
		unreadable string
		want       outcome
		// message is part of the verdict's message.
		message string
	}{
		{name: "no Flagger (the cluster does not serve Canaries): the Deployment judged as any",
			docs: []string{targetOnly, gitRepo(), target}, notServed: true, want: current},
		{name: "Canaries the credentials may not list: the Deployment judged as any, with a note",
			docs: []string{targetOnly, gitRepo(), target}, forbidden: true, want: current},
		{name: "a Deployment no Canary targets",
			docs: []string{targetOnly, gitRepo(), target, strings.Replace(flaggerCanary("Progressing", hashB, hashA, afterB), "name: web}", "name: other}", 1)},
			want: current},
		{name: "the analysis under way, the target's own pods ready",
			docs: []string{withCanary, gitRepo(), target, primaryOld, flaggerCanary("Progressing", hashB, hashA, afterB)},
			want: inProgress, message: "Canary/shop/web Progressing (canary weight 0, iteration 1): New revision detected, progressing canary analysis."},
		{name: "the analysis under way, the Canary not in the inventory",
			docs: []string{targetOnly, gitRepo(), target, primaryOld, flaggerCanary("Progressing", hashB, hashA, afterB)},
			want: inProgress, message: "Canary/shop/web Progressing"},
		{name: "a confirm-promotion gate holds the promotion",
			docs: []string{withCanary, gitRepo(), target, primaryOld, flaggerCanary("WaitingPromotion", hashB, hashA, afterB)},
			want: inProgress, message: "WaitingPromotion (canary weight 0, iteration 1): Waiting for approval."},
		{name: "the primary rolling out the promoted template",
			docs: []string{withCanary, gitRepo(), target, flaggerWorkload("web-primary", "web:1.1.0", afterB, false), flaggerCanary("Promoting", hashB, hashA, afterB)},
			want: inProgress, message: "Promoting"},
		{name: "promoted: Succeeded after the template was written, the primary on it",
			docs: []string{withCanary, gitRepo(), target, primaryNew, flaggerCanary("Succeeded", hashB, hashB, afterB)}, want: current},
		{name: "promoted, the Canary not in the inventory",
			docs: []string{targetOnly, gitRepo(), target, primaryNew, flaggerCanary("Succeeded", hashB, hashB, afterB)}, want: current},
		{name: "first install: Initialized",
			docs: []string{withCanary, gitRepo(), target, primaryNew, flaggerCanary("Initialized", hashB, hashB, afterB)}, want: current},
		{name: "skipAnalysis: Succeeded at once, the primary not rolled out yet",
			docs: []string{withCanary, gitRepo(), target, flaggerWorkload("web-primary", "web:1.1.0", afterB, false), flaggerCanary("Succeeded", hashB, hashB, afterB)},
			want: inProgress, message: "web-primary rolling out"},
		{name: "the previous revision's Succeeded: Flagger has not seen the template yet",
			docs: []string{withCanary, gitRepo(), target, primaryOld, flaggerCanary("Succeeded", hashA, hashA, beforeB)},
			want: inProgress, message: "web-primary runs web:1.0.0 of container web, the template web:1.1.0: waiting for Flagger to promote"},
		{name: "a change written while Flagger was Finalising: Succeeded after it, the primary on the previous env",
			docs: []string{withCanary, gitRepo(), withTemplate(target, strings.Replace(richTarget, "--listen=:8080", "--listen=:9090", 1)), withTemplate(primaryNew, richPrimary), flaggerCanary("Succeeded", hashB, hashB, afterB)},
			want: inProgress, message: "web-primary runs a pod template that differs from the target's in containers: waiting for Flagger to promote"},
		{name: "a change written during the first install: Initialized after it, the primary on the previous volumes",
			docs: []string{withCanary, gitRepo(), withTemplate(target, strings.Replace(richTarget, "{name: config, configMap: {name: web-config}}", "{name: config, emptyDir: {}}", 1)), withTemplate(primaryNew, richPrimary), flaggerCanary("Initialized", hashB, hashB, afterB)},
			want: inProgress, message: "differs from the target's in volumes"},
		{name: "promoted: the primary runs the target's template as Flagger rewrites it",
			docs: []string{withCanary, gitRepo(), withTemplate(target, richTarget), withTemplate(primaryNew, richPrimary), flaggerCanary("Succeeded", hashB, hashB, afterB)},
			want: current},
		{name: "promoted, then the primary restarted (kubectl rollout restart annotates its template only)",
			docs: []string{withCanary, gitRepo(), withTemplate(target, richTarget),
				withTemplate(primaryNew, strings.Replace(richPrimary, "annotations: {", `annotations: {kubectl.kubernetes.io/restartedAt: "2026-11-01T11:57:00Z", `, 1)),
				flaggerCanary("Succeeded", hashB, hashB, afterB)},
			want: current},
		{name: "an annotation of the target's changed since the promotion",
			docs: []string{withCanary, gitRepo(), withTemplate(target, strings.Replace(richTarget, `prometheus.io/scrape: "true"`, `prometheus.io/scrape: "false"`, 1)), withTemplate(primaryNew, richPrimary), flaggerCanary("Succeeded", hashB, hashB, afterB)},
			want: inProgress, message: "differs from the target's in annotations"},
		{name: "an annotation added to the target since the promotion",
			docs: []string{withCanary, gitRepo(), withTemplate(target, strings.Replace(richTarget, "annotations: {", "annotations: {team: shop, ", 1)), withTemplate(primaryNew, richPrimary), flaggerCanary("Succeeded", hashB, hashB, afterB)},
			want: inProgress, message: "differs from the target's in annotations"},
		{name: "Succeeded after the template, but the primary runs other images",
			docs: []string{withCanary, gitRepo(), target, primaryOld, flaggerCanary("Succeeded", hashB, hashB, afterB)},
			want: inProgress, message: "web-primary runs web:1.0.0 of container web, the template web:1.1.0"},
		{name: "the analysis of the template failed",
			docs: []string{withCanary, gitRepo(), target, primaryOld, flaggerCanary("Failed", hashB, hashA, afterB)},
			want: failed, message: "Canary/shop/web Failed: Canary analysis failed, Deployment scaled to zero."},
		{name: "the analysis of the template failed, the Canary not in the inventory",
			docs: []string{targetOnly, gitRepo(), target, primaryOld, flaggerCanary("Failed", hashB, hashA, afterB)},
			want: failed, message: "Canary/shop/web Failed"},
		{name: "the previous revision's failure: Flagger has not analysed the template yet",
			docs: []string{withCanary, gitRepo(), target, primaryOld, flaggerCanary("Failed", hashA, hashB, beforeB)},
			want: inProgress, message: "Canary/shop/web Failed at 2026-11-01T11:40:00Z, not provably for the target's template (written at 2026-11-01T11:50:00Z): waiting for Flagger to analyse it"},
		{name: "Failed within one interval of the template: maybe the previous template's analysis",
			docs: []string{withCanary, gitRepo(), target, primaryOld, flaggerCanary("Failed", hashB, hashA, "2026-11-01T11:50:09Z")},
			want: inProgress, message: "not provably for the target's template"},
		{name: "Failed one interval and the clocks' margin after the template: its analysis",
			docs: []string{withCanary, gitRepo(), target, primaryOld, flaggerCanary("Failed", hashB, hashA, "2026-11-01T11:50:13Z")},
			want: failed, message: "Canary/shop/web Failed: Canary analysis failed"},
		{name: "a failure while the Kustomization has not applied the expected revision",
			docs: []string{ks("app", "GitRepository", "app", "", revA, "shop_web_apps_Deployment", "shop_web_flagger.app_Canary@v1beta1"), gitRepo(),
				target, primaryOld, flaggerCanary("Failed", hashB, hashA, afterB)},
			want: outcome{Verdict: result.VerdictInProgress}},
		{name: "Failed, then the target reverted to the promoted template (Flagger syncs lastAppliedSpec)",
			docs: []string{withCanary, gitRepo(), flaggerWorkload("web", "web:1.0.0", writtenB, true), primaryOld, flaggerCanary("Failed", hashA, hashA, afterB)},
			want: current},
		{name: "a tracked ConfigMap changed after its primary copy: Flagger starts an analysis of the same template",
			docs: []string{withCanary, gitRepo(), target, primaryNew, tracked(flaggerCanary("Succeeded", hashB, hashB, afterB)), trackedConfig("2026-11-01T11:58:00Z", dataLater), trackedCopy()},
			want: inProgress, message: "the data of ConfigMap/shop/web-config differ from its primary copy web-config-primary's: waiting for Flagger to promote it"},
		{name: "a tracked ConfigMap changed during Finalising: Succeeded after it, the copy older",
			docs: []string{withCanary, gitRepo(), target, primaryNew, tracked(flaggerCanary("Succeeded", hashB, hashB, "2026-11-01T11:59:00Z")), trackedConfig("2026-11-01T11:58:00Z", dataLater), trackedCopy()},
			want: inProgress, message: "differ from its primary copy"},
		{name: "a tracked ConfigMap copied since its last change",
			docs: []string{withCanary, gitRepo(), target, primaryNew, tracked(flaggerCanary("Succeeded", hashB, hashB, afterB)), trackedConfig(writtenB, dataB), trackedCopy()},
			want: current},
		{name: "a tracked ConfigMap whose labels only changed after its copy: copied (Flagger's checksum covers the data)",
			docs: []string{withCanary, gitRepo(), target, primaryNew, tracked(flaggerCanary("Succeeded", hashB, hashB, afterB)), metadataWrite(trackedConfig(writtenB, dataB), "helm", "2026-11-01T11:58:00Z"), trackedCopy()},
			want: current},
		{name: "a tracked ConfigMap whose labels only changed by kustomize-controller's apply, which owns its data too: copied",
			docs: []string{withCanary, gitRepo(), target, primaryNew, tracked(flaggerCanary("Succeeded", hashB, hashB, afterB)), trackedConfig("2026-11-01T11:58:00Z", dataB), trackedCopy()},
			want: current},
		{name: "a tracked ConfigMap changed after its copy, whose labels only were written later",
			docs: []string{withCanary, gitRepo(), target, primaryNew, tracked(flaggerCanary("Succeeded", hashB, hashB, afterB)), trackedConfig("2026-11-01T11:58:00Z", dataLater), metadataWrite(trackedCopy(), "helm", "2026-11-01T11:59:00Z")},
			want: inProgress, message: "the data of ConfigMap/shop/web-config differ from its primary copy web-config-primary's"},
		{name: "a tracked ConfigMap with no primary copy",
			docs: []string{withCanary, gitRepo(), target, primaryNew, tracked(flaggerCanary("Succeeded", hashB, hashB, afterB)), trackedConfig(writtenB, dataB)},
			want: inProgress, message: "ConfigMap/shop/web-config has no primary copy web-config-primary"},
		{name: "a tracked Secret changed after its primary copy",
			docs: []string{withCanary, gitRepo(), target, primaryNew, trackedSecret(flaggerCanary("Succeeded", hashB, hashB, afterB)),
				configObject("Secret", "web-token", "kustomize-controller", "2026-11-01T11:58:00Z", "{token: aG9sYQ==}"), configObject("Secret", "web-token-primary", "flagger", afterB, "{token: aGVsbG8=}")},
			want: inProgress, message: "the data of Secret/shop/web-token differ from its primary copy web-token-primary's"},
		{name: "a tracked Secret whose data the credentials may not read: unproven, waits",
			docs: []string{withCanary, gitRepo(), target, primaryNew, trackedSecret(flaggerCanary("Succeeded", hashB, hashB, afterB)),
				configObject("Secret", "web-token", "kustomize-controller", writtenB, "{token: aGVsbG8=}"), configObject("Secret", "web-token-primary", "flagger", afterB, "{token: aGVsbG8=}")},
			unreadable: "the credentials may not get secrets in namespace shop (403)",
			want:       inProgress, message: "whether Flagger promoted the secret web-token it tracks is unknown: the credentials may not get secrets in namespace shop (403)"},
		{name: "a tracked Secret the credentials may not list: unproven, waits",
			docs: []string{withCanary, gitRepo(), target, primaryNew, trackedSecret(flaggerCanary("Succeeded", hashB, hashB, afterB))}, forbidSecrets: true,
			want: inProgress, message: "whether Flagger promoted the secret web-token it tracks is unknown: the credentials may not list secrets in namespace shop (403)"},
		{name: "a suspended Canary whose primary runs the previous template: waits, says suspended",
			docs: []string{withCanary, gitRepo(), target, primaryOld, suspended(flaggerCanary("Succeeded", hashA, hashA, beforeB))},
			want: inProgress, message: "Canary/shop/web is suspended (spec.suspend): Flagger does not act on the target's changes; Canary/shop/web Succeeded, but Deployment/shop/web-primary runs web:1.0.0"},
		{name: "a suspended Canary's Failed is not a failure",
			docs: []string{withCanary, gitRepo(), target, primaryOld, suspended(flaggerCanary("Failed", hashB, hashA, afterB))},
			want: inProgress, message: "is suspended (spec.suspend)"},
		{name: "a suspended Canary whose primary runs the target's template",
			docs: []string{withCanary, gitRepo(), target, primaryNew, suspended(flaggerCanary("Succeeded", hashB, hashB, afterB))},
			want: current},
		{name: "a DaemonSet target, promoted",
			docs: []string{ks("app", "GitRepository", "app", "", revB, "shop_web_apps_DaemonSet"), gitRepo(), asDaemonSet(target), asDaemonSet(primaryNew),
				strings.Replace(flaggerCanary("Succeeded", hashB, hashB, afterB), "kind: Deployment, name: web", "kind: DaemonSet, name: web", 1)},
			want: current},
		{name: "a DaemonSet target scaled to zero by Flagger after its Succeeded: Current at once",
			docs: []string{ks("app", "GitRepository", "app", "", revB, "shop_web_apps_DaemonSet"), gitRepo(),
				asDaemonSet(withTemplate(flaggerWorkload("web", "web:1.1.0", "2026-11-01T11:55:01Z", true), "    metadata: {labels: {app: web}}\n    spec:\n      nodeSelector: {flagger.app/scale-to-zero: \"true\"}\n      containers:\n      - {name: web, image: \"web:1.1.0\"}")),
				asDaemonSet(primaryNew), strings.Replace(flaggerCanary("Succeeded", hashB, hashB, afterB), "kind: Deployment, name: web", "kind: DaemonSet, name: web", 1)},
			want: current},
		{name: "a DaemonSet target, its primary on the previous images",
			docs: []string{ks("app", "GitRepository", "app", "", revB, "shop_web_apps_DaemonSet"), gitRepo(), asDaemonSet(target), asDaemonSet(primaryOld),
				strings.Replace(flaggerCanary("Progressing", hashB, hashA, afterB), "kind: Deployment, name: web", "kind: DaemonSet, name: web", 1)},
			want: inProgress, message: "Canary/shop/web Progressing"},
		{name: "the target not found",
			docs: []string{ks("app", "GitRepository", "app", "", revB, "shop_web_flagger.app_Canary@v1beta1"), gitRepo(), flaggerCanary("Succeeded", hashB, hashB, afterB)},
			want: inProgress, message: "targets Deployment web, not found"},
		{name: "a hostile phase is one bounded line",
			docs: []string{withCanary, gitRepo(), target, primaryOld,
				strings.Replace(flaggerCanary("Progressing", hashB, hashA, afterB), "  phase: Progressing\n", `  phase: "Weird\n::error::pwn `+strings.Repeat("a", 200)+`"`+"\n", 1)},
			want: inProgress, message: "Canary/shop/web Weird ::error::pwn " + strings.Repeat("a", 44) + "…: New revision"},
		{name: "a hostile message is one line",
			docs: []string{withCanary, gitRepo(), target, primaryOld,
				strings.Replace(flaggerCanary("Failed", hashB, hashA, afterB), `message: "Canary analysis failed, Deployment scaled to zero."`, `message: "bad\n::error::x\n##[group]y"`, 1)},
			want: failed, message: "Canary/shop/web Failed: bad ::error::x ##[group]y"},
	}
	rev, err := flux.ParseRevision(revB)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			docs := strings.Join(tt.docs, "\n---\n")
			for _, snapshot := range []bool{true, false} {
				v := newFixtureView(t, docs, "kustomizations", "gitrepositories", "deployments", "daemonsets", "canaries", "configmaps", "secrets")
				v.flagger = !tt.notServed
				v.unreadableConfigs = tt.unreadable
				if tt.forbidSecrets {
					secrets := trackedConfigs["secret"].GroupResource()
					v.failList(secrets, apierrors.NewForbidden(secrets, "", fmt.Errorf("no RBAC")))
				}
				if tt.forbidden {
					v.failList(canaryGVR.GroupResource(), apierrors.NewForbidden(canaryGVR.GroupResource(), "", fmt.Errorf("no RBAC")))
				}
				spec := Spec{Resources: []flux.Ref{root}, Revision: rev, Workloads: true, Snapshot: snapshot, Health: fluxhealth.New(t.Context())}
				e := Assess(v, NewMemory(), spec, fixtureNow)
				got := outcomeOf(e)
				if tt.want.Reason == "" && tt.want.Verdict == result.VerdictInProgress {
					got.Reason = ""
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("snapshot %t (-want +got):\n%s\npending %+v fatal %+v", snapshot, diff, e.Pending, e.Fatal)
				}
				if msg := verdictMessage(e); !strings.Contains(msg, tt.message) || strings.ContainsAny(msg, "\n\r") {
					t.Errorf("snapshot %t: message %q, want one line holding %q", snapshot, msg, tt.message)
				}
				if tt.forbidden && !strings.Contains(objectMessage(e, "Deployment/shop/web"), "not checked against Flagger's Canaries") {
					t.Errorf("snapshot %t: Deployment's message %q says nothing of the Canaries not listed", snapshot, objectMessage(e, "Deployment/shop/web"))
				}
			}
		})
	}
}

func verdictMessage(e *Assessment) string {
	switch {
	case e.Fatal != nil:
		return e.Fatal.Message
	case e.Pending != nil:
		return e.Pending.Message
	}
	return ""
}

func objectMessage(e *Assessment, id string) string {
	for _, o := range e.Objects {
		if o.ID == id {
			return o.Message
		}
	}
	return ""
}

// TestCanaryPickup: a Deployment's Canary whose state is older than its target's template is
// judged by what the primary runs, with no timer: Current at once when it runs the target's
// template, waiting as long as it does not, and a Failed not provably of the template is
// final once Flagger has had two ticks without starting to analyse it. Each case by verify, three looks
// sharing its memory, and by get, which looks once and says the same as verify's first look.
func TestCanaryPickup(t *testing.T) {
	t.Parallel()
	root := flux.Ref{Kind: flux.KindKustomization, Namespace: "flux-system", Name: "app"}
	rev, err := flux.ParseRevision(revB)
	if err != nil {
		t.Fatal(err)
	}
	withCanary := ks("app", "GitRepository", "app", "", revB, "shop_web_apps_Deployment", "shop_web_flagger.app_Canary@v1beta1")
	tests := []struct {
		name        string
		docs        []string
		first, then outcome
		// says is part of the message of every look, get's included.
		says string
		// timer is whether the first verdict waits for Flagger's pickup (a recheck).
		timer bool
	}{
		{name: "Succeeded before the template, the primary on the same template: Current at once",
			docs:  []string{withCanary, gitRepo(), flaggerWorkload("web", "web:1.0.0", writtenB, true), flaggerWorkload("web-primary", "web:1.0.0", beforeB, true), flaggerCanary("Succeeded", hashA, hashA, beforeB)},
			first: current, then: current},
		{name: "Succeeded before the template, the primary on other images: waits with no timer",
			docs:  []string{withCanary, gitRepo(), flaggerWorkload("web", "web:1.1.0", writtenB, true), flaggerWorkload("web-primary", "web:1.0.0", beforeB, true), flaggerCanary("Succeeded", hashA, hashA, beforeB)},
			first: outcome{Verdict: result.VerdictInProgress, Reason: "InProgress"}, then: outcome{Verdict: result.VerdictInProgress, Reason: "InProgress"},
			says: "Canary/shop/web Succeeded, but Deployment/shop/web-primary runs web:1.0.0 of container web, the template web:1.1.0: waiting for Flagger to promote"},
		{name: "Failed before the template: final once Flagger had two ticks without analysing the template (its Promoted condition dates it, not status.lastTransitionTime)",
			docs:  []string{withCanary, gitRepo(), flaggerWorkload("web", "web:1.1.0", writtenB, true), flaggerWorkload("web-primary", "web:1.0.0", beforeB, true), flaggerCanary("Failed", hashA, hashB, beforeB)},
			first: outcome{Verdict: result.VerdictInProgress, Reason: "InProgress"}, then: outcome{Verdict: result.VerdictFailed, Code: result.CodeCanaryFailed, Reason: "Failed"},
			says: "Canary/shop/web Failed at 2026-11-01T11:40:00Z", timer: true},
		{name: "Failed after the template, at the first tick after the pick-up: this template's once Flagger had two ticks",
			docs:  []string{withCanary, gitRepo(), flaggerWorkload("web", "web:1.1.0", writtenB, true), flaggerWorkload("web-primary", "web:1.0.0", beforeB, true), flaggerCanary("Failed", hashA, hashB, "2026-11-01T11:50:11Z")},
			first: outcome{Verdict: result.VerdictInProgress, Reason: "InProgress"}, then: outcome{Verdict: result.VerdictFailed, Code: result.CodeCanaryFailed, Reason: "Failed"},
			says: "Canary/shop/web Failed", timer: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			docs := strings.Join(tt.docs, "\n---\n")
			order := []string{"kustomizations", "gitrepositories", "deployments", "canaries"}
			view := func() *fixtureView {
				v := newFixtureView(t, docs, order...)
				v.flagger = true
				return v
			}
			for _, mode := range []string{"get", "verify"} {
				mem := NewMemory()
				spec := Spec{Resources: []flux.Ref{root}, Revision: rev, Workloads: true, Snapshot: mode == "get", Health: fluxhealth.New(t.Context())}
				e := Assess(view(), mem, spec, fixtureNow)
				if diff := cmp.Diff(tt.first, outcomeOf(e)); diff != "" {
					t.Errorf("%s, first (-want +got):\n%s\npending %+v fatal %+v", mode, diff, e.Pending, e.Fatal)
				}
				if msg := verdictMessage(e); !strings.Contains(msg, tt.says) {
					t.Errorf("%s, first: message %q, want it to contain %q", mode, msg, tt.says)
				}
				if want := fixtureNow.Add(20 * time.Second); tt.timer && !e.Recheck.Equal(want) || !tt.timer && !e.Recheck.IsZero() {
					t.Errorf("%s: Recheck = %s, want %s (two analysis intervals of 10s)", mode, e.Recheck, want)
				}
				if mode == "get" {
					// (A snapshot looks once: it has no pickup to wait out.)
					continue
				}
				e = Assess(view(), mem, spec, fixtureNow.Add(19*time.Second))
				if diff := cmp.Diff(tt.first, outcomeOf(e)); diff != "" {
					t.Errorf("within the pickup (-want +got):\n%s", diff)
				}
				e = Assess(view(), mem, spec, fixtureNow.Add(20*time.Second))
				if diff := cmp.Diff(tt.then, outcomeOf(e)); diff != "" {
					t.Errorf("after the pickup (-want +got):\n%s\npending %+v fatal %+v", diff, e.Pending, e.Fatal)
				}
				if msg := verdictMessage(e); !strings.Contains(msg, tt.says) {
					t.Errorf("after the pickup: message %q, want it to contain %q", msg, tt.says)
				}
			}
		})
	}
}

// TestFlaggerChecksum: the checksum of a tracked config's data is Flagger v1.36.1's
// (config_tracker.go checksum: sha256 of the data's JSON, its first 8 bytes in hex), the same
// whether the data are typed, as the fetching side reads them (a ConfigMap's map[string]string,
// a Secret's map[string][]byte), or unstructured, as a fixture holds them; no data is "null".
func TestFlaggerChecksum(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		data any
		want string
	}{
		{"a ConfigMap's data", map[string]string{"greeting": "hello"}, "aac83f481075f7ca"},
		{"the same, unstructured", map[string]any{"greeting": "hello"}, "aac83f481075f7ca"},
		{"a Secret's data", map[string][]byte{"token": []byte("hello")}, "6521fdf5f27056f0"},
		{"the same, unstructured (base64)", map[string]any{"token": "aGVsbG8="}, "6521fdf5f27056f0"},
		{"no data", map[string]string(nil), "74234e98afe7498f"},
		{"no data, unstructured", nil, "74234e98afe7498f"},
	} {
		if got := FlaggerChecksum(tt.data); got != tt.want {
			t.Errorf("%s: FlaggerChecksum(%v) = %s, want %s", tt.name, tt.data, got, tt.want)
		}
	}
}
