package cli

import (
	"cmp"
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/sethvargo/go-githubactions"

	"github.com/org/app-status-action/internal/kubeconfig"
	"github.com/org/app-status-action/internal/publish"
	"github.com/org/app-status-action/internal/report"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/sanitize"
	"github.com/org/app-status-action/internal/shard"
	"github.com/org/app-status-action/internal/verify"
)

// runAction runs as a GitHub container Action: inputs from INPUT_*, secrets masked before
// anything else is printed (and those obtained later as soon as they are), live progress in
// the log, then the outputs, the job summary, the full report file and one error annotation
// per failed cluster: written in every case, also on bad input, timeout and cancellation
// (SIGTERM). The step fails (1) when any of them cannot be written.
func runAction(ctx context.Context, env Env) int {
	// The step's own commands (masks, annotations) go to the log as they are; every other line
	// goes through log, where no text can become a command.
	stdout := &lockedWriter{w: env.Stdout}
	// The inputs' values, as read: a bad input's reports must not repeat them.
	typed := &typedInputs{getenv: env.Getenv}
	gha := githubactions.New(githubactions.WithGetenv(typed.get), githubactions.WithWriter(stdout))
	log := sanitize.NewCommandsWriter(stdout)
	defer func() { _ = log.Flush() }()
	a := actionRun{gha: gha, log: log, env: env, start: env.Clock()}

	s, err := actionSettings(gha)
	if err == nil && len(s.merge) > 0 {
		return runMergeAction(ctx, gha, log, env, s, typed.values)
	}
	req, secrets, err := actionRequest(env, s, err)
	// Mask before printing anything else, the bad-input error included, and mask a secret
	// obtained later (a token a provider mints) before it can be printed.
	maskSecrets(gha, secrets)

	hurry, stopHurry := hurryOnceCancelled(ctx, cancelGrace)
	defer stopHurry()
	var run result.Run
	var badInput string
	var githubNotes []string
	if err != nil {
		run, badInput = a.reportBadInput(err, secrets, typed.values)
	} else {
		run, githubNotes = a.verifyClusters(ctx, s, req, secrets, hurry)
	}
	if err := writeActionResults(gha, log, env, run, s.summary, badInput, githubNotes, hurry); err != nil {
		gha.WithFieldsMap(map[string]string{"title": "app-status could not write its results"}).Errorf("%s", sanitize.Commands(sanitize.Line(redactText(err.Error(), secrets))))
		return 1
	}
	if run.Status == result.RunSuccess {
		return 0
	}
	return 1
}

// typedInputs records the values of the inputs (and of KUBECONFIG) as the action reads them.
type typedInputs struct {
	getenv func(string) string
	values []string
}

// get is getenv, recording the value of an input or of KUBECONFIG.
func (t *typedInputs) get(k string) string {
	v := t.getenv(k)
	if strings.HasPrefix(k, "INPUT_") || k == "KUBECONFIG" {
		t.values = append(t.values, v)
	}
	return v
}

// actionRun is what a run of the action works with: its commands (gha), the log, its
// environment and when it started.
type actionRun struct {
	gha   *githubactions.Action
	log   *sanitize.CommandsWriter
	env   Env
	start time.Time
}

// actionRequest is the verification request of the inputs s, read without error (settingsErr
// nil), and the secrets of the kubeconfigs, read in every case, to be masked.
func actionRequest(env Env, s actionConfig, settingsErr error) (verify.Request, *kubeconfig.Secrets, error) {
	err := settingsErr
	var req verify.Request
	var secrets *kubeconfig.Secrets
	if err == nil {
		req, secrets, err = s.request(env, inputNames{
			resource: "input resource", resourceItem: "line", revision: "input revision", timeout: "input timeout",
			maxParallel: "input max-parallel", crashRestarts: "input crash-restarts",
			unschedulableGrace: "input unschedulable-grace",
			retryGrace:         "input retry-grace",
			neverReadyGrace:    "input never-ready-grace",
			notFoundGrace:      "input not-found-grace",
			noClusters:         "set the clusters input (name=env:VAR lines) or the kubeconfig input",
		})
	}
	if secrets == nil {
		// Another input was bad before the kubeconfigs were read: read them all the same,
		// only to mask what they hold.
		_, secrets, _ = kubeconfig.Load(s.kubeconfigInput(), s.kubeconfigEnv(env))
	}
	return req, secrets, err
}

// maskSecrets has the runner mask each of the secrets, and each one added later.
func maskSecrets(gha *githubactions.Action, secrets *kubeconfig.Secrets) {
	for _, v := range secrets.Values() {
		gha.AddMask(v)
	}
	secrets.OnAdd(gha.AddMask)
}

