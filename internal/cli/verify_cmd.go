package cli

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/org/app-status-action/internal/kubeconfig"
	"github.com/org/app-status-action/internal/report"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/safefile"
	"github.com/org/app-status-action/internal/sanitize"
	"github.com/org/app-status-action/internal/shard"
	"github.com/org/app-status-action/internal/verify"
)

// cliOptions is what the verify and get commands' flags set.
type cliOptions struct {
	settings
	resources, contexts []string
	allContexts         bool
	allowedServers      []string
	pinnedCA            string
	clusterLines        []string
	output, summaryFile string
	kubeconfigPath      string
	clustersFile        string
	clustersDir         string
	quiet               bool
	onlyFailed          bool
	junitFile           string
	dotenvFile          string
	jsonFile            string
	tektonResults       string
	kubeconfigDir       string
}

// The groups of the commands' flags, in the order their help lists them.
const (
	groupTarget  = "What to verify"
	groupReports = "Which reports"
	groupCluster = "Clusters"
	groupWait    = "Waiting and failing"
	groupOutput  = "Output"
)

// flagGroupKey is the annotation naming a flag's group.
const flagGroupKey = "app-status/group"

// flagGroups is the order of the groups in the help, the flags of none ("Other") last.
func flagGroups() []string {
	return []string{groupTarget, groupReports, groupCluster, groupWait, groupOutput, "Other"}
}

// newFlagSet defines the flags of `app-status verify` (or `get`), with the defaults of
// defaultSettings, writing into o, each in its group of the help (flagGroups).
func newFlagSet(name string, o *cliOptions) *pflag.FlagSet {
	d := defaultSettings()
	fs := pflag.NewFlagSet("app-status "+name, pflag.ContinueOnError)
	fs.SortFlags = false
	addTargetFlags(fs, o, d)
	addClusterFlags(fs, o, d)
	addWaitFlags(fs, o, d)
	addOutputFlags(fs, o, d)
	return fs
}

// setFlagGroup puts the flags names of fs in the group g of the help.
func setFlagGroup(fs *pflag.FlagSet, g string, names ...string) {
	for _, n := range names {
		_ = fs.SetAnnotation(n, flagGroupKey, []string{g})
	}
}

// addTargetFlags defines the flags of what to verify (groupTarget).
func addTargetFlags(fs *pflag.FlagSet, o *cliOptions, d settings) {
	fs.StringArrayVar(&o.resources, "resource", nil, "Flux object to verify, as the arguments: kustomization/NAME (ks/NAME), helmrelease/NAME (hr/NAME) or resourceset/NAME (rset/NAME, a Flux Operator ResourceSet), KIND/NAMESPACE/NAME for another namespace; repeat for several")
	fs.StringVarP(&o.namespace, "namespace", "n", d.namespace, "namespace of the Flux objects")
	fs.StringVar(&o.revision, "revision", d.revision, "revision every object must have applied: a commit SHA (7+ hex), a Flux revision (main@sha1:...), a version tag (or refs/tags/NAME), a chart version or an OCI digest; never a branch")
	fs.Var(reconcileFlag{&o.reconcile}, "reconcile", "ask Flux to reconcile the sources and the objects before verifying (--reconcile, or --reconcile=force to also rerun Helm releases); the only writes a run makes")
	fs.Lookup("reconcile").NoOptDefVal = "true"
	setFlagGroup(fs, groupTarget, "resource", "namespace", "revision", "reconcile")
}

