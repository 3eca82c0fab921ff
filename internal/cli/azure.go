package cli

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"

	"github.com/org/app-status-action/internal/report"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/sanitize"
)

// inAzurePipelines reports whether the CLI runs in an Azure Pipelines job, whose agent reads
// logging commands (##vso[...]) from the step's output.
func inAzurePipelines(env Env) bool { return strings.EqualFold(env.Getenv("TF_BUILD"), "true") }

// azureCommands writes Azure Pipelines logging commands, one line each, serialised. Text
// from clusters never becomes a command of its own: it is cleaned to one line, its runner
// commands broken (sanitize.Commands, "##vso[" included), and escaped as the agent unescapes
// it (azure-pipelines-task-lib: % as %AZP25, CR as %0D, LF as %0A). The properties are the
// program's own constants.
type azureCommands struct {
	mu sync.Mutex
	w  io.Writer
}

func azureMessage(s string) string {
	return strings.NewReplacer("%", "%AZP25", "\r", "%0D", "\n", "%0A").Replace(s)
}

func (a *azureCommands) command(name, properties, message string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if properties != "" {
		name += " " + properties
	}
	fmt.Fprintf(a.w, "##vso[%s]%s\n", name, message)
}

// setSecret has the agent mask value in every later line of the job's log.
func (a *azureCommands) setSecret(value string) {
	if value != "" {
		a.command("task.setsecret", "", azureMessage(value))
	}
}

// results sets the step's output variables (APP_STATUS, APP_STATUS_READY, APP_STATUS_FAILED,
// APP_STATUS_DURATION: $(step.APP_STATUS) in later jobs' conditions), logs one error per
// cluster that is not Current (at most 10, the last counting the rest, as on GitHub) and
// attaches the markdown summary to the run's Extensions tab.
func (a *azureCommands) results(run result.Run, summaryPath string) {
	variables := []struct{ name, value string }{
		{"APP_STATUS", string(run.Status)},
		{"APP_STATUS_READY", string(report.ClusterNamesJSON(run.ReadyClusters))},
		{"APP_STATUS_FAILED", string(report.ClusterNamesJSON(run.FailedClusters))},
		{"APP_STATUS_DURATION", formatSeconds(run.DurationMs)},
	}
	for _, v := range variables {
		a.command("task.setvariable", "variable="+v.name+";isOutput=true", azureMessage(sanitize.Commands(sanitize.Line(v.value))))
	}
	for _, an := range report.Annotations(run) {
		a.command("task.logissue", "type=error", azureMessage(sanitize.Commands(sanitize.Line(an.Title+": "+an.Message))))
	}
	for _, an := range report.PreflightWarnings(run) {
		a.command("task.logissue", "type=warning", azureMessage(sanitize.Commands(sanitize.Line(an.Title+": "+an.Message))))
	}
	if summaryPath != "" {
		if abs, err := filepath.Abs(summaryPath); err == nil {
			a.command("task.uploadsummary", "", azureMessage(abs))
		}
	}
}
