// Package result defines what a verification produces: a Cluster verdict for every cluster,
// holding the Flux objects that were checked and the objects they own, and the Run that
// gathers them with the overall status and the aggregated Ready condition. The engine fills
// it in; the reports render it. It does no I/O.
package result

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// SchemaVersion is the version of the JSON document described by schema/results.schema.json.
// It changes only when a field is removed or changes meaning.
const SchemaVersion = 1

// Verdict is the outcome for one cluster (and, for Flux objects, for one object).
type Verdict string

// The verdicts. VerdictCurrent is the only one that counts as ready.
const (
	VerdictCurrent       Verdict = "Current"       // the expected revision is applied and every object is Current
	VerdictInProgress    Verdict = "InProgress"    // a snapshot (get) taken while the rollout is still going
	VerdictFailed        Verdict = "Failed"        // the rollout cannot succeed; Code says why
	VerdictTimeout       Verdict = "Timeout"       // the timeout passed before the rollout finished
	VerdictSuspended     Verdict = "Suspended"     // the Flux object has spec.suspend: true
	VerdictNotFound      Verdict = "NotFound"      // the Flux object (or its API) does not exist
	VerdictUnreachable   Verdict = "Unreachable"   // the API server could not be reached
	VerdictThrottled     Verdict = "Throttled"     // the API server refused to answer for now (429)
	VerdictUnauthorized  Verdict = "Unauthorized"  // the credentials were rejected (401)
	VerdictForbidden     Verdict = "Forbidden"     // the credentials may not read what is needed (403)
	VerdictInvalidConfig Verdict = "InvalidConfig" // the kubeconfig cannot be used from the container
	VerdictUnverified    Verdict = "Unverified"    // the rollout cannot be verified from this cluster: it applies to another one, or was replaced before its objects were, and Flux did not wait for it
	VerdictCancelled     Verdict = "Cancelled"     // stopped before a verdict: fail-fast or a cancelled job
	VerdictUnknown       Verdict = "Unknown"       // a merge has no report for the cluster (a shard missing or given twice)
)

// Verdicts lists every verdict, in the order the reports explain them.
var Verdicts = []Verdict{
	VerdictCurrent, VerdictInProgress, VerdictFailed, VerdictTimeout, VerdictSuspended, VerdictNotFound,
	VerdictUnreachable, VerdictThrottled, VerdictUnauthorized, VerdictForbidden, VerdictInvalidConfig, VerdictUnverified,
	VerdictCancelled, VerdictUnknown,
}

// Code is a stable, machine-readable reason for a failure that a pipeline can switch on.
type Code string

// The failure codes. Workload codes come from the rollout classifier, canary-failed from a
// Flagger Canary's status, flux-* codes from the Flux object's own conditions.
const (
	CodeImagePull                Code = "image-pull"
	CodeConfig                   Code = "config"
	CodeCrashLoop                Code = "crash-loop"
	CodeOOM                      Code = "oom"
	CodeUnschedulable            Code = "unschedulable"
	CodeQuota                    Code = "quota"
	CodeNotProgressing           Code = "not-progressing"
	CodeJobFailed                Code = "job-failed"
	CodeNeverReady               Code = "never-ready"
	CodeAdmissionDenied          Code = "admission-denied"
	CodeStatefulSetBlocked       Code = "statefulset-blocked"
	CodeCanaryFailed             Code = "canary-failed"
	CodeFluxStalled              Code = "flux-stalled"
	CodeFluxBuildFailed          Code = "flux-build-failed"
	CodeFluxHealthCheckFailed    Code = "flux-health-check-failed"
	CodeFluxArtifactFailed       Code = "flux-artifact-failed"
	CodeFluxChartFailed          Code = "flux-chart-failed"
	CodeFluxValuesFailed         Code = "flux-values-failed"
	CodeFluxReconciliationFailed Code = "flux-reconciliation-failed"
	CodeFluxPruneFailed          Code = "flux-prune-failed"
	CodeFluxDependencyNotReady   Code = "flux-dependency-not-ready"
	CodeFluxDependencyFailed     Code = "flux-dependency-failed"
	CodeFluxRevisionSuperseded   Code = "flux-revision-superseded"
	CodeFluxSuspended            Code = "flux-suspended"
	CodeFluxInstallFailed        Code = "flux-install-failed"
	CodeFluxUpgradeFailed        Code = "flux-upgrade-failed"
	CodeFluxTestFailed           Code = "flux-test-failed"
	CodeFluxRolledBack           Code = "flux-rolled-back"
	CodeFluxRemoteUnverified     Code = "flux-remote-unverified"
	CodeFluxSupersededUnverified Code = "flux-superseded-unverified"
	CodeJobGoneUnverified        Code = "job-gone-unverified"
	CodeHelmReleaseUndecodable   Code = "helm-release-undecodable"
	CodeFluxUnhealthy            Code = "flux-unhealthy"
)