// addClusterFlags defines the flags of the clusters and how to reach them (groupCluster).
func addClusterFlags(fs *pflag.FlagSet, o *cliOptions, d settings) {
	fs.StringVar(&o.kubeconfigPath, "kubeconfig", "", "kubeconfig file (default: the files of $KUBECONFIG merged as kubectl merges them, else ~/.kube/config)")
	fs.StringArrayVar(&o.contexts, "context", nil, "kubeconfig context to verify, named after it; repeat for several (default: the current context)")
	fs.BoolVar(&o.allContexts, "all-contexts", false, "verify every context of the kubeconfig, each a cluster named after it")
	fs.StringVar(&o.kubeconfigDir, "kubeconfig-dir", "", "folder of kubeconfig files, each a cluster named after its file (a mounted Secret, a Tekton workspace)")
	fs.StringArrayVar(&o.clusterLines, "cluster", nil, "a cluster as a name=source line of a clusters file, e.g. prod=oidc:https://prod.example.com:6443 audience=app-status ca=prod.pem (no secret: the CI's ID token); repeat for several")
	fs.StringVar(&o.clustersFile, "clusters-file", "", "file of name=source lines, as the action's clusters input (env:VAR, file:PATH, context:NAME, oidc:https://SERVER audience=AUDIENCE)")
	fs.StringVar(&o.clustersDir, "clusters-dir", "", "folder the relative file: paths of --clusters-file start at (default: the clusters file's folder)")
	fs.StringArrayVar(&o.allowedServers, "allowed-server", nil, "an API server (https://HOST[:PORT]) a kubeconfig of a file: source may have an EKS, GKE or AKS token of the built-in providers sent to, besides the cloud's own endpoints; repeat for several")
	fs.StringVar(&o.pinnedCA, "pinned-ca", "", "a file of PEM CA certificates: a kubeconfig of a file: source whose EKS, GKE or AKS cluster the cloud is not asked about (an --allowed-server, AKS without AZURE_SUBSCRIPTION_ID) must give one of these CAs")
	fs.BoolVar(&o.allowExec, "allow-exec", false, "in a CI job, let the exec credential plugins of file: kubeconfigs, which a pull request can change, run: an installed program (by its absolute path or in PATH) outside the workspace; never a shell, an interpreter or a relative path")
	fs.BoolVar(&o.builtinAuth, "builtin-auth", false, "get EKS, GKE and AKS tokens in-process from the environment's credentials, as the action does, even when the kubeconfig's exec plugin (aws, gke-gcloud-auth-plugin, kubelogin) is installed")
	fs.IntVar(&o.maxParallel, "max-parallel", d.maxParallel, "clusters connecting and making their first lists at once (a waiting cluster holds no slot)")
	fs.Func("shard", "verify only shard I of N of the clusters (I/N), assigned by a hash of their names; app-status merge joins the shards' -o json reports", func(v string) error {
		s, err := shard.Parse(v)
		o.shard = s
		return err
	})
	setFlagGroup(fs, groupCluster, "kubeconfig", "context", "all-contexts", "cluster", "kubeconfig-dir", "clusters-file", "clusters-dir", "allowed-server", "pinned-ca", "allow-exec", "builtin-auth", "max-parallel", "shard")
}

// addWaitFlags defines the flags of waiting and failing (groupWait).
func addWaitFlags(fs *pflag.FlagSet, o *cliOptions, d settings) {
	o.timeout, o.retryGrace, o.notFoundGrace = d.timeout, d.retryGrace, d.notFoundGrace
	fs.Var(durationFlag{&o.timeout}, "timeout", "how long to wait for every cluster: seconds (600) or a duration with its unit (90s, 10m)")
	fs.BoolVar(&o.failFast, "fail-fast", d.failFast, "stop the other clusters once one has failed")
	fs.BoolVar(&o.workloads, "workloads", d.workloads, "also verify the objects in the inventory (false: only the Flux objects, nested ones included)")
	fs.BoolVar(&o.failOnSuspended, "fail-on-suspended", d.failOnSuspended, "fail a cluster where a nested Flux object is suspended (default: report it and skip what it lists)")
	fs.IntVar(&o.crashRestarts, "crash-restarts", d.crashRestarts, "restarts after which a crashing container fails the rollout")
	fs.Func("unschedulable-grace", "how long a pod may stay unschedulable before the rollout fails (default: the workload's own deadline, a Deployment's progressDeadlineSeconds, else 10m30s)", func(v string) error {
		d, err := parseDuration(v)
		if err != nil {
			return err
		}
		if d <= 0 {
			return fmt.Errorf("%q is out of range: give a duration from 1s to 24h, such as 10m, or leave it unset for the workload's own deadline", v)
		}
		o.unschedulableGrace = d
		return nil
	})
	fs.Func("never-ready-grace", "how long a pod may run without becoming ready before the rollout fails (default: the workload's own deadline, a Deployment's progressDeadlineSeconds, else what its probes allow)", func(v string) error {
		d, err := parseDuration(v)
		if err != nil {
			return err
		}
		if d <= 0 {
			return fmt.Errorf("%q is out of range: give a duration from 1s to 24h, such as 10m, or leave it unset for the workload's own deadline", v)
		}
		o.neverReadyGrace = d
		return nil
	})
	fs.Var(durationFlag{&o.retryGrace}, "retry-grace", "how long an error the kubelet or a controller retries may last before the rollout fails (a transient pull error, a missing Secret or ConfigMap, a quota or webhook refusing pods)")
	fs.Var(durationFlag{&o.notFoundGrace}, "not-found-grace", "how long a requested Flux object may be missing before the cluster is NotFound, unless a Kustomization or ResourceSet of the cluster is still creating it")
	setFlagGroup(fs, groupWait, "timeout", "fail-fast", "workloads", "fail-on-suspended", "crash-restarts", "unschedulable-grace", "never-ready-grace", "retry-grace", "not-found-grace")
}

