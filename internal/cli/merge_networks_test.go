package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/org/app-status-action/internal/filecommand"
	"github.com/org/app-status-action/internal/merge"
	"github.com/org/app-status-action/internal/report"
	"github.com/org/app-status-action/internal/result"
)

// writeReport writes run as a leg's report file at path.
func writeReport(t *testing.T, path string, run result.Run) {
	t.Helper()
	data, err := json.Marshal(run)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestMergeActionNetworks: the action's merge mode over the reports of legs split by network
// (no shard), with the whole fleet's clusters lines, as docs/shards.md's example writes them
// (env: variables that are not set: only the names are read). A cluster no report covers is
// Unknown (ClusterMissing) and fails the run; the report-file of a leg whose job was
// cancelled (its clusters' verdicts without their objects) merges, and the merged report
// says it was cut.
func TestMergeActionNetworks(t *testing.T) {
	t.Parallel()
	const rev = "main@sha1:a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
	resources := []string{"Kustomization/flux-system/app"}
	dir := t.TempDir()
	write := func(name string, run result.Run) { writeReport(t, filepath.Join(dir, name), run) }
	current := func(name string) result.Cluster {
		return result.Cluster{Name: name, Verdict: result.VerdictCurrent, Flux: []result.FluxObject{},
			Objects: []result.Object{{ID: "Deployment/apps/web", Kind: "Deployment", Namespace: "apps", Name: "web", Status: result.ObjectCurrent}}}
	}
	eu := result.NewRun(resources, rev, []result.Cluster{current("prod-eu-1"), current("prod-eu-2")}, time.Second)
	eu.Version = "v1.2.0"
	write("app-status-eu.json", eu)
	// The US leg's job was cancelled while prod-us-2 was still waiting.
	cancelled := current("prod-us-2")
	cancelled.Verdict, cancelled.Reason, cancelled.Message = result.VerdictCancelled, "Cancelled", "the job was cancelled"
	us := result.NewRun(resources, rev, []result.Cluster{current("prod-us-1"), cancelled}, time.Second)
	us.Version = "v1.3.0 ##[error]forged\n::error::forged" // a report's text is untrusted
	write("app-status-us.json", report.Essentials(us))

	f := newFakeEnv(t, map[string]string{
		"INPUT_RESOURCE": "Kustomization/app",
		"INPUT_MERGE":    filepath.Join(dir, "*.json"),
		"INPUT_CLUSTERS": "prod-eu-1=env:UNUSED\nprod-eu-2=env:UNUSED\nprod-us-1=env:UNUSED\nprod-us-2=env:UNUSED\nprod-ap-1=env:UNUSED",
		"RUNNER_TEMP":    t.TempDir(),
	})
	if code := Run(context.Background(), []string{"action"}, f.env()); code != 1 {
		t.Errorf("Run() = %d, want 1 (a cluster no report covers, one cancelled)\n%s", code, f.stdout.String())
	}
	outputs, err := filecommand.ParseOutputs(f.file(t, f.output))
	if err != nil {
		t.Fatalf("the runner could not read the outputs: %v", err)
	}
	var got []result.Cluster
	if err := json.Unmarshal([]byte(outputs["results"]), &got); err != nil {
		t.Fatalf("results: %v\n%s", err, outputs["results"])
	}
	verdicts := map[string]string{}
	for _, c := range got {
		verdicts[c.Name] = strings.TrimSpace(string(c.Verdict) + " " + c.Reason)
	}
	want := map[string]string{
		"prod-ap-1": "Unknown ClusterMissing", "prod-eu-1": "Current", "prod-eu-2": "Current",
		"prod-us-1": "Current", "prod-us-2": "Cancelled Cancelled",
	}
	if diff := cmp.Diff(want, verdicts); diff != "" {
		t.Errorf("verdicts (-want +got):\n%s", diff)
	}
	if outputs["status"] != "failure" || outputs["ready-clusters"] != `["prod-eu-1","prod-eu-2","prod-us-1"]` {
		t.Errorf("status %q, ready %q; want failure and the three Current clusters", outputs["status"], outputs["ready-clusters"])
	}
	log := f.stdout.String()
	if !strings.Contains(log, "::warning title=app-status legs of several versions::the reports were written by different versions of app-status: v1.2.0 (") {
		t.Errorf("no warning that the legs ran two versions:\n%s", log)
	}
	for _, line := range strings.Split(log, "\n") {
		if strings.Contains(line, "##[error]") || strings.HasPrefix(line, "::error::forged") {
			t.Errorf("a report's version became a runner command: %q", line)
		}
	}
	var merged result.Run
	data, err := os.ReadFile(outputs["report-file"])
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &merged); err != nil {
		t.Fatal(err)
	}
	if !merged.Truncated || len(merged.Merged) != 2 {
		t.Errorf("the merged report-file: truncated %v, merged %v; want cut (a leg was cancelled) and both reports named", merged.Truncated, merged.Merged)
	}
}