// reportBadInput annotates the step with err, the error of a bad input, and returns the run
// that reports it, which contacted no cluster, and the error for the job summary.
func (a actionRun) reportBadInput(err error, secrets *kubeconfig.Secrets, typed []string) (result.Run, string) {
	// Several errors (two bad lines of the clusters input) are a line each of the
	// annotation, which the step's own command carries (gha escapes the line breaks), and
	// of the job summary.
	badInput := cmp.Or(strings.Join(redactLines(err.Error(), secrets), "\n"), "bad input")
	a.gha.WithFieldsMap(map[string]string{"title": "app-status bad input"}).Errorf("%s", sanitize.CommandsText(badInput))
	// The log and the job summary get the whole error (GitHub masks the secrets it knows
	// in both); the report file, the JUnit report and the outputs, which an artifact upload
	// carries further, only what holds no input's value, and no resource or revision, on
	// one line.
	run := result.NewRun(nil, "", nil, a.env.Clock().Sub(a.start))
	run.Condition.Message = reportedText(redactText(err.Error(), secrets), typed, inputNamed)
	return run, badInput
}

// verifyClusters verifies the shard's clusters of req with live progress in the log,
// publishing to GitHub what the inputs s ask for; it returns the run and what could not be
// posted.
func (a actionRun) verifyClusters(ctx context.Context, s actionConfig, req verify.Request, secrets *kubeconfig.Secrets, hurry func() bool) (result.Run, []string) {
	env, log, start := a.env, a.log, a.start
	fleet := applyShard(&req, s.shard)
	pub := startPublisher(ctx, a.gha, env, s, req)
	progress := newProgressLog(log, secrets.Redact, len(req.Targets), func() time.Duration { return env.Clock().Sub(start) })
	req.Progress = actionProgress(progress.show, pub, secrets.Redact)
	fmt.Fprintf(log, "Verifying %s on %s (revision %s, timeout %s)\n",
		strings.Join(resourceIDs(req), ", "), clusterCount(len(req.Targets), s.shard, fleet), cmp.Or(req.Revision.String(), "any"), req.Timeout)
	stopHeartbeat := progress.startHeartbeat(cmp.Or(env.heartbeat, heartbeatTick))
	endPluginStderr := routePluginStderr(req, log, secrets)
	verified := runShard(ctx, req, s.shard, fleet, env)
	endPluginStderr()
	stopHeartbeat()
	run := stampRun(cleanRun(verified, secrets, hurry, s.evidence), start, env.Clock(), runOrigin(env), s.shard, fleet)
	return run, finishPublisher(ctx, a.gha, pub, run, hurry, secrets.Redact)
}

// observer is told each cluster's state as it changes (a *publish.Publisher, nil or not).
type observer interface {
	Observe(cluster string, v result.Verdict, message string)
}

// actionProgress prints each change of a cluster's state in the log and tells pub of it;
// the run's internal steps, which only debug logging asks for, go to the log alone: a
// deployment's description says the cluster's state whatever the log shows.
func actionProgress(show func(verify.Progress), pub observer, redact func(string) string) func(verify.Progress) {
	return func(p verify.Progress) {
		show(p)
		if !p.Step {
			pub.Observe(p.Cluster, p.Verdict, redact(p.Message))
		}
	}
}

// actionConfig is what the action's inputs say: the settings both modes share, and whether
// to write the job summary.
type actionConfig struct {
	settings
	// summary is "true", "false" or "compact" (one line: a shard of a merged run).
	summary string
	publish publish.Config
	// merge are the patterns of the report files to merge (input merge): no cluster is
	// contacted.
	merge []string
	// mergeForeign lets a merge take reports written in another CI run (input
	// merge-foreign-reports).
	mergeForeign bool
}

func actionSettings(gha *githubactions.Action) (actionConfig, error) {
	d := defaultSettings()
	c := actionConfig{settings: d, summary: "true"}
	c.resources = lines(gha.GetInput("resource"))
	c.namespace = cmp.Or(gha.GetInput("namespace"), d.namespace)
	c.revision = gha.GetInput("revision")
	c.clusters = kubeconfig.Input{Clusters: gha.GetInput("clusters"), Kubeconfig: gha.GetInput("kubeconfig"),
		AllowedServers: lines(gha.GetInput("allowed-servers")), PinnedCA: gha.GetInput("pinned-ca")}
	if err := c.readDurations(gha, d); err != nil {
		return c, err
	}
	if err := c.readCounts(gha, d); err != nil {
		return c, err
	}
	if err := c.readSwitches(gha, d); err != nil {
		return c, err
	}
	if err := c.readSummary(gha); err != nil {
		return c, err
	}
	var err error
	if c.shard, err = shard.Parse(gha.GetInput("shard")); err != nil {
		return c, fmt.Errorf("input shard: %w", err)
	}
	c.merge = lines(gha.GetInput("merge"))
	if c.mergeForeign, err = boolInput(gha, "merge-foreign-reports", false); err != nil {
		return c, err
	}
	// The runner sets RUNNER_DEBUG=1 when debug logging is on (a re-run with it, or the
	// ACTIONS_STEP_DEBUG variable): the progress then has the run's internal steps too.
	c.verbose = gha.Getenv("RUNNER_DEBUG") == "1"
	if c.publish, err = publishInputs(gha); err != nil {
		return c, err
	}
	return c, nil
}

