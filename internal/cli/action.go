package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sethvargo/go-githubactions"

	"github.com/org/app-status-action/internal/kubeconfig"
	"github.com/org/app-status-action/internal/report"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/verify"
)

// runAction runs as a GitHub container Action: inputs from INPUT_*, secrets masked before
// anything else is printed, live progress in the log, then outputs, the job summary and one
// error annotation per failed cluster — written in every case, also on bad input, timeout and
// cancellation (SIGTERM).
func runAction(ctx context.Context, env Env) int {
	gha := githubactions.New(githubactions.WithGetenv(env.Getenv), githubactions.WithWriter(env.Stdout))
	start := env.Clock()

	s, err := actionSettings(gha)
	var req verify.Request
	var secrets *kubeconfig.Secrets
	if err == nil {
		req, secrets, err = s.request(env, inputNames{
			resource: "input resource", resourceItem: "line", revision: "input revision", timeout: "input timeout",
			maxParallel: "input max-parallel", crashRestarts: "input crash-restarts",
			unschedulableGrace: "input unschedulable-grace",
			noClusters:         "set the clusters input (name=env:VAR lines) or the kubeconfig input",
		})
	}
	// Mask before printing anything else, the bad-input error included.
	if secrets != nil {
		for _, v := range secrets.Values() {
			if err := safely(func() { gha.AddMask(v) }); err != nil {
				fmt.Fprintf(env.Stderr, "app-status: mask a secret: %v\n", err)
			}
		}
	}
	if err != nil {
		msg := redactText(err.Error(), secrets)
		_ = safely(func() { gha.WithFieldsMap(map[string]string{"title": "app-status bad input"}).Errorf("%s", msg) })
		run := result.NewRun(s.resources, s.revision, nil, env.Clock().Sub(start))
		run.Condition.Message = msg
		writeActionResults(gha, env, run, s.summary, "**Bad input:** "+msg)
		return 1
	}
	req.Progress = progressPrinter(env.Stdout, secrets.Redact)
	fmt.Fprintf(env.Stdout, "Verifying %s on %d clusters (revision %s, timeout %s)\n",
		strings.Join(resourceIDs(req), ", "), len(req.Targets), cmp.Or(req.Revision.String(), "any"), req.Timeout)
	run, err := redactRun(verify.Run(ctx, req), secrets)
	if err != nil {
		fmt.Fprintf(env.Stderr, "app-status: %v\n", err)
		return 1
	}
	writeActionResults(gha, env, run, s.summary, "")
	if run.Status == result.RunSuccess {
		return 0
	}
	return 1
}

// actionConfig is what the action's inputs say: the settings both modes share, and whether
// to write the job summary.
type actionConfig struct {
	settings
	summary bool
}

func actionSettings(gha *githubactions.Action) (actionConfig, error) {
	d := defaultSettings()
	c := actionConfig{settings: d, summary: true}
	c.resources = lines(gha.GetInput("resource"))
	c.namespace = cmp.Or(gha.GetInput("namespace"), d.namespace)
	c.revision = gha.GetInput("revision")
	c.clusters = kubeconfig.Input{Clusters: gha.GetInput("clusters"), Kubeconfig: gha.GetInput("kubeconfig")}
	var err error
	if c.timeout, err = durationInput(gha, "timeout", d.timeout); err != nil {
		return c, err
	}
	if c.unschedulableGrace, err = durationInput(gha, "unschedulable-grace", d.unschedulableGrace); err != nil {
		return c, err
	}
	if c.maxParallel, err = intInput(gha, "max-parallel", d.maxParallel); err != nil {
		return c, err
	}
	if c.crashRestarts, err = intInput(gha, "crash-restarts", d.crashRestarts); err != nil {
		return c, err
	}
	if c.failFast, err = boolInput(gha, "fail-fast", d.failFast); err != nil {
		return c, err
	}
	if c.workloads, err = boolInput(gha, "workloads", d.workloads); err != nil {
		return c, err
	}
	if c.summary, err = boolInput(gha, "summary", true); err != nil {
		return c, err
	}
	return c, nil
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
	if secs, err := strconv.Atoi(v); err == nil {
		return time.Duration(secs) * time.Second, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("input %s: %q is not a duration; use e.g. 10m, 90s or 1h30m", name, v)
	}
	return d, nil
}

func intInput(gha *githubactions.Action, name string, def int) (int, error) {
	v := gha.GetInput(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("input %s: %q is not a whole number", name, v)
	}
	return n, nil
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

// actionOutputs are the step outputs action.yml declares, in its order.
func actionOutputs(run result.Run) [][2]string {
	results, err := report.ResultsJSON(run)
	if err != nil {
		results = []byte("[]")
	}
	full, err := report.JSON(run)
	if err != nil {
		full = []byte("{}")
	}
	return [][2]string{
		{"status", string(run.Status)},
		{"results", string(results)},
		{"report", strings.TrimSpace(string(full))},
		{"ready-clusters", string(report.ClusterNamesJSON(run.ReadyClusters))},
		{"failed-clusters", string(report.ClusterNamesJSON(run.FailedClusters))},
		{"duration", formatSeconds(run.DurationMs)},
		{"message", run.Condition.Message},
	}
}

// writeActionResults writes the step outputs, the job summary and the error annotations.
// Without GITHUB_OUTPUT / GITHUB_STEP_SUMMARY (a local run) the file commands are skipped.
func writeActionResults(gha *githubactions.Action, env Env, run result.Run, summary bool, note string) {
	outputs := actionOutputs(run)
	if env.Getenv("GITHUB_OUTPUT") != "" {
		for _, o := range outputs {
			if err := safely(func() { gha.SetOutput(o[0], o[1]) }); err != nil {
				fmt.Fprintf(env.Stderr, "app-status: write output %s: %v\n", o[0], err)
			}
		}
	}
	if summary && env.Getenv("GITHUB_STEP_SUMMARY") != "" {
		md := report.Markdown(run, report.MarkdownOptions{})
		if note != "" {
			md = note + "\n\n" + md
		}
		if err := safely(func() { gha.AddStepSummary(md) }); err != nil {
			fmt.Fprintf(env.Stderr, "app-status: write job summary: %v\n", err)
		}
	}
	for _, a := range report.Annotations(run) {
		_ = safely(func() {
			gha.WithFieldsMap(map[string]string{"title": a.Title}).Errorf("%s", a.Message)
		})
	}
	if note != "" {
		fmt.Fprintln(env.Stdout, "failure: bad input, no cluster was contacted")
		return
	}
	fmt.Fprintf(env.Stdout, "%s: %d of %d clusters ready (%s)\n", run.Status, len(run.ReadyClusters), len(run.Results), formatSeconds(run.DurationMs))
}

func formatSeconds(ms int64) string {
	return strconv.FormatFloat(float64(ms)/1000, 'f', 1, 64) + "s"
}

// safely turns the panics of go-githubactions' file commands (an unwritable GITHUB_OUTPUT)
// into errors, so one failed write never loses the others.
func safely(fn func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			if e, ok := r.(error); ok {
				err = e
				return
			}
			err = errors.New(fmt.Sprint(r))
		}
	}()
	fn()
	return nil
}

func resourceIDs(req verify.Request) []string {
	ids := make([]string, len(req.Resources))
	for i, r := range req.Resources {
		ids[i] = r.ID()
	}
	return ids
}
