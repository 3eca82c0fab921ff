package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/org/app-status-action/internal/classify"
	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/kubeconfig"
	"github.com/org/app-status-action/internal/report"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/sanitize"
	"github.com/org/app-status-action/internal/shard"
	"github.com/org/app-status-action/internal/verify"
)

// The accepted ranges of the settings: a verification is a CI step, not a daemon.
const (
	maxDuration      = 24 * time.Hour
	maxParallelLimit = 10000
	maxCrashRestarts = 1000
)

// defaultSettings are the settings both modes start from, the one place their defaults are
// written down: action.yml's input defaults and the CLI's flag defaults are checked against
// them (TestActionYMLMatchesTheProgram, TestFlagDefaults).
func defaultSettings() settings {
	return settings{
		namespace:     "flux-system",
		timeout:       verify.DefaultTimeout,
		maxParallel:   verify.DefaultMaxParallel,
		workloads:     true,
		crashRestarts: int(classify.DefaultCrashRestarts),
		retryGrace:    classify.DefaultRetryGrace,
		notFoundGrace: verify.DefaultNotFoundGrace,
		evidence:      report.EvidenceFull,
	}
}

// settings is what both modes collect from the user before anything is contacted.
type settings struct {
	resources       []string // as given: kustomization/NAME, ks/NAME, hr/NAME ...
	namespace       string
	revision        string
	timeout         time.Duration
	maxParallel     int
	failFast        bool
	workloads       bool
	failOnSuspended bool
	snapshot        bool
	// reconcile is "" (read only), "true" or "force" (input and flag reconcile).
	reconcile          verify.ReconcileMode
	crashRestarts      int
	unschedulableGrace time.Duration
	retryGrace         time.Duration
	// neverReadyGrace is 0 for the workload's own deadline (never-ready-grace unset).
	neverReadyGrace time.Duration
	// notFoundGrace is how long a requested Flux object may be missing before the cluster
	// is NotFound, unless Flux may still create it (input not-found-grace).
	notFoundGrace time.Duration
	clusters      kubeconfig.Input
	// builtinAuth prefers the built-in credential providers to installed exec plugins (the
	// CLI's --builtin-auth; the action has no plugins to run).
	builtinAuth bool
	// ci: the CLI runs in a CI job (cliOptions.inCI), where the exec plugins of file:
	// kubeconfigs, which a pull request can change, do not run unless allowExec. The action is
	// always one.
	ci bool
	// allowExec lets the exec plugins of file: kubeconfigs run in CI (--allow-exec, input
	// allow-exec): an installed program outside the workspace, never a shell or a relative
	// path. In the action, it also lets exec plugins run at all: those its container can.
	allowExec bool
	// shard is the share of the clusters to verify (input shard, --shard I/N); zero: all.
	shard shard.Shard
	// evidence is how much of a failure's logs and events the published results keep (input
	// evidence, --evidence).
	evidence report.Evidence
	// verbose also prints the run's internal steps in the progress (--verbose; the action
	// when the runner's debug logging is on).
	verbose bool
	// note prints what the kubeconfig loader goes on without (kubeconfig.Env.Note): the CLI's
	// one line on stderr each; nil in the action.
	note func(string)
}

// request validates the settings and loads the kubeconfigs into a verification request. The
// names say which input (or flag) is at fault, for the error messages.
func (s settings) request(env Env, names inputNames) (verify.Request, *kubeconfig.Secrets, error) {
	var req verify.Request
	var err error
	if req.Resources, err = s.fluxResources(names); err != nil {
		return req, nil, err
	}
	rev, err := flux.ParseRevision(s.revision)
	if err != nil {
		return req, nil, fmt.Errorf("%s: %w", names.revision, err)
	}
	if err := s.checkValues(names); err != nil {
		return req, nil, err
	}
	targets, secrets, err := s.clusterTargets(env, names)
	if err != nil {
		return req, secrets, err
	}
	req.Targets = targets
	req.Revision = rev
	req.Timeout = s.timeout
	req.MaxParallel = s.maxParallel
	req.FailFast = s.failFast
	req.Workloads = s.workloads
	req.FailOnSuspended = s.failOnSuspended
	req.Snapshot = s.snapshot
	req.Reconcile = s.reconcile
	req.ProgressSteps = s.verbose
	req.Classify = classify.Options{CrashRestarts: int32(s.crashRestarts), UnschedulableGrace: s.unschedulableGrace, RetryGrace: s.retryGrace, NeverReadyGrace: s.neverReadyGrace} //nolint:gosec // G115: checkValues holds crashRestarts to 1..maxCrashRestarts
	req.NotFoundGrace = s.notFoundGrace
	req.Clock = env.Clock
	return req, secrets, nil
}