// readDurations reads the inputs timeout, unschedulable-grace, retry-grace, not-found-grace
// and never-ready-grace into c, d's when unset; it stops at the first bad one.
func (c *actionConfig) readDurations(gha *githubactions.Action, d settings) error {
	var err error
	if c.timeout, err = durationInput(gha, "timeout", d.timeout); err != nil {
		return err
	}
	if c.unschedulableGrace, err = durationInput(gha, "unschedulable-grace", d.unschedulableGrace); err != nil {
		return err
	}
	if c.unschedulableGrace == 0 && gha.GetInput("unschedulable-grace") != "" {
		return fmt.Errorf("input unschedulable-grace %s is out of range: give a duration from 1s to 24h, such as 10m, or leave it unset for the workload's own deadline", gha.GetInput("unschedulable-grace"))
	}
	if c.retryGrace, err = durationInput(gha, "retry-grace", d.retryGrace); err != nil {
		return err
	}
	if c.notFoundGrace, err = durationInput(gha, "not-found-grace", d.notFoundGrace); err != nil {
		return err
	}
	if c.neverReadyGrace, err = durationInput(gha, "never-ready-grace", d.neverReadyGrace); err != nil {
		return err
	}
	if c.neverReadyGrace == 0 && gha.GetInput("never-ready-grace") != "" {
		return fmt.Errorf("input never-ready-grace %s is out of range: give a duration from 1s to 24h, such as 10m, or leave it unset for the workload's own deadline", gha.GetInput("never-ready-grace"))
	}
	return nil
}

// readCounts reads the inputs max-parallel and crash-restarts into c, d's when unset.
func (c *actionConfig) readCounts(gha *githubactions.Action, d settings) error {
	var err error
	if c.maxParallel, err = intInput(gha, "max-parallel", d.maxParallel); err != nil {
		return err
	}
	if c.crashRestarts, err = intInput(gha, "crash-restarts", d.crashRestarts); err != nil {
		return err
	}
	return nil
}

// readSwitches reads the inputs fail-fast, workloads, fail-on-suspended, allow-exec,
// reconcile and evidence into c, d's when unset; it stops at the first bad one.
func (c *actionConfig) readSwitches(gha *githubactions.Action, d settings) error {
	var err error
	if c.failFast, err = boolInput(gha, "fail-fast", d.failFast); err != nil {
		return err
	}
	if c.workloads, err = boolInput(gha, "workloads", d.workloads); err != nil {
		return err
	}
	if c.failOnSuspended, err = boolInput(gha, "fail-on-suspended", d.failOnSuspended); err != nil {
		return err
	}
	if c.allowExec, err = boolInput(gha, "allow-exec", false); err != nil {
		return err
	}
	if c.reconcile, err = parseReconcile(gha.GetInput("reconcile")); err != nil {
		return fmt.Errorf("input reconcile: %w", err)
	}
	if c.evidence, err = report.ParseEvidence(gha.GetInput("evidence")); err != nil {
		return fmt.Errorf("input evidence: %w", err)
	}
	return nil
}

// readSummary reads the input summary into c; a bad value leaves c's as it was.
func (c *actionConfig) readSummary(gha *githubactions.Action) error {
	switch v := strings.ToLower(gha.GetInput("summary")); v {
	case "", "true", "yes", "on", "1":
		c.summary = "true"
	case "false", "no", "off", "0":
		c.summary = "false"
	case "compact":
		c.summary = "compact"
	default:
		return fmt.Errorf("input summary: %q is not true, false or compact", gha.GetInput("summary"))
	}
	return nil
}

// inputNamed is the input an error message starts by naming ("input clusters"), or "".
func inputNamed(message string) string {
	if name := regexp.MustCompile(`^input ([a-z][a-z-]*)`).FindStringSubmatch(message); name != nil {
		return "input " + name[1]
	}
	return ""
}

func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

func durationInput(gha *githubactions.Action, name string, def time.Duration) (time.Duration, error) {
	v := gha.GetInput(name)
	if v == "" {
		return def, nil
	}
	d, err := parseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("input %s: %w", name, err)
	}
	return d, nil
}

func intInput(gha *githubactions.Action, name string, def int) (int, error) {
	v := gha.GetInput(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 32)
	switch {
	case isRangeError(err):
		return 0, fmt.Errorf("input %s: %s is out of range: give a whole number such as %d", name, v, def)
	case err != nil:
		return 0, fmt.Errorf("input %s: %q is not a whole number", name, v)
	}
	return int(n), nil
}

func boolInput(gha *githubactions.Action, name string, def bool) (bool, error) {
	switch strings.ToLower(gha.GetInput(name)) {
	case "":
		return def, nil
	case "true", "yes", "on", "1":
		return true, nil
	case "false", "no", "off", "0":
		return false, nil
	}
	return false, fmt.Errorf("input %s: %q is not a boolean; use true or false", name, gha.GetInput(name))
}

func resourceIDs(req verify.Request) []string {
	ids := make([]string, len(req.Resources))
	for i, r := range req.Resources {
		ids[i] = r.ID()
	}
	return ids
}