// Codes lists every failure code, in the order the README and docs/verdicts.md document them.
var Codes = []Code{
	CodeImagePull, CodeConfig, CodeCrashLoop, CodeOOM, CodeUnschedulable, CodeQuota, CodeAdmissionDenied,
	CodeNotProgressing, CodeJobFailed, CodeNeverReady, CodeStatefulSetBlocked, CodeCanaryFailed,
	CodeFluxStalled, CodeFluxBuildFailed, CodeFluxHealthCheckFailed, CodeFluxArtifactFailed,
	CodeFluxChartFailed, CodeFluxValuesFailed,
	CodeFluxReconciliationFailed, CodeFluxPruneFailed, CodeFluxDependencyNotReady, CodeFluxDependencyFailed,
	CodeFluxRevisionSuperseded, CodeFluxSuspended,
	CodeFluxInstallFailed, CodeFluxUpgradeFailed, CodeFluxTestFailed, CodeFluxRolledBack, CodeFluxRemoteUnverified,
	CodeFluxSupersededUnverified, CodeJobGoneUnverified, CodeHelmReleaseUndecodable, CodeFluxUnhealthy,
}

// ObjectStatus is the status of one object of an inventory, as kstatus computes it
// (sigs.k8s.io/cli-utils/pkg/kstatus/status), with the same names.
type ObjectStatus string

// The object statuses, as kstatus computes them.
const (
	ObjectCurrent     ObjectStatus = "Current"
	ObjectInProgress  ObjectStatus = "InProgress"
	ObjectFailed      ObjectStatus = "Failed"
	ObjectTerminating ObjectStatus = "Terminating"
	ObjectNotFound    ObjectStatus = "NotFound"
	ObjectUnknown     ObjectStatus = "Unknown"
)

// ObjectStatuses lists the object statuses.
var ObjectStatuses = []ObjectStatus{ObjectCurrent, ObjectInProgress, ObjectFailed, ObjectTerminating, ObjectNotFound, ObjectUnknown}