// addOutputFlags defines the flags of the output and the report files (groupOutput).
func addOutputFlags(fs *pflag.FlagSet, o *cliOptions, d settings) {
	fs.StringVarP(&o.output, "output", "o", "text", "output format: text, json, markdown or junit")
	fs.BoolVar(&o.onlyFailed, "only-failed", false, "text output: list only the clusters that are not Current (the others are counted)")
	fs.BoolVar(&o.quiet, "quiet", false, "do not print progress on stderr")
	fs.BoolVar(&o.verbose, "verbose", false, "also print the run's internal steps in the progress on stderr: connecting, each list, discovery of a kind, reads of Helm's storage")
	o.evidence = d.evidence
	fs.Var(evidenceFlag{&o.evidence}, "evidence", "how much of a failure's evidence the outputs keep: full, no-logs (no container logs) or none (no logs, no events)")
	fs.StringVar(&o.junitFile, "junit-file", "", "also write the JUnit XML report to this file")
	fs.StringVar(&o.summaryFile, "summary-file", "", "also write the markdown summary to this file")
	fs.StringVar(&o.jsonFile, "json-file", "", "also write the whole report as JSON (as -o json prints it) to this file")
	fs.StringVar(&o.tektonResults, "tekton-results", "", "also write the Tekton Task's results (status, ready-count, failed-count, failed-clusters, duration) as files in this folder (/tekton/results)")
	fs.StringVar(&o.dotenvFile, "dotenv-file", "", "also write the verdict as a dotenv file (APP_STATUS=..., a GitLab dotenv report; in a GitLab job: "+gitlabDotenvFile+" unless given)")
	setFlagGroup(fs, groupOutput, "output", "only-failed", "quiet", "verbose", "evidence", "junit-file", "summary-file", "json-file", "tekton-results", "dotenv-file")
}

// runCLI runs `app-status verify` (or `get` when snapshot) with the flags fs has parsed into
// o and the Flux objects given as arguments: machine output on stdout, progress on stderr.
// parseErr is the error of a command line that did not parse: the run then only reports it.
func runCLI(ctx context.Context, o *cliOptions, fs *pflag.FlagSet, args []string, env Env, snapshot bool, parseErr error) int {
	// Nothing printed can become a CI runner's command when the CLI runs in a pipeline's step.
	stderr := sanitize.NewCommandsWriter(env.Stderr)
	defer func() { _ = stderr.Flush() }()
	env.Stderr = stderr
	r := newCLIRun(o, fs, env, snapshot, parseErr)
	if code, ok := r.checkCommandLine(args); !ok {
		return code
	}
	s := r.requestSettings(args, snapshot)
	req, secrets, err := s.request(env, cliInputNames(args))
	if err != nil {
		return r.badInputReported(strings.Join(redactLines(err.Error(), secrets), "\n"),
			reportedBadInput(fs, env, redactText(err.Error(), secrets)))
	}
	azure, summaryFile, chosen := setUpAzurePipelines(env, secrets, r.summaryFile)
	fleet := applyShard(&req, s.shard)
	start := env.Clock()
	stopHeartbeat := r.startProgress(&req, secrets, start)
	hurry, stopHurry := hurryOnceCancelled(ctx, cancelGrace)
	defer stopHurry()
	verified := verifyShard(ctx, req, s, fleet, env, secrets)
	stopHeartbeat()
	run := stampRun(cleanRun(verified, secrets, hurry, s.evidence), start, env.Clock(), runOrigin(env), s.shard, fleet)
	if hurry() {
		run = report.Essentials(run)
	}
	return r.writeResults(run, azure, summaryFile, chosen)
}

