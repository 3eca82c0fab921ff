package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/shard"
	"github.com/org/app-status-action/internal/testing/testbed"
)

// shardNames names the bed's three clusters so that each of three shards holds one.
func shardNames(t *testing.T) []string {
	t.Helper()
	names := make([]string, 3)
	for i := 0; i < 1000 && (names[0] == "" || names[1] == "" || names[2] == ""); i++ {
		n := fmt.Sprintf("region-%d", i)
		if s := shard.Of(n, 3) - 1; names[s] == "" {
			names[s] = n
		}
	}
	return names
}

// TestShardsAndMerge (issue 24): three shards of the bed's clusters run as separate action
// processes at once, each with its own report-file and a one-line summary; the action's
// merge mode joins them into the results, outputs and summary one run over every cluster
// makes (timings apart). A shard missing, a shard given twice, and reports of two
// revisions each give the stated verdicts.
func TestShardsAndMerge(t *testing.T) {
	b := bed.Get(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := b.Namespace(t)
	for i, c := range b.Clusters {
		app := "web"
		if i == 1 {
			app = "web-broken"
		}
		if _, err := c.DeployApp(ctx, testbed.Kustomization{Name: ns, TargetNamespace: ns}, testbed.Testdata(t, "apps", app), commit); err != nil {
			t.Fatal(err)
		}
	}
	names := shardNames(t)
	var clusters strings.Builder
	env := map[string]string{}
	for i, c := range b.Clusters {
		fmt.Fprintf(&clusters, "%s=env:KC_%d\n", names[i], i)
		env[fmt.Sprintf("KC_%d", i)] = string(c.Kubeconfig)
	}
	inputs := func(extra map[string]string) map[string]string {
		in := map[string]string{"clusters": clusters.String(), "resource": "kustomization/" + ns, "revision": commit[:7], "timeout": "2m"}
		for k, v := range extra {
			in[k] = v
		}
		return in
	}
	legEnv := func(workspace, name string) map[string]string {
		e := map[string]string{"RUNNER_TEMP": workspace, "GITHUB_ACTION": name}
		for k, v := range env {
			e[k] = v
		}
		return e
	}

	reports := t.TempDir()
	shards := make([]actionRun, 3)
	t.Run("shards", func(t *testing.T) {
		for i := range 3 {
			t.Run(fmt.Sprint(i+1), func(t *testing.T) {
				t.Parallel()
				workspace := t.TempDir()
				shards[i] = runAction(t, workspace, inputs(map[string]string{"shard": fmt.Sprintf("%d/3", i+1), "summary": "compact"}), legEnv(workspace, "verify"), "") // a matrix: one step id for every leg
				data, err := os.ReadFile(shards[i].outputs["report-file"])
				if err != nil {
					t.Fatal(err)
				}
				// Into one folder by its own name, as download-artifact's merge-multiple extracts
				// every leg's artifact: the legs' names must differ, or one overwrites another.
				if err := os.WriteFile(filepath.Join(reports, filepath.Base(shards[i].outputs["report-file"])), data, 0o600); err != nil {
					t.Fatal(err)
				}
			})
		}
	})
	// file is the name of shard i's report file, as its leg wrote it.
	file := func(i int) string { return filepath.Base(shards[i-1].outputs["report-file"]) }
	for i, s := range shards {
		if want := fmt.Sprintf("-shard-%d-of-3-", i+1); !strings.Contains(file(i+1), want) {
			t.Errorf("shard %d/3's report-file is %s, want a name with %s: the legs' files must not share a name", i+1, file(i+1), want)
		}
		var got []result.Cluster
		if err := json.Unmarshal([]byte(s.outputs["results"]), &got); err != nil || len(got) != 1 || got[0].Name != names[i] {
			t.Errorf("shard %d/3 verified %v (%v), want %s alone", i+1, got, err, names[i])
		}
		if strings.Count(strings.TrimSpace(s.summary), "\n") != 0 || !strings.Contains(s.summary, fmt.Sprintf("shard %d/3", i+1)) {
			t.Errorf("shard %d/3's summary is not one line naming it:\n%s", i+1, s.summary)
		}
	}

	workspace := t.TempDir()
	one := runAction(t, workspace, inputs(nil), legEnv(workspace, "one"), "")
	workspace = t.TempDir()
	merged := runAction(t, workspace, map[string]string{"merge": filepath.Join(reports, "*.json"), "resource": "kustomization/" + ns}, legEnv(workspace, "merge"), "")
	if merged.exitCode != one.exitCode || one.exitCode != 1 {
		t.Errorf("exit codes: merged %d, one run %d; want 1 both (a cluster failed)\n%s", merged.exitCode, one.exitCode, merged.stdout)
	}
	// The same outputs and summary as one run, apart from what moves between two looks at a
	// cluster: timings, and the broken cluster's pods and events (its ReplicaSet's pods come
	// and go while they fail to pull).
	for _, k := range []string{"status", "ready-clusters", "failed-clusters"} {
		if one.outputs[k] != merged.outputs[k] {
			t.Errorf("output %s: one run %q, the merge %q", k, one.outputs[k], merged.outputs[k])
		}
	}
	outline := func(r actionRun) []string {
		var got []result.Cluster
		if err := json.Unmarshal([]byte(r.outputs["results"]), &got); err != nil {
			t.Fatalf("results: %v\n%s", err, r.stdout)
		}
		var out []string
		for _, c := range got {
			out = append(out, fmt.Sprintf("%s %s %s %d objects", c.Name, c.Verdict, c.Code, len(c.Objects)))
		}
		return out
	}
	if diff := cmp.Diff(outline(one), outline(merged)); diff != "" {
		t.Errorf("results: one run (-) against the merge (+):\n%s", diff)
	}
	volatile := regexp.MustCompile(`[0-9]+(\.[0-9])?s\b|[0-9]+m[0-9]{2}s|web-[0-9a-z]{8,10}-[0-9a-z]{5}|\(×[0-9]+\)`)
	head := func(summary string) string {
		before, _, _ := strings.Cut(summary, "<details>")
		// The timeline's bars and order are timings too: only its clusters are compared.
		if i := strings.Index(before, "**Timeline**"); i >= 0 {
			rest := before[i:]
			intro, table, _ := strings.Cut(rest, "\n\n")
			table, after, _ := strings.Cut(table, "\n\n")
			var clusters []string
			for _, row := range strings.Split(table, "\n")[2:] {
				if cells := strings.Split(row, " | "); len(cells) > 1 && cells[0] != "|  " && cells[0] != "|" {
					clusters = append(clusters, cells[0])
				}
			}
			before = before[:i] + volatile.ReplaceAllString(intro, "~") + "\n\nTIMELINE OF " + strings.Join(clusters, ", ") + "\n\n" + after
		}
		return volatile.ReplaceAllString(before, "~")
	}
	if diff := cmp.Diff(head(one.summary), head(merged.summary)); diff != "" {
		t.Errorf("summary (headline, counts, table): one run (-) against the merge (+):\n%s", diff)
	}
	if strings.Count(one.summary, "<details>") != strings.Count(merged.summary, "<details>") {
		t.Errorf("the merge's summary has %d details blocks, one run's %d", strings.Count(merged.summary, "<details>"), strings.Count(one.summary, "<details>"))
	}

	verdicts := func(r actionRun) map[string]string {
		var got []result.Cluster
		if err := json.Unmarshal([]byte(r.outputs["results"]), &got); err != nil {
			t.Fatalf("results: %v\n%s", err, r.stdout)
		}
		out := map[string]string{}
		for _, c := range got {
			out[c.Name] = string(c.Verdict)
			if c.Verdict == result.VerdictUnknown {
				out[c.Name] += " " + c.Reason
			}
		}
		return out
	}
	missing := t.TempDir()
	for _, i := range []int{1, 3} {
		data, _ := os.ReadFile(filepath.Join(reports, file(i)))
		_ = os.WriteFile(filepath.Join(missing, file(i)), data, 0o600)
	}
	workspace = t.TempDir()
	r := runAction(t, workspace, map[string]string{"merge": filepath.Join(missing, "*.json"), "resource": "kustomization/" + ns}, legEnv(workspace, "m2"), "")
	want := map[string]string{names[0]: "Current", names[1]: "Unknown ShardMissing", names[2]: "Current"}
	if diff := cmp.Diff(want, verdicts(r)); diff != "" || r.exitCode != 1 || r.outputs["status"] != "failure" {
		t.Errorf("a shard missing: exit %d, status %s, verdicts (-want +got):\n%s", r.exitCode, r.outputs["status"], diff)
	}

	twice := filepath.Join(missing, "shard-3-again.json")
	data, _ := os.ReadFile(filepath.Join(reports, file(3)))
	_ = os.WriteFile(twice, data, 0o600)
	data, _ = os.ReadFile(filepath.Join(reports, file(2)))
	_ = os.WriteFile(filepath.Join(missing, file(2)), data, 0o600)
	workspace = t.TempDir()
	r = runAction(t, workspace, map[string]string{"merge": filepath.Join(missing, "*.json"), "resource": "kustomization/" + ns}, legEnv(workspace, "m3"), "")
	want = map[string]string{names[0]: "Current", names[1]: "Failed", names[2]: "Unknown ShardDuplicated"}
	if diff := cmp.Diff(want, verdicts(r)); diff != "" || r.exitCode != 1 {
		t.Errorf("a shard twice: exit %d, verdicts (-want +got):\n%s", r.exitCode, diff)
	}

	// A shard of another revision: the reports are of two runs, which is bad input.
	workspace = t.TempDir()
	other := runAction(t, workspace, inputs(map[string]string{"shard": "3/3", "revision": "deadbeefcafe", "timeout": "5s"}), legEnv(workspace, "other"), "")
	data, _ = os.ReadFile(other.outputs["report-file"])
	_ = os.Remove(twice)
	_ = os.WriteFile(filepath.Join(missing, file(3)), data, 0o600)
	workspace = t.TempDir()
	r = runAction(t, workspace, map[string]string{"merge": filepath.Join(missing, "*.json"), "resource": "kustomization/" + ns}, legEnv(workspace, "m4"), "")
	if r.exitCode != 1 || r.outputs["status"] != "failure" || !strings.Contains(r.summary, "different runs") || !strings.Contains(r.stdout, "::error title=app-status bad input::") {
		t.Errorf("two revisions: exit %d, status %s; want a failure and the bad input named\n%s\n%s", r.exitCode, r.outputs["status"], r.summary, r.stdout)
	}
}