// Cluster is the verdict for one cluster: one element of the `results` output.
type Cluster struct {
	SchemaVersion int     `json:"schemaVersion"`
	Name          string  `json:"cluster"`
	Verdict       Verdict `json:"verdict"`
	// Code, Reason and Message explain a verdict other than Current; for a failure they are
	// those of the first failing object.
	Code    Code   `json:"code,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	// ExpectedRevision is the revision asked for, as the user gave it; empty when none was.
	ExpectedRevision string `json:"expectedRevision,omitempty"`
	// Flux lists the Flux objects checked: the requested ones first, then the ones found
	// nested in their inventories, each naming its Owner.
	Flux []FluxObject `json:"flux"`
	// Objects lists every object of every Flux object's inventory, sorted by owner then ID.
	Objects []Object `json:"objects"`
	// DurationMs is how long the cluster took, in milliseconds.
	DurationMs int64 `json:"durationMs"`
	// AppliedMs is when the run first saw every requested object apply the expected
	// revision, in milliseconds from the cluster's start; absent without a revision or when
	// it was not seen.
	AppliedMs *int64 `json:"appliedMs,omitempty"`
	// Reconcile says what the run's reconcile requests did, and when (input reconcile); nil
	// when it did not ask.
	Reconcile *Reconcile `json:"reconcile,omitempty"`
	// Preflight says what the check of the Flux controllers found that did not decide the
	// verdict: controllers the app does not need that are down, what it could not read.
	Preflight *Preflight `json:"preflight,omitempty"`
	// Truncated is set when details of the cluster were left out to keep the document under
	// a size limit (GitHub's for step outputs); the full document is elsewhere (report-file).
	Truncated bool `json:"truncated,omitempty"`
}

// Reconcile is what the run's reconcile requests did on one cluster, and where the time went:
// each moment in milliseconds from the cluster's start, absent when it did not come.
type Reconcile struct {
	// Requested are the objects asked to reconcile (sources and requested Flux objects), by
	// ID, sorted.
	Requested []string `json:"requested"`
	// RequestedMs is when the first request was sent.
	RequestedMs *int64 `json:"requestedMs,omitempty"`
	// SourceReadyMs is when every requested object's source had the expected revision, as the
	// requests saw it, or at the latest when Flux applied it.
	SourceReadyMs *int64 `json:"sourceReadyMs,omitempty"`
	// AppliedMs is when the run first saw every requested object apply the expected revision.
	AppliedMs *int64 `json:"appliedMs,omitempty"`
	// Notes say what was not requested, and why (a suspended object, credentials that may not
	// patch it).
	Notes []string `json:"notes"`
}

// Preflight is what the check of the Flux controllers, before the run waits, found.
type Preflight struct {
	// Warnings name the Flux controllers the app does not need that are not available.
	Warnings []string `json:"warnings"`
	// Notes say what it could not read or judge (403, 404, a controller not found).
	Notes []string `json:"notes"`
}

// FluxObject is the state of a Kustomization or HelmRelease.
type FluxObject struct {
	ID        string  `json:"id"` // Kind/namespace/name
	Kind      string  `json:"kind"`
	Namespace string  `json:"namespace"`
	Name      string  `json:"name"`
	Owner     string  `json:"owner,omitempty"` // ID of the Flux object whose inventory lists it
	Verdict   Verdict `json:"verdict"`
	Code      Code    `json:"code,omitempty"`
	// Ready is the status of the Ready condition: True, False or Unknown.
	Ready                 string `json:"ready"`
	Reason                string `json:"reason,omitempty"`
	Message               string `json:"message,omitempty"`
	Suspended             bool   `json:"suspended"`
	LastAppliedRevision   string `json:"lastAppliedRevision,omitempty"`
	LastAttemptedRevision string `json:"lastAttemptedRevision,omitempty"`
	// ChartVersion is the chart version of the HelmRelease's latest release (history[0]).
	ChartVersion       string `json:"chartVersion,omitempty"`
	Generation         int64  `json:"generation"`
	ObservedGeneration int64  `json:"observedGeneration"`
	// Remote is set when the object applies to another cluster (spec.kubeConfig): the objects
	// it lists live there and are not verified.
	Remote bool `json:"remote,omitempty"`
	// SinceMs is when the run first saw the object at its Verdict, in milliseconds from the
	// cluster's start.
	SinceMs *int64 `json:"sinceMs,omitempty"`
}

// Object is one object of a Flux object's inventory and its kstatus status.
type Object struct {
	ID        string       `json:"id"` // Kind/namespace/name, or Kind/name when cluster-scoped
	Group     string       `json:"group"`
	Version   string       `json:"version"`
	Kind      string       `json:"kind"`
	Namespace string       `json:"namespace,omitempty"`
	Name      string       `json:"name"`
	Owner     string       `json:"owner"` // ID of the Flux object whose inventory lists it
	Status    ObjectStatus `json:"status"`
	Message   string       `json:"message,omitempty"`
	// Failure is set when the rollout of this object cannot succeed.
	Failure *Failure `json:"failure,omitempty"`
	// SinceMs is when the run first saw the object in its Status, in milliseconds from the
	// cluster's start (about 0 for an object already there at the first look).
	SinceMs *int64 `json:"sinceMs,omitempty"`
}

// Failure is the classified reason a rollout cannot succeed, with the evidence for it.
type Failure struct {
	Code         Code    `json:"code"`
	Reason       string  `json:"reason"` // the Kubernetes or Flux reason, e.g. ImagePullBackOff
	Message      string  `json:"message"`
	Pod          string  `json:"pod,omitempty"`
	Container    string  `json:"container,omitempty"`
	RestartCount int32   `json:"restartCount,omitempty"`
	Logs         string  `json:"logs,omitempty"`      // the last lines of the container's log
	LogsError    string  `json:"logsError,omitempty"` // why the logs could not be read
	Events       []Event `json:"events,omitempty"`
	EventsError  string  `json:"eventsError,omitempty"` // why the events could not be read
}

// Event is a Warning event about a failing object or its pods.
type Event struct {
	Object  string `json:"object"` // Kind/namespace/name of the object the event is about
	Reason  string `json:"reason"`
	Message string `json:"message"`
	Count   int32  `json:"count"`
}

// RunStatus is the overall outcome of a run, the `status` output.
type RunStatus string

// The overall outcomes.
const (
	RunSuccess RunStatus = "success" // every cluster is Current
	RunFailure RunStatus = "failure" // at least one cluster has a verdict other than Current or Timeout
	RunTimeout RunStatus = "timeout" // every cluster that is not Current timed out
)

// RunStatuses lists the overall outcomes.
var RunStatuses = []RunStatus{RunSuccess, RunFailure, RunTimeout}

// Condition is a Kubernetes-style condition aggregated over the clusters.
type Condition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// Run gathers every cluster's verdict: the document `app-status verify -o json` prints.
type Run struct {
	SchemaVersion    int       `json:"schemaVersion"`
	Status           RunStatus `json:"status"`
	Resources        []string  `json:"resources"` // the requested Flux objects, Kind/namespace/name
	ExpectedRevision string    `json:"expectedRevision,omitempty"`
	Condition        Condition `json:"condition"`
	ReadyClusters    []string  `json:"readyClusters"`
	FailedClusters   []string  `json:"failedClusters"` // every cluster that is not Current
	DurationMs       int64     `json:"durationMs"`
	Results          []Cluster `json:"results"`
	// Truncated is set when the document was cut to stay under a size limit (GitHub's for
	// step outputs; the full document is elsewhere, the report-file output), or written at
	// once, each cluster with its verdict and without its objects, because the job was
	// cancelled; a merge of reports one of which was cut is cut too.
	Truncated bool `json:"truncated,omitempty"`
	// What a merge of several runs' reports needs: when the run started and ended (RFC 3339),
	// the tool's version and, for a shard, which one it is.
	StartedAt string `json:"startedAt,omitempty"`
	EndedAt   string `json:"endedAt,omitempty"`
	Version   string `json:"version,omitempty"`
	Shard     *Shard `json:"shard,omitempty"`
	// Origin is the CI run that wrote the document, which a merge ties the reports to; nil
	// outside a CI that names its runs.
	Origin *Origin `json:"origin,omitempty"`
	// Merged names the reports a merge read, when the run is a merge.
	Merged []string `json:"merged,omitempty"`
}

// Origin is the CI run a report was written in: the repository and the run of its CI, and
// the attempt of that run (a re-run of its jobs), so that a merge takes the reports of its own
// run alone, and of a shard verified twice the newest.
type Origin struct {
	// CI is the system that ran it: github, gitlab or azure.
	CI string `json:"ci"`
	// Repository is the repository the run belongs to (GITHUB_REPOSITORY, CI_PROJECT_PATH,
	// BUILD_REPOSITORY_NAME).
	Repository string `json:"repository"`
	// RunID is the CI's run (GITHUB_RUN_ID, CI_PIPELINE_ID, BUILD_BUILDID), the same for every
	// job of the run and for its re-runs.
	RunID string `json:"runId"`
	// Attempt counts the run's re-runs (GITHUB_RUN_ATTEMPT, SYSTEM_JOBATTEMPT), from 1; 0
	// when the CI does not say.
	Attempt int `json:"attempt,omitempty"`
}

// SameRun reports whether o and other are the same CI run, whatever their attempts: both
// nil (no CI), or the same CI, repository and run.
func (o *Origin) SameRun(other *Origin) bool {
	if o == nil || other == nil {
		return o == nil && other == nil
	}
	return o.CI == other.CI && o.Repository == other.Repository && o.RunID == other.RunID
}

// Shard says which share of a fleet a run verified.
type Shard struct {
	Index int `json:"index"` // 1..count
	Count int `json:"count"`
	// Clusters is the whole fleet, every shard's clusters, by name, sorted; ClustersHash its
	// SHA-256 (shard.ListHash), which every shard of one run shares.
	Clusters     []string `json:"clusters"`
	ClustersHash string   `json:"clustersHash"`
}

// NewRun sorts the clusters by name and derives the overall status, the aggregated Ready
// condition and the ready and failed cluster lists.
func NewRun(resources []string, expectedRevision string, clusters []Cluster, took time.Duration) Run {
	sorted := append([]Cluster(nil), clusters...)
	for i := range sorted {
		sorted[i].SchemaVersion = SchemaVersion
	}
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	run := Run{
		SchemaVersion:    SchemaVersion,
		Resources:        append([]string{}, resources...),
		ExpectedRevision: expectedRevision,
		ReadyClusters:    []string{},
		FailedClusters:   []string{},
		DurationMs:       took.Milliseconds(),
		Results:          sorted,
	}
	if run.Results == nil {
		run.Results = []Cluster{}
	}
	timedOut, failed := false, false
	var messages []string
	for _, c := range sorted {
		switch c.Verdict {
		case VerdictCurrent:
			run.ReadyClusters = append(run.ReadyClusters, c.Name)
			continue
		case VerdictTimeout:
			timedOut = true
		default:
			failed = true
		}
		run.FailedClusters = append(run.FailedClusters, c.Name)
		messages = append(messages, c.Name+": "+c.Summary())
	}
	switch {
	case failed:
		run.Status = RunFailure
	case timedOut:
		run.Status = RunTimeout
	case len(sorted) == 0:
		run.Status = RunFailure
		messages = append(messages, "no clusters were verified")
	default:
		run.Status = RunSuccess
	}
	if len(messages) > maxClusterMessages {
		// At scale the condition names groups, not clusters: each verdict and code once, with
		// a few of its clusters.
		messages = nil
		for _, g := range Rollup(sorted) {
			if g.Verdict != VerdictCurrent {
				messages = append(messages, fmt.Sprintf("%s: %s", g.Label(), g.Names(namesPerGroup)))
			}
		}
	}
	run.Condition = aggregateReady(len(run.ReadyClusters), len(sorted), messages)
	return run
}

// Above maxClusterMessages clusters that are not Current, the Ready condition's message
// groups them by verdict and code, naming namesPerGroup of each.
const (
	maxClusterMessages = 5
	namesPerGroup      = 3
)

// aggregateReady builds the Ready condition of the status-aggregation proposal: True only when
// every cluster is Current, otherwise False with the failing clusters' messages joined by "; ".
func aggregateReady(ready, total int, messages []string) Condition {
	if total > 0 && ready == total {
		return Condition{Type: "Ready", Status: "True", Reason: "AllClustersCurrent", Message: "all clusters are Current"}
	}
	return Condition{Type: "Ready", Status: "False", Reason: "ClustersNotReady", Message: strings.Join(messages, "; ")}
}

// Summary is a one-line explanation of the cluster's verdict.
func (c Cluster) Summary() string {
	if c.Message != "" {
		return c.Message
	}
	if c.Reason != "" {
		return c.Reason
	}
	return string(c.Verdict)
}

// Ready reports whether the cluster counts as ready.
func (c Cluster) Ready() bool { return c.Verdict == VerdictCurrent }

// ObjectID prints an object reference the one way the project prints them:
// Kind/namespace/name, or Kind/name for cluster-scoped objects.
func ObjectID(kind, namespace, name string) string {
	if namespace == "" {
		return kind + "/" + name
	}
	return kind + "/" + namespace + "/" + name
}
