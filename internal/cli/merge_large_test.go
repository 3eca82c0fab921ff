package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/shard"
)

// TestMergeLargeReports: a shard's report is as large as its clusters make it (500 clusters of
// 200 objects is about 16 MiB), far above what a kubeconfig may be; the merge reads it.
func TestMergeLargeReports(t *testing.T) {
	t.Parallel()
	const count = 2
	var names []string
	for i := range 400 {
		names = append(names, fmt.Sprintf("cluster-%03d", i))
	}
	dir := t.TempDir()
	evidence := strings.Repeat("x", 30_000)
	var paths []string
	for index := 1; index <= count; index++ {
		var clusters []result.Cluster
		for _, n := range names {
			if shard.Of(n, count) == index {
				clusters = append(clusters, result.Cluster{Name: n, Verdict: result.VerdictFailed, Code: "crash-loop", Message: evidence, DurationMs: 1000})
			}
		}
		run := result.NewRun([]string{"Kustomization/flux-system/app"}, "a1b2c3d", clusters, time.Second)
		start := time.Date(2026, 11, 25, 9, 0, index, 0, time.UTC)
		run.StartedAt, run.EndedAt = start.Format(time.RFC3339Nano), start.Add(2*time.Second).Format(time.RFC3339Nano)
		run.Shard = &result.Shard{Index: index, Count: count, Clusters: names, ClustersHash: shard.ListHash(names)}
		data, err := json.Marshal(run)
		if err != nil {
			t.Fatal(err)
		}
		if len(data) < 5<<20 {
			t.Fatalf("report of %d bytes: the test needs one above 4 MiB", len(data))
		}
		path := filepath.Join(dir, fmt.Sprintf("shard-%d.json", index))
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, path)
	}
	// The real environment's file reading, which bounds kubeconfigs at 4 MiB.
	var stdout, stderr bytes.Buffer
	env := OSEnv()
	env.Stdout, env.Stderr, env.Getenv = &stdout, &stderr, func(string) string { return "" }
	code := Run(context.Background(), append([]string{"merge", "-o", "json"}, paths...), env)
	var merged result.Run
	if err := json.Unmarshal(stdout.Bytes(), &merged); err != nil || code != 1 || len(merged.Results) != len(names) {
		t.Fatalf("exit %d, %d clusters merged (%v), want 1 and %d\n%s", code, len(merged.Results), err, len(names), stderr.String())
	}
}

// TestMergeWeightyReport: a merge of a report built to weigh once decoded (9 MB of {} in its
// results decoded into 1.5 GiB of heap) fails at once, naming the bound, and takes about the
// file's size in memory.
func TestMergeWeightyReport(t *testing.T) {
	var b bytes.Buffer
	b.WriteString(`{"schemaVersion":1,"resources":["Kustomization/flux-system/app"],"readyClusters":[],"failedClusters":[],"results":[{}`)
	for b.Len() < 9<<20 {
		b.WriteString(",{}")
	}
	b.WriteString("]}")
	path := filepath.Join(t.TempDir(), "weighty.json")
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	size := b.Len()
	b = bytes.Buffer{}
	cli := newFakeEnv(t, nil)
	env := OSEnv()
	env.Stdout, env.Stderr, env.Getenv = &cli.stdout, &cli.stderr, func(string) string { return "" }
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	code := Run(context.Background(), []string{"merge", path}, env)
	took := time.Since(start)
	runtime.ReadMemStats(&after)
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("a report of %d bytes refused in %s, %d MiB allocated", size, took.Round(time.Millisecond), allocated>>20)
	if code != 2 || !strings.Contains(cli.stderr.String(), "weighty.json is not a report of app-status: it holds 3145691 JSON objects") {
		t.Errorf("Run() = %d, want 2 naming the bound\n%s", code, cli.stderr.String())
	}
	if allocated > 2*uint64(size) {
		t.Errorf("%d MiB allocated for a report of %d MiB, want no more than twice its size", allocated>>20, size>>20)
	}
}