// cliRun is what a run of `app-status verify` (or `get`) reports with: the command's name in
// its messages, its options and flags, its environment (stderr breaking runner commands), and
// the report files a bad input is written to.
type cliRun struct {
	name     string
	o        *cliOptions
	fs       *pflag.FlagSet
	env      Env
	parseErr error
	// defaults are the report files of a GitLab job whose path the program chose
	// (gitlabDefaults), nil elsewhere.
	defaults map[string]bool
	// summaryFile is --summary-file, or its GitLab default.
	summaryFile string
}

// newCLIRun names the run and, in a GitLab job, gives o's report files their defaults.
func newCLIRun(o *cliOptions, fs *pflag.FlagSet, env Env, snapshot bool, parseErr error) cliRun {
	name := "verify"
	if snapshot {
		name = "get"
	}
	var defaults map[string]bool
	if inGitLabCI(env) {
		// A GitLab job reports through files its artifacts:reports name: the template's, or
		// these defaults in the job's folder.
		defaults = gitlabDefaults(o)
	}
	return cliRun{name: name, o: o, fs: fs, env: env, parseErr: parseErr, defaults: defaults, summaryFile: o.summaryFile}
}

// badInputReported ends a run that contacted no cluster: the error, and the report files the
// flags read so far name (the flags a CI's template fixes come before the user's) saying so.
// The report files, read by more people than the log, may get a shorter message (reported)
// that leaves out what was typed.
func (r cliRun) badInputReported(message, reported string) int {
	// Several errors (two bad lines of a clusters file) are a line each.
	for _, l := range strings.Split(message, "\n") {
		fmt.Fprintf(r.env.Stderr, "app-status %s: %s\n", r.name, l)
	}
	if r.parseErr != nil {
		fmt.Fprintf(r.env.Stderr, "See 'app-status %s --help' for usage.\n", r.name)
	}
	files := newReportFiles(*r.o, r.summaryFile, r.env)
	files.gitlabDefaults = r.defaults
	if err := files.write(badInputRun(reported), reported, r.env.Stderr); err != nil {
		fmt.Fprintf(r.env.Stderr, "app-status %s: %v\n", r.name, err)
	}
	return 2
}

// badInput is badInputReported with the report files' message made from message.
func (r cliRun) badInput(message string) int {
	return r.badInputReported(message, reportedBadInput(r.fs, r.env, message))
}

// checkCommandLine ends the run as badInput does, returning its exit code and false, when the
// command line did not parse, names no Flux object or asks for an unknown output format.
func (r cliRun) checkCommandLine(args []string) (int, bool) {
	switch output := r.o.output; {
	case r.parseErr != nil:
		// A flag's value, which may be a secret given to the wrong flag, stays out of the
		// report files.
		return r.badInputReported(sanitize.Line(r.parseErr.Error()), flagErrorWithoutValue(r.fs, r.parseErr)), false
	case len(r.o.resources) == 0 && len(args) == 0:
		return r.badInput(fmt.Sprintf("name the Flux object to verify: app-status %s ks/NAME (a Kustomization), hr/NAME (a HelmRelease) or rset/NAME (a ResourceSet); KIND/NAMESPACE/NAME for another namespace", r.name)), false
	case output != "text" && output != "json" && output != "markdown" && output != "junit":
		return r.badInput(fmt.Sprintf("-o must be text, json, markdown or junit, not %q", output)), false
	}
	return 0, true
}

// requestSettings are the settings of the run from its options, with the Flux objects given
// as arguments.
func (r cliRun) requestSettings(args []string, snapshot bool) settings {
	o, env, name := r.o, r.env, r.name
	s := o.settings
	s.snapshot = snapshot
	s.ci = o.inCI(env)
	s.note = func(note string) { fmt.Fprintf(env.Stderr, "app-status %s: note: %s\n", name, sanitize.Line(note)) }
	// The objects given as arguments come after those of --resource.
	s.resources = append(slices.Clone(o.resources), args...)
	s.clusters = kubeconfig.Input{CLI: true, ClusterLines: o.clusterLines, ClustersFile: o.clustersFile, ClustersBase: o.clustersDir, KubeconfigPath: o.kubeconfigPath, Contexts: o.contexts, AllContexts: o.allContexts, KubeconfigDir: o.kubeconfigDir, AllowedServers: o.allowedServers, PinnedCAFile: o.pinnedCA}
	if inGitLabCI(env) {
		// The component's input, which it hands over as a --clusters-file: naming the flag
		// would have the report files blame it for what $KUBECONFIG holds.
		s.clusters.NamesClusters = "the clusters input of the GitLab component"
	}
	return s
}

