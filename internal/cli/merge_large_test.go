package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/org/app-status-action/internal/merge"
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

// denseReport is a report at the density a merge accepts at most (one JSON object per 48
// bytes, merge's bytesPerObject: here one per 51), in clusters of 8000 objects, of about size
// bytes, and the count of JSON values it holds.
func denseReport(size int) ([]byte, int) {
	var names, results bytes.Buffer
	values := 0
	for i := 0; results.Len() < size; i++ {
		if i > 0 {
			names.WriteString(",")
			results.WriteString(",")
		}
		fmt.Fprintf(&names, `"c%04d"`, i)
		fmt.Fprintf(&results, `{"schemaVersion":1,"cluster":"c%04d","verdict":"Failed","flux":[],"objects":[`, i)
		for j := range 8000 {
			if j > 0 {
				results.WriteString(",")
			}
			fmt.Fprintf(&results, `{"id":"D/a/%07d","kind":"D","status":"Current"}`, j)
		}
		results.WriteString("]}")
		values += 8002
	}
	doc := fmt.Sprintf(`{"schemaVersion":1,"status":"failure","resources":["Kustomization/flux-system/app"],"readyClusters":[],"failedClusters":[%s],"results":[%s]}`,
		names.String(), results.String())
	return []byte(doc), values
}

// peakHeap runs f and returns the most heap in use above what was in use before, sampled
// every millisecond (HeapAlloc: what is live and the garbage not yet collected; the process's
// resident memory is about this and the runtime's own).
func peakHeap(f func()) uint64 {
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var peak atomic.Uint64
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		var m runtime.MemStats
		for {
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > peak.Load() {
				peak.Store(m.HeapAlloc)
			}
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	f()
	close(done)
	<-stopped
	return max(peak.Load(), before.HeapAlloc) - before.HeapAlloc
}

// mergeMemoryBound is the most memory a merge takes whatever its reports hold, as
// docs/shards.md states it: its memory follows the JSON values it decodes, which
// merge.MaxValues bounds.
const mergeMemoryBound = 6 << 30

// TestMergePeakMemory: a merge of a report at the density limit (one JSON object per 51 bytes,
// where a report of app-status has one per 200 or more) takes about 12 times the report's
// size at its peak, the CLI's and the action's, outputs included: about 600 bytes per JSON
// value. At merge.MaxValues values (a 384 MiB report of that density, the largest a merge
// decodes) that is within mergeMemoryBound, under a 7 GB runner's memory; the report's size
// alone is no bound of it.
func TestMergePeakMemory(t *testing.T) {
	data, values := denseReport(16 << 20)
	path := filepath.Join(t.TempDir(), "dense.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	size := len(data)
	for _, mode := range []string{"merge -o json", "action"} {
		f := newFakeEnv(t, map[string]string{"INPUT_MERGE": path, "INPUT_MERGE-FOREIGN-REPORTS": "true"})
		f.vars["RUNNER_TEMP"] = t.TempDir()
		env := f.env()
		env.Stdout = io.Discard
		args := []string{"action"}
		if mode != "action" {
			env = OSEnv()
			env.Stdout, env.Stderr, env.Getenv = io.Discard, io.Discard, func(string) string { return "" }
			args = []string{"merge", "-o", "json", path}
		}
		var code int
		peak := peakHeap(func() { code = Run(context.Background(), args, env) })
		if code != 1 {
			t.Errorf("%s: exit %d, want 1 (a failed cluster merged)\n%s", mode, code, f.stdout.String())
		}
		perValue := float64(peak) / float64(values)
		atLimit := perValue * float64(merge.MaxValues)
		t.Logf("%s: a report of %d MiB, %d values, peaked at %d MiB of heap (%.1f times its size, %.0f bytes per value): %.1f GiB at %d values",
			mode, size>>20, values, peak>>20, float64(peak)/float64(size), perValue, atLimit/(1<<30), merge.MaxValues)
		if atLimit > mergeMemoryBound {
			t.Errorf("%s: %.1f GiB at merge.MaxValues values, want at most %d GiB", mode, atLimit/(1<<30), mergeMemoryBound>>30)
		}
	}
}