// fluxResources parses the Flux objects to verify, each once; at a bad one, it returns those
// before it with the error.
func (s settings) fluxResources(names inputNames) ([]flux.Ref, error) {
	var refs []flux.Ref
	if len(s.resources) == 0 {
		return refs, fmt.Errorf("%s is required: name the Flux object to verify, e.g. kustomization/my-app or helmrelease/my-app", names.resource)
	}
	ns := cmp.Or(s.namespace, defaultSettings().namespace)
	seen := map[string]bool{}
	for i, r := range s.resources {
		ref, err := flux.ParseResource(r, ns)
		if err != nil {
			if len(s.resources) == 1 {
				return refs, fmt.Errorf("%s: %w", names.resource, err)
			}
			return refs, fmt.Errorf("%s (%s %d): %w", names.resource, names.resourceItem, i+1, err)
		}
		if !seen[ref.ID()] {
			seen[ref.ID()] = true
			refs = append(refs, ref)
		}
	}
	return refs, nil
}

// checkValues refuses a setting out of its range, and --reconcile with get.
func (s settings) checkValues(names inputNames) error {
	if s.timeout <= 0 || s.timeout > maxDuration {
		return fmt.Errorf("%s %s is out of range: give a duration from 1s to 24h, such as 10m or 90s", names.timeout, s.timeout)
	}
	if s.maxParallel < 1 || s.maxParallel > maxParallelLimit {
		return fmt.Errorf("%s %d is out of range: give a whole number from 1 to %d", names.maxParallel, s.maxParallel, maxParallelLimit)
	}
	if s.crashRestarts < 1 || s.crashRestarts > maxCrashRestarts {
		return fmt.Errorf("%s %d is out of range: give a whole number from 1 to %d", names.crashRestarts, s.crashRestarts, maxCrashRestarts)
	}
	if s.unschedulableGrace < 0 || s.unschedulableGrace > maxDuration {
		return fmt.Errorf("%s %s is out of range: give a duration from 1s to 24h, such as 10m, or leave it unset for the workload's own deadline", names.unschedulableGrace, s.unschedulableGrace)
	}
	if s.neverReadyGrace < 0 || s.neverReadyGrace > maxDuration {
		return fmt.Errorf("%s %s is out of range: give a duration from 1s to 24h, such as 10m, or leave it unset for the workload's own deadline", names.neverReadyGrace, s.neverReadyGrace)
	}
	if s.snapshot && s.reconcile != verify.ReconcileOff {
		return errors.New("--reconcile asks Flux to reconcile and then waits: use it with app-status verify, not get")
	}
	if s.retryGrace <= 0 || s.retryGrace > maxDuration {
		return fmt.Errorf("%s %s is out of range: give a duration from 1s to 24h, such as 2m", names.retryGrace, s.retryGrace)
	}
	if s.notFoundGrace <= 0 || s.notFoundGrace > maxDuration {
		return fmt.Errorf("%s %s is out of range: give a duration from 1s to 24h, such as 2m", names.notFoundGrace, s.notFoundGrace)
	}
	return nil
}

// clusterTargets loads the kubeconfigs (of the shard's clusters alone when sharded) into
// the request's targets, with the secrets they hold.
func (s settings) clusterTargets(env Env, names inputNames) ([]verify.Target, *kubeconfig.Secrets, error) {
	in := s.kubeconfigInput()
	if !s.shard.IsZero() {
		// Only the shard's own kubeconfigs are read: the others' cost it nothing.
		in.Keep = s.shard.Has
	}
	clusters, secrets, err := kubeconfig.Load(in, s.kubeconfigEnv(env))
	if err != nil {
		return nil, secrets, err
	}
	if len(clusters) == 0 {
		return nil, secrets, fmt.Errorf("no clusters to verify: %s", names.noClusters)
	}
	var targets []verify.Target
	for _, c := range clusters {
		if c.Elsewhere {
			// applyShard leaves it out of the run by the same test; were it ever verified
			// here, it would fail as invalid, never pass.
			targets = append(targets, verify.Target{Name: c.Name, Invalid: "verified by another shard: its kubeconfig was not read"})
			continue
		}
		targets = append(targets, verify.Target{Name: c.Name, Config: c.Config, Invalid: c.Invalid})
	}
	return targets, secrets, nil
}