// cliInputNames names the flags in the request's errors; the Flux objects by KIND/NAME when
// given as arguments.
func cliInputNames(args []string) inputNames {
	resourceName := "--resource"
	if len(args) > 0 {
		resourceName = "KIND/NAME"
	}
	return inputNames{
		resource: resourceName, resourceItem: "#", revision: "--revision", timeout: "--timeout", maxParallel: "--max-parallel",
		crashRestarts: "--crash-restarts", unschedulableGrace: "--unschedulable-grace", retryGrace: "--retry-grace", neverReadyGrace: "--never-ready-grace",
		notFoundGrace: "--not-found-grace",
		noClusters:    "the kubeconfig has no contexts; pass --kubeconfig, --context or --clusters-file",
	}
}

// setUpAzurePipelines, in an Azure Pipelines job, has the agent mask the secrets and, unless
// summaryFile is given, writes the summary to the agent's temporary folder: azure is nil
// elsewhere, summaryFile the summary's path, chosen the files whose path it chose.
func setUpAzurePipelines(env Env, secrets *kubeconfig.Secrets, summaryFile string) (*azureCommands, string, map[string]bool) {
	var azure *azureCommands
	var chosen map[string]bool // the files whose path the program chose, besides GitLab's
	if inAzurePipelines(env) {
		// The agent masks each secret from here on, a token a provider mints later too.
		azure = &azureCommands{w: env.Stdout}
		for _, v := range secrets.Values() {
			azure.setSecret(v)
		}
		secrets.OnAdd(azure.setSecret)
		if summaryFile == "" {
			if dir := env.Getenv("AGENT_TEMPDIRECTORY"); dir != "" {
				summaryFile = filepath.Join(dir, "app-status-summary.md")
				chosen = map[string]bool{summaryFile: true}
			}
		}
	}
	return azure, summaryFile, chosen
}

// startProgress, unless --quiet, has req print each cluster's state changes on stderr, with a
// heartbeat from start while any cluster waits; the function returned stops the heartbeat.
func (r cliRun) startProgress(req *verify.Request, secrets *kubeconfig.Secrets, start time.Time) func() {
	env := r.env
	stopHeartbeat := func() {}
	if !r.o.quiet {
		progress := newProgressLog(env.Stderr, secrets.Redact, len(req.Targets), func() time.Duration { return env.Clock().Sub(start) })
		req.Progress = progress.show
		stopHeartbeat = progress.startHeartbeat(cmp.Or(env.heartbeat, heartbeatTick))
	}
	return stopHeartbeat
}

// verifyShard verifies the shard's clusters of req (runShard), in CI with what the exec
// plugins print on stderr routed through the log's exit.
func verifyShard(ctx context.Context, req verify.Request, s settings, fleet []string, env Env, secrets *kubeconfig.Secrets) result.Run {
	// In CI, what the exec plugins print goes through the log's exit; at a terminal it goes
	// to the terminal as kubectl has it, prompts without a newline included.
	endPluginStderr := func() {}
	if s.ci {
		endPluginStderr = routePluginStderr(req, env.Stderr, secrets)
	}
	verified := runShard(ctx, req, s.shard, fleet, env)
	endPluginStderr()
	return verified
}

