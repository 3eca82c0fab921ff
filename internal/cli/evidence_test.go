package cli

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/org/app-status-action/internal/kubeconfig"
	"github.com/org/app-status-action/internal/report"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/shard"
)

// The text a failing container's log and a Warning event hold, in a failed cluster's result.
const (
	loggedText = "LOGGED-connection-string-of-the-app"
	eventText  = "EVENT-mounting-secret-payroll-db"
)

// evidenceRun is a run of one cluster whose Deployment crashes, with its logs and events.
func evidenceRun() result.Run {
	failure := &result.Failure{Code: result.CodeCrashLoop, Reason: "CrashLoopBackOff", Message: "back-off restarting failed container",
		Pod: "web-1", Container: "web", RestartCount: 5, Logs: "starting\n" + loggedText + "\n",
		Events: []result.Event{{Object: "Pod/app/web-1", Reason: "FailedMount", Message: eventText, Count: 2}}}
	c := result.Cluster{Name: "prod-eu-1", Verdict: result.VerdictFailed, Code: result.CodeCrashLoop, Message: "crash-loop: Deployment/app/web", Flux: []result.FluxObject{},
		Objects: []result.Object{{ID: "Deployment/app/web", Kind: "Deployment", Namespace: "app", Name: "web", Status: result.ObjectFailed, Failure: failure}}}
	return result.NewRun([]string{"Kustomization/flux-system/app"}, "", []result.Cluster{c}, time.Second)
}

// published is every byte the action left for others to read: its log (annotations
// included), the job summary, the outputs, and every file it wrote (the report file, the
// JUnit report).
func published(t *testing.T, f *fakeEnv, dirs ...string) string {
	t.Helper()
	all := f.stdout.String() + f.stderr.String() + f.file(t, f.summary) + f.file(t, f.output)
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := os.ReadFile(path)
			all += string(data)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return all
}

// TestEvidence: input evidence (and --evidence) leaves the containers' logs (no-logs), and the
// events too (none), out of every published output: in verify mode (cleanRun, which every
// output is written from), in the action's merge mode (log, annotations, summary, outputs,
// report file, JUnit report) and in app-status merge. With full, the same text is there: the
// test sees it when it is published.
func TestEvidence(t *testing.T) {
	t.Parallel()
	tests := []struct {
		evidence        string
		logs, events    bool
		wantErr, wantOK bool
	}{
		{evidence: "", logs: true, events: true, wantOK: true},
		{evidence: "full", logs: true, events: true, wantOK: true},
		{evidence: "no-logs", events: true, wantOK: true},
		{evidence: "None", wantOK: true},
		{evidence: "logs", wantErr: true},
	}
	for _, tt := range tests {
		t.Run("evidence "+tt.evidence, func(t *testing.T) {
			t.Parallel()
			check := func(where, text string) {
				t.Helper()
				if got := strings.Contains(text, loggedText); got != tt.logs {
					t.Errorf("%s: holds the container's log %v, want %v", where, got, tt.logs)
				}
				if got := strings.Contains(text, eventText); got != tt.events {
					t.Errorf("%s: holds the event's text %v, want %v", where, got, tt.events)
				}
			}
			e, err := report.ParseEvidence(tt.evidence)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ParseEvidence(%q) = %v, want an error %v", tt.evidence, err, tt.wantErr)
			}
			if err == nil {
				data, err := report.JSON(cleanRun(evidenceRun(), &kubeconfig.Secrets{}, func() bool { return false }, e))
				if err != nil {
					t.Fatal(err)
				}
				check("verify's result", string(data))
			}

			dir := t.TempDir()
			writeReport(t, filepath.Join(dir, "app-status-eu.json"), stampRun(evidenceRun(), time.Unix(1700000000, 0), time.Unix(1700000001, 0), &result.Origin{CI: "github", Repository: "org/app", RunID: "7001", Attempt: 1}, shard.Shard{}, nil))
			temp, workspace := t.TempDir(), t.TempDir()
			f := newFakeEnv(t, map[string]string{
				"INPUT_RESOURCE": "Kustomization/app", "INPUT_MERGE": filepath.Join(dir, "*.json"), "INPUT_CLUSTERS": "prod-eu-1=env:UNUSED",
				"INPUT_EVIDENCE": tt.evidence, "RUNNER_TEMP": temp,
				"GITHUB_REPOSITORY": "org/app", "GITHUB_RUN_ID": "7001", "GITHUB_RUN_ATTEMPT": "1",
			})
			f.vars["GITHUB_WORKSPACE"] = workspace
			code := Run(context.Background(), []string{"action"}, f.env())
			log := f.stdout.String()
			if tt.wantErr {
				if code != 1 || !strings.Contains(log, "input evidence") {
					t.Errorf("action: Run() = %d, want 1 and the input named:\n%s", code, log)
				}
				return
			}
			if code != 1 || !strings.Contains(log, "::error title=") {
				t.Errorf("action: Run() = %d, want 1 (a failed cluster) with its annotation:\n%s", code, log)
			}
			check("the action's merge", published(t, f, temp, workspace))

			cli := newFakeEnv(t, map[string]string{"GITHUB_REPOSITORY": "org/app", "GITHUB_RUN_ID": "7001", "GITHUB_RUN_ATTEMPT": "1"})
			for _, output := range []string{"json", "text", "markdown", "junit"} {
				cli.stdout.Reset()
				if code := Run(context.Background(), []string{"merge", "--evidence", tt.evidence, "-o", output, filepath.Join(dir, "*.json")}, cli.env()); code != 1 {
					t.Errorf("app-status merge -o %s: Run() = %d, want 1 (a failed cluster)\n%s", output, code, cli.stderr.String())
				}
				check("app-status merge -o "+output, cli.stdout.String())
			}
		})
	}
}