// inputNames names the inputs (action) or flags (CLI) in error messages.
type inputNames struct {
	resource, resourceItem, revision, timeout, maxParallel, crashRestarts, unschedulableGrace, retryGrace, neverReadyGrace, notFoundGrace, noClusters string
}

// progressLog prints each cluster's state changes as they happen, one line each. Above
// fleetLogAbove clusters the log is for a person scanning a fleet: the verdicts that are not
// Current as they come, and a one-line tally of the fleet at most every tallyEvery (and once
// every cluster has its verdict), so that 1000 clusters make a few hundred lines. While any
// cluster waits, its heartbeat (startHeartbeat) keeps the log from going silent: a tally
// line at least every tallyEvery.
type progressLog struct {
	w        io.Writer
	redact   func(string) string
	clusters int
	// elapsed is the time since the run's start, for the heartbeat's tally.
	elapsed func() time.Duration

	mu    sync.Mutex
	final map[string]result.Verdict
	// lastTally is when the last tally was printed (fleet), as the events tell the time.
	lastTally time.Duration
	// printed is set by every line the heartbeat counts as a sign of life (a tally; below
	// fleetLogAbove, any line), and cleared by each beat.
	printed bool
	// stopped silences the log once the run is over (startHeartbeat's stop).
	stopped atomic.Bool
}

func newProgressLog(w io.Writer, redact func(string) string, clusters int, elapsed func() time.Duration) *progressLog {
	return &progressLog{w: w, redact: redact, clusters: clusters, elapsed: elapsed, final: map[string]result.Verdict{}}
}

// show prints what p changes: its line, and above fleetLogAbove clusters the tally.
func (l *progressLog) show(p verify.Progress) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stopped.Load() {
		return
	}
	if p.Final {
		l.final[p.Cluster] = p.Verdict
	}
	line := func() string {
		return report.ProgressLine(p.Elapsed, p.Cluster, p.Verdict, p.Final, p.Step, l.redact(sanitize.Compact(l.redact(p.Message))))
	}
	if l.clusters <= fleetLogAbove {
		fmt.Fprint(l.w, line())
		l.printed = true
		return
	}
	if p.Final && p.Verdict != result.VerdictCurrent {
		fmt.Fprint(l.w, line())
	}
	if p.Elapsed-l.lastTally >= tallyEvery || (p.Final && len(l.final) == l.clusters) {
		l.lastTally = p.Elapsed
		fmt.Fprint(l.w, report.TallyLine(p.Elapsed, l.clusters, l.final))
		l.printed = true
	}
}

// beat is the heartbeat's tick: while any cluster waits, a tally when no sign of life was
// printed since the previous beat.
func (l *progressLog) beat() {
	l.mu.Lock()
	defer l.mu.Unlock()
	quiet := !l.printed
	l.printed = false
	if l.stopped.Load() || !quiet || len(l.final) >= l.clusters {
		return
	}
	now := l.elapsed()
	l.lastTally = max(l.lastTally, now)
	fmt.Fprint(l.w, report.TallyLine(now, l.clusters, l.final))
}

// startHeartbeat beats every tick until stop is called, which silences the log and waits for
// a beat under way to end (for heartbeatStopWait at most: a blocked writer never holds up the
// verdicts). With tick at most half of tallyEvery, no waiting run is silent for longer than
// tallyEvery. Call stop before anything else writes to the log.
func (l *progressLog) startHeartbeat(tick time.Duration) (stop func()) {
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		t := time.NewTicker(tick)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				l.beat()
			}
		}
	}()
	return func() {
		l.stopped.Store(true)
		close(done)
		select {
		case <-exited:
		case <-time.After(heartbeatStopWait):
		}
	}
}