// writeResults writes run to stdout (-o) and to the report files, then, in Azure Pipelines,
// the agent's commands (azure, nil elsewhere) with the summary file; it returns the exit
// code: 0 when the run succeeded, 1 when it failed or a result could not be written.
func (r cliRun) writeResults(run result.Run, azure *azureCommands, summaryFile string, chosen map[string]bool) int {
	env, output := r.env, r.o.output
	stdout := sanitize.NewCommandsWriter(env.Stdout)
	if output == "json" {
		stdout = sanitize.NewJSONCommandsWriter(env.Stdout)
	}
	env.Stdout = stdout
	files := newReportFiles(*r.o, summaryFile, env)
	files.gitlabDefaults, files.chosen = r.defaults, chosen
	if output == "json" && files.json != "" {
		// The same document twice: encoded once, into the file, then copied from it through
		// stdout's own cleaning, as every byte printed (a no-op on what the file's cleaning
		// left, whatever is in the file by then).
		files.jsonCopy = &fileCopy{w: stdout}
	}
	err := files.write(run, "", env.Stderr)
	switch {
	case files.jsonCopy != nil && files.jsonCopy.err != nil:
		err = errors.Join(err, fmt.Errorf("write output: %w", files.jsonCopy.err))
	case files.jsonCopy != nil && files.jsonCopy.copied:
	default:
		// (Also when the file could not be written, or was written in place: a device such as
		// /dev/stdout, a pipe, a link, a file mounted on its own.)
		err = errors.Join(err, writeCLIOutput(env, output, r.o.onlyFailed, run))
	}
	if flushErr := stdout.Flush(); flushErr != nil {
		err = errors.Join(err, fmt.Errorf("write output: %w", flushErr))
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "app-status %s: %v\n", r.name, err)
		return 1
	}
	if azure != nil {
		azure.results(run, summaryFile)
	}
	if run.Status == result.RunSuccess {
		return 0
	}
	return 1
}

func writeCLIOutput(env Env, output string, onlyFailed bool, run result.Run) error {
	switch output {
	case "json":
		if err := report.WriteJSON(env.Stdout, run); err != nil {
			return fmt.Errorf("write output: %w", err)
		}
	case "markdown":
		if _, err := fmt.Fprint(env.Stdout, report.Markdown(run, report.MarkdownOptions{})); err != nil {
			return fmt.Errorf("write output: %w", err)
		}
	case "junit":
		if err := report.JUnit(env.Stdout, run); err != nil {
			return fmt.Errorf("write output: %w", err)
		}
	default:
		if err := report.TextWith(env.Stdout, run, report.TextOptions{OnlyFailed: onlyFailed}); err != nil {
			return fmt.Errorf("write output: %w", err)
		}
	}
	return nil
}

// redactText makes an error message safe to print: on one line, with every secret redacted,
// before and after cleaning (which could join the halves of a secret split by an escape).
func redactText(s string, secrets *kubeconfig.Secrets) string {
	if secrets == nil {
		return sanitize.Line(s)
	}
	return secrets.Redact(sanitize.Line(secrets.Redact(s)))
}

// redactLines is redactText for each line of s: the errors of several bad inputs (each bad
// line of a clusters file), joined, are shown a line each. Empty lines are left out.
func redactLines(s string, secrets *kubeconfig.Secrets) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(redactText(l, secrets)); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// reconcileFlag is --reconcile: alone it means true; =force, =true or =false.
type reconcileFlag struct{ mode *verify.ReconcileMode }

func (f reconcileFlag) String() string {
	if f.mode == nil || *f.mode == verify.ReconcileOff {
		return "false"
	}
	return string(*f.mode)
}

func (f reconcileFlag) Set(v string) error {
	m, err := parseReconcile(v)
	if err != nil {
		return err
	}
	*f.mode = m
	return nil
}

// Type names the value in the help.
func (reconcileFlag) Type() string { return "mode" }

// writeCleanJSON writes the run's JSON document to w streamed (a fleet's report is tens to
// hundreds of MiB, which a buffer would hold at the run's end, when memory peaks), with
// runner commands broken as on stdout (sanitize.NewJSONCommandsWriter: the JSON reads the
// same, and no line of it holds a command that sanitize.CommandsText would break), for a
// file that later steps, or the job's log, may print.
func writeCleanJSON(w io.Writer, run result.Run) error {
	jw := sanitize.NewJSONCommandsWriter(w)
	if err := report.WriteJSON(jw, run); err != nil {
		return err
	}
	return jw.Flush()
}

// writeJSONFile writes the whole report, as -o json prints it, to path (--json-file), and
// copies it to also's writer when set (-o json with it) and the file was read back.
func writeJSONFile(own putFile, path string, run result.Run, also *fileCopy) error {
	// Whole or not at all (safefile.Write); the file may be the job's log (/dev/stdout). A
	// file of its own (own: createOwn, see reportFiles.own) is not read back: stdout then gets
	// the document encoded again.
	encode := func(w io.Writer) error { return writeCleanJSON(w, run) }
	var err error
	switch {
	case own != nil:
		err = own(path, 0o644, encode)
	case also == nil:
		err = safefile.Write(path, 0o644, encode)
	default:
		// The file is whole before stdout gets a byte of it.
		also.copied, err = safefile.WriteAndRead(path, 0o644, encode, func(r io.Reader) error {
			_, also.err = io.Copy(also.w, r)
			return nil
		})
	}
	if err != nil {
		return fmt.Errorf("write --json-file: %w", err)
	}
	return nil
}

