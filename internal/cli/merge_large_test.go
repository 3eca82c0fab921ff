package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
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