// Above fleetLogAbove clusters, progress is a tally every tallyEvery and the verdicts that
// are not Current; at any size, a waiting run prints a tally at least every tallyEvery, and
// its heartbeat looks every heartbeatTick.
const (
	fleetLogAbove = 30
	tallyEvery    = 10 * time.Second
	heartbeatTick = tallyEvery / 2
	// heartbeatStopWait is how long the end of a run waits for a beat stuck in a blocked
	// writer.
	heartbeatStopWait = time.Second
)

// cleanRun makes the run safe to write anywhere: every string that came from a cluster is
// cleaned to one line (container logs keep their lines), and the free text among them
// (freeText: messages, events and their reasons, logs, notes) has every secret redacted, in
// any of the forms the secrets were recorded in. The run's own words (its status, the
// verdicts, codes, statuses, conditions' and failures' reasons, kinds, namespaces, names,
// IDs and revisions) are never redacted: no secret decides the exit code or the status
// output, nor blanks a verdict. It rewrites the values themselves, so it cannot fail
// whatever they hold. The names of the clusters and the
// resources, which the user gave, are kept as they are: they never come from a cluster.
//
// Its cost is one pass over the run's text whatever the number of secrets: one redactor for
// the whole run, and each distinct string cleaned once (a fleet repeats the same kinds,
// namespaces, names and messages in every cluster). Once hurry reports true (the job was
// cancelled a while ago), the clusters not yet cleaned keep only what their verdicts need
// (report.EssentialCluster), so a fleet's result is safe to write within moments.
//
// The failures' logs and events that evidence leaves out are gone first: every output of a
// verify run is written from what cleanRun returns.
func cleanRun(run result.Run, secrets *kubeconfig.Secrets, hurry func() bool, evidence report.Evidence) result.Run {
	run = report.KeepEvidence(run, evidence)
	names := make([]string, len(run.Results))
	for i, c := range run.Results {
		names[i] = c.Name
	}
	ready, failed, resources := slices.Clone(run.ReadyClusters), slices.Clone(run.FailedClusters), slices.Clone(run.Resources)
	redactor := secrets.Redactor()
	words, lines, logs := map[string]string{}, map[string]string{}, map[string]string{}
	rewriter := result.NewRewriter(func(field, s string) string {
		memo := words
		switch {
		case field == "Logs":
			memo = logs
		case freeText[field]:
			memo = lines
		}
		if cleaned, ok := memo[s]; ok {
			return cleaned
		}
		// Redacted, cleaned, and redacted again: cleaning drops escape sequences and
		// bidirectional controls, which could have split a secret in two.
		var cleaned string
		switch {
		case field == "Logs":
			cleaned = redactor.Redact(logLines(redactor.Redact(s)))
		case freeText[field]:
			cleaned = redactor.Redact(sanitize.Compact(redactor.Redact(s)))
		default:
			cleaned = sanitize.Compact(s)
		}
		if len(s) <= maxMemoBytes {
			memo[s] = cleaned
		}
		return cleaned
	})
	rewriter.Run(&run)
	run.Results = slices.Clone(run.Results)
	for i := range run.Results {
		if hurry() {
			run.Results[i] = report.EssentialCluster(run.Results[i])
			run.Truncated = run.Truncated || run.Results[i].Truncated
		}
		rewriter.Cluster(&run.Results[i])
		run.Results[i].Name = names[i]
		redactEventReasons(&run.Results[i], redactor)
	}
	run.ReadyClusters, run.FailedClusters, run.Resources = ready, failed, resources
	return run
}

// freeText are the fields of a run (result's Go names) whose text a cluster writes as it likes,
// and which may quote what was sent to it (an echoed Authorization header): the only ones
// redacted. The Ready condition's message quotes the clusters' messages.
var freeText = map[string]bool{"Message": true, "Logs": true, "LogsError": true, "EventsError": true, "Notes": true, "Warnings": true}

// redactEventReasons redacts the reasons of c's Warning events, already cleaned as words: an
// event's reason is whatever the client that recorded it wrote (an app may record its own
// events), unlike a condition's reason, and decides no verdict, code or status, so it is free
// text. The field name is shared with the run's words (Failure.Reason), hence this pass.
func redactEventReasons(c *result.Cluster, redactor *kubeconfig.Redactor) {
	for i := range c.Objects {
		f := c.Objects[i].Failure
		if f == nil {
			continue
		}
		for k := range f.Events {
			f.Events[k].Reason = redactor.Redact(f.Events[k].Reason)
		}
	}
}