// writeJUnit writes the run's JUnit XML report to path (--junit-file).
func writeJUnit(put putFile, path string, run result.Run) error {
	var b bytes.Buffer
	if err := report.JUnit(&b, run); err != nil {
		return err
	}
	if err := writeWhole(put, path, b.Bytes()); err != nil {
		return fmt.Errorf("write --junit-file: %w", err)
	}
	return nil
}

// flagErrorWithoutValue is pflag's parse error without what was typed, which may be a secret
// given to the wrong flag: a flag of fs is named, a flag fs does not define is not (what was
// typed in its place may be a secret).
func flagErrorWithoutValue(fs *pflag.FlagSet, err error) string {
	var (
		notExist *pflag.NotExistError
		required *pflag.ValueRequiredError
		invalid  *pflag.InvalidValueError
		syntax   *pflag.InvalidSyntaxError
	)
	switch {
	case errors.As(err, &required) && required.GetFlag() != nil && fs.Lookup(required.GetFlag().Name) != nil:
		return "flag needs an argument: --" + required.GetFlag().Name
	case errors.As(err, &invalid) && invalid.GetFlag() != nil && fs.Lookup(invalid.GetFlag().Name) != nil:
		return "invalid value for flag --" + invalid.GetFlag().Name + " (the step's log has the error)"
	case errors.As(err, &notExist):
		return "a flag that is not defined (the step's log names it)"
	case errors.As(err, &syntax):
		return "bad flag syntax: an argument of dashes alone, or starting with -="
	}
	return "the command line could not be read (the step's log has the error)"
}

// reportedBadInput is what the report files say of a bad input: the error itself when it holds
// nothing typed, else the flag it names and where to read the rest. The report files reach
// more people than the log (a merge request's widget, a pipeline's artifacts), and what was
// typed may be a secret given to the wrong flag, or a kubeconfig pasted in place of its path.
func reportedBadInput(fs *pflag.FlagSet, env Env, message string) string {
	typed := []string{env.Getenv("KUBECONFIG")}
	fs.Visit(func(f *pflag.Flag) { typed = append(typed, f.Value.String()) })
	typed = append(typed, fs.Args()...)
	return reportedText(message, typed, func(m string) string {
		for _, name := range regexp.MustCompile(`(?:^|[\s(])--?([a-z][a-z-]*)`).FindAllStringSubmatch(m, -1) {
			if len(name[1]) == 1 && fs.ShorthandLookup(name[1]) != nil {
				return "-" + name[1]
			}
			if fs.Lookup(name[1]) != nil {
				return "--" + name[1]
			}
		}
		return ""
	})
}

// reportedText is message when it holds nothing typed (no quoted text, and no run of 8 or more
// letters, digits or -_+= from one of the values typed, which catches a value shown cleaned as
// a path, split, or in part), else which input was bad (named by name, "" when it cannot
// tell) and where to read the rest.
func reportedText(message string, typed []string, name func(string) string) string {
	holds := strings.ContainsAny(message, "\"'`")
	runs := regexp.MustCompile(`[A-Za-z0-9_+=-]{8,}`)
	for _, v := range typed {
		for _, run := range runs.FindAllString(v, -1) {
			if strings.Contains(message, run) {
				holds = true
			}
		}
	}
	if !holds {
		return message
	}
	if n := name(message); n != "" {
		return "bad input in " + n + ": the step's log says what is wrong and how to fix it"
	}
	return "bad input: the step's log says what is wrong and how to fix it"
}

// evidenceFlag is --evidence: full, no-logs or none.
type evidenceFlag struct{ evidence *report.Evidence }

func (f evidenceFlag) String() string {
	if f.evidence == nil {
		return ""
	}
	return string(*f.evidence)
}

// Type names the value in the help.
func (evidenceFlag) Type() string { return "level" }

func (f evidenceFlag) Set(v string) error {
	e, err := report.ParseEvidence(v)
	if err == nil {
		*f.evidence = e
	}
	return err
}