// TestMergeNoReport: a merge whose pattern matches no file (no leg uploaded, or the download
// went elsewhere) is bad input that says so, never a pass over no clusters.
func TestMergeNoReport(t *testing.T) {
	t.Parallel()
	pattern := filepath.Join(t.TempDir(), "reports", "*.json")
	f := newFakeEnv(t, map[string]string{"INPUT_RESOURCE": "Kustomization/app", "INPUT_MERGE": pattern, "RUNNER_TEMP": t.TempDir()})
	if code := Run(context.Background(), []string{"action"}, f.env()); code != 1 {
		t.Errorf("action: Run() = %d, want 1", code)
	}
	outputs, err := filecommand.ParseOutputs(f.file(t, f.output))
	if err != nil {
		t.Fatal(err)
	}
	if log := f.stdout.String(); outputs["status"] != "failure" || !strings.Contains(log, "::error title=app-status bad input::") || !strings.Contains(log, "matches no file") {
		t.Errorf("action: status %q; want a failure and the bad input named:\n%s", outputs["status"], log)
	}
	cli := newFakeEnv(t, nil)
	if code := Run(context.Background(), []string{"merge", pattern}, cli.env()); code != 2 || !strings.Contains(cli.stderr.String(), "matches no file") {
		t.Errorf("merge: Run() = %d, want 2 saying the pattern matches no file\n%s", code, cli.stderr.String())
	}
}

// TestMergeBadFleetLine: in merge mode the clusters lines are read as verify reads them (only
// their names are used): a line that is not name=source is bad input, not a cluster dropped
// from the coverage check without a word. As in verify mode, the log names the line, but the
// report file, the JUnit report and the outputs, which an artifact carries further, hold
// nothing typed into an input.
func TestMergeBadFleetLine(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ name, line, wantLog, secret string }{
		{"colon for equals", "prod-us-1: env:UNUSED", "write prod-us-1=env:UNUSED, with '=' between the cluster name and the source", ""},
		{"a password where a variable belongs", "prod-us-1=env:KC hunter2!Pw", "env: needs an environment variable name", "hunter2"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			writeReport(t, filepath.Join(dir, "eu.json"), result.NewRun([]string{"Kustomization/flux-system/app"}, "main@sha1:a1b2c3d4", []result.Cluster{{Name: "prod-eu-1", Verdict: result.VerdictCurrent}}, time.Second))
			temp := t.TempDir()
			f := newFakeEnv(t, map[string]string{
				"INPUT_RESOURCE": "Kustomization/app", "INPUT_MERGE": filepath.Join(dir, "*.json"), "RUNNER_TEMP": temp,
				"INPUT_CLUSTERS": "prod-eu-1=env:UNUSED\n" + tt.line,
			})
			if code := Run(context.Background(), []string{"action"}, f.env()); code != 1 {
				t.Errorf("Run() = %d, want 1", code)
			}
			if log := f.stdout.String(); !strings.Contains(log, "::error title=app-status bad input::") || !strings.Contains(log, tt.wantLog) {
				t.Errorf("the bad clusters line is not named as bad input:\n%s", log)
			}
			if tt.secret == "" {
				return
			}
			carried := f.file(t, f.output)
			files, err := filepath.Glob(filepath.Join(temp, "*"))
			if err != nil || len(files) == 0 {
				t.Fatalf("no report file under RUNNER_TEMP (%v)", err)
			}
			for _, name := range files {
				carried += f.file(t, name)
			}
			if strings.Contains(carried, tt.secret) {
				t.Errorf("the outputs or a report file hold what was typed into the input (%q)", tt.secret)
			}
		})
	}
}

// TestMergeCLIVersionsWarning: the CLI merge warns on stderr when the reports were written by
// several versions of app-status, and still merges them.
func TestMergeCLIVersionsWarning(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var paths []string
	for _, leg := range []struct{ cluster, version string }{{"prod-eu-1", "v1.2.0"}, {"prod-us-1", "v1.3.0"}} {
		run := result.NewRun([]string{"Kustomization/flux-system/app"}, "main@sha1:a1b2c3d4", []result.Cluster{{Name: leg.cluster, Verdict: result.VerdictCurrent}}, time.Second)
		run.Version = leg.version
		path := filepath.Join(dir, leg.cluster+".json")
		writeReport(t, path, run)
		paths = append(paths, path)
	}
	f := newFakeEnv(t, nil)
	if code := Run(context.Background(), append([]string{"merge"}, paths...), f.env()); code != 0 {
		t.Errorf("Run() = %d, want 0 (both Current)\n%s", code, f.stderr.String())
	}
	if !strings.Contains(f.stderr.String(), "app-status merge: warning: the reports were written by different versions of app-status: v1.2.0 (") {
		t.Errorf("no warning on stderr:\n%s", f.stderr.String())
	}
}

// TestMergeReportTooLarge: a report above merge.MaxReportBytes (a sparse file: no disk) is
// refused before it is read, with what to do about it.
func TestMergeReportTooLarge(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "huge.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(merge.MaxReportBytes + 1); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	cli := newFakeEnv(t, nil)
	if code := Run(context.Background(), []string{"merge", path}, cli.env()); code != 2 || !strings.Contains(cli.stderr.String(), "more than the 1024 MiB a report may have: "+merge.TooLargeHint) {
		t.Errorf("Run() = %d, want 2 with the bound and the hint\n%s", code, cli.stderr.String())
	}
}