// hurryOnceCancelled returns a function that reports true once ctx has been done for grace:
// the job was cancelled (SIGTERM) and the runner kills the process a few seconds later, so
// what is left to do after the verdicts keeps to what must be written. Call stop when done.
func hurryOnceCancelled(ctx context.Context, grace time.Duration) (hurry func() bool, stop func()) {
	var hurried atomic.Bool
	var mu sync.Mutex
	var timer *time.Timer
	stopAfter := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		timer = time.AfterFunc(grace, func() { hurried.Store(true) })
	})
	return hurried.Load, func() {
		stopAfter()
		mu.Lock()
		defer mu.Unlock()
		if timer != nil {
			timer.Stop()
		}
	}
}

// cancelGrace is how long the work after the verdicts goes on as usual once the job is
// cancelled: the runner sends SIGKILL 7.5 s after SIGTERM, and the step should end within a
// second.
const cancelGrace = 300 * time.Millisecond

// logLines cleans each line of a container's log (sanitize.LogLine), keeping the lines.
func logLines(logs string) string {
	lines := strings.Split(logs, "\n")
	for i, l := range lines {
		lines[i] = sanitize.LogLine(strings.TrimSuffix(l, "\r"))
	}
	return strings.Join(lines, "\n")
}

// maxMemoBytes is the longest string cleanRun remembers: names, kinds and one-line messages
// repeat from cluster to cluster, long messages and logs seldom do.
const maxMemoBytes = 512

// kubeconfigInput is the clusters' input, with the words the run prints (runWords).
func (s settings) kubeconfigInput() kubeconfig.Input {
	in := s.clusters
	in.Words = s.runWords()
	return in
}

// runWords are the words the run prints whatever its clusters say: its vocabulary (statuses,
// verdicts, codes, the JSON's keys), the namespace, the revision as given and the requested
// resources' kinds, namespaces, names and IDs (those that parse). A kubeconfig's credential
// equal to one, or to a part of one, could not be masked without blanking it
// (kubeconfig.Input.Words).
func (s settings) runWords() []string {
	ns := cmp.Or(s.namespace, defaultSettings().namespace)
	words := append(result.Vocabulary(), ns, strings.TrimSpace(s.revision))
	for _, r := range s.resources {
		if ref, err := flux.ParseResource(r, ns); err == nil {
			words = append(words, string(ref.Kind), ref.Namespace, ref.Name, ref.ID())
		}
	}
	return words
}

// kubeconfigEnv is what the kubeconfig loader may see. The CLI runs exec credential plugins
// (in CI, those of file: kubeconfigs only with allowExec); the action's container has none,
// so the built-in providers replace the ones they know (EKS, GKE, AKS), and users of others
// get an InvalidConfig verdict that says how to pass a token instead, unless allow-exec lets
// the action run what its container can (a static binary the workflow put in a folder it
// mounts).
func (s settings) kubeconfigEnv(env Env) kubeconfig.Env {
	ke := kubeconfig.Env{Getenv: env.Getenv, ReadFile: env.ReadFile, Home: env.Getenv("HOME"), CI: s.ci, AllowExec: s.allowExec, Note: s.note}
	if s.clusters.CLI {
		ke.BuiltinAuth = s.builtinAuth
		ke.LookPath = exec.LookPath
		ke.Workspace, _ = os.Getwd()
	} else {
		ke.CI = true
		ke.Workspace = env.Getenv("GITHUB_WORKSPACE")
		if s.allowExec {
			ke.BuiltinAuth, ke.LookPath = true, exec.LookPath
		}
	}
	return ke
}

// parseReconcile reads the reconcile input or flag: false (or empty), true, or force.
func parseReconcile(v string) (verify.ReconcileMode, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "false", "no", "off", "0":
		return verify.ReconcileOff, nil
	case "true", "yes", "on", "1":
		return verify.ReconcileOn, nil
	case "force":
		return verify.ReconcileForce, nil
	}
	return verify.ReconcileOff, fmt.Errorf("%q is not a reconcile mode: use false, true or force", v)
}
