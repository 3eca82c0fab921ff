package main

// bench shards: the sharded-fleet benchmark behind `make bench-shards`, also run by `make
// bench`. 10,000 fake API servers (internal/testing/fakeapi, the fleet benchmark's mix: a
// tenth hung, a twentieth throttling, a twentieth failing, 200 objects each) are verified
// twice: in 20 shards (`--shard i/20`) run as concurrent processes, as the legs of a matrix
// would be, then joined by `app-status merge`; and in one process. It reports the wall time,
// each shard's peak memory and CPU, the merge's time and memory, and whether the merge gives
// every cluster the verdict the single run gave it. It writes docs/shard-benchmark.md.
//
// One process may hold 20,000 files here, too few for 10,000 listeners and their
// connections, so the servers live in helper processes (`bench fleet-servers`, 2,000 each).
// Each kubeconfig carries its own token over TLS: making 10,000 RSA keys would take longer
// than the runs (the fleet benchmark measures client certificates at 1000 clusters).

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/org/app-status-action/internal/testing/fakeapi"
)

type shardsConfig struct {
	appStatus, out   string
	clusters, shards int
	perHost, objects int
	timeout, runCap  time.Duration
	args             []string
}

func parseShardsConfig(args []string) (shardsConfig, error) {
	c := shardsConfig{args: args}
	fs := flag.NewFlagSet("bench shards", flag.ContinueOnError)
	fs.StringVar(&c.appStatus, "app-status", "bin/app-status", "the app-status binary to measure (make build)")
	fs.StringVar(&c.out, "out", "docs", "folder for shard-benchmark.md")
	fs.IntVar(&c.clusters, "clusters", 10000, "clusters in the fleet")
	fs.IntVar(&c.shards, "shards", 20, "shards, run as concurrent processes")
	fs.IntVar(&c.perHost, "servers-per-process", 2000, "fake API servers per helper process (one process may hold 20,000 files here)")
	fs.IntVar(&c.objects, "objects", 200, "objects in each cluster's app")
	fs.DurationVar(&c.timeout, "timeout", 5*time.Minute, "the verify timeout: when hung clusters get their Timeout verdict; long enough for the healthy ones on 2 cores")
	fs.DurationVar(&c.runCap, "run-cap", 10*time.Minute, "how long one run may take before it is stopped")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if c.clusters < 20 || c.shards < 1 || c.perHost < 1 || c.objects < 4 {
		return c, errors.New("--clusters must be at least 20, --shards and --servers-per-process at least 1, --objects at least 4")
	}
	return c, nil
}

// plannedCluster is one cluster of a fleet: its name and how its server answers.
type plannedCluster struct {
	name      string
	behaviour fakeapi.Behaviour
}

// fleetPlan is the fleet benchmarks' mix for n clusters: with 10 or more, a tenth hang, a
// twentieth throttle and a twentieth fail; they come first, the healthy ones last (the order in
// which an engine that starts clusters in turn would reach them).
func fleetPlan(n int) []plannedCluster {
	hung, throttled, failing := 0, 0, 0
	if n >= 10 {
		hung, throttled, failing = n/10, n/20, n/20
	}
	var plan []plannedCluster
	for _, step := range []struct {
		kind  string
		b     fakeapi.Behaviour
		count int
	}{{"hung", fakeapi.Hang, hung}, {"throttled", fakeapi.Throttle, throttled}, {"failing", fakeapi.Fail, failing}, {"healthy", fakeapi.Healthy, n - hung - throttled - failing}} {
		for i := range step.count {
			plan = append(plan, plannedCluster{fmt.Sprintf("%s-%05d", step.kind, i), step.b})
		}
	}
	return plan
}

// fleetServers is the helper process: it serves clusters [from, to) of an n-cluster plan,
// writes their kubeconfigs into dir, prints their clusters-file lines and "ready" on stdout,
// and serves until its stdin closes.
func fleetServers(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("bench fleet-servers", flag.ContinueOnError)
	n := fs.Int("clusters", 0, "clusters in the whole fleet")
	from := fs.Int("from", 0, "first cluster served")
	to := fs.Int("to", 0, "cluster after the last served")
	objects := fs.Int("objects", 200, "objects in each cluster's app")
	dir := fs.String("dir", "", "folder for the kubeconfigs")
	credentials := fs.String("credentials", credsToken, "what each kubeconfig carries: "+credsCert+", "+credsToken+" or "+credsSharedToken)
	if err := fs.Parse(args); err != nil {
		return err
	}
	plan := fleetPlan(*n)
	if *from < 0 || *to > len(plan) || *from >= *to || *dir == "" {
		return fmt.Errorf("bad range [%d, %d) of %d clusters, or no --dir", *from, *to, len(plan))
	}
	creds, err := newFleetCredentials(*credentials, *to-*from)
	if err != nil {
		return err
	}
	resources, objs := fakeapi.App("app", fleetRevision, *objects)
	out := bufio.NewWriter(os.Stdout)
	for i, c := range plan[*from:*to] {
		s := fakeapi.Start(fakeapi.Options{Behaviour: c.behaviour, Resources: resources, Objects: objs, RetryAfter: 30, TLS: creds.serverTLS})
		defer s.Close()
		path := filepath.Join(*dir, c.name+".yaml")
		if err := os.WriteFile(path, []byte(creds.kubeconfig(i, s.URL())), 0o600); err != nil {
			return err
		}
		fmt.Fprintf(out, "%s=file:%s\n", c.name, path)
	}
	fmt.Fprintln(out, "ready")
	if err := out.Flush(); err != nil {
		return err
	}
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
	}
	return nil
}

// shardedFleet is the fleet's servers, in helper processes.
type shardedFleet struct {
	hosts        []*exec.Cmd
	stdins       []io.Closer
	plan         []plannedCluster
	clustersFile string
}

func startShardedFleet(ctx context.Context, cfg shardsConfig, dir string) (*shardedFleet, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	f := &shardedFleet{plan: fleetPlan(cfg.clusters)}
	var lines strings.Builder
	for from := 0; from < cfg.clusters; from += cfg.perHost {
		to := min(from+cfg.perHost, cfg.clusters)
		cmd := exec.CommandContext(ctx, self, "fleet-servers", "--clusters", fmt.Sprint(cfg.clusters), "--from", fmt.Sprint(from), "--to", fmt.Sprint(to),
			"--objects", fmt.Sprint(cfg.objects), "--dir", dir)
		cmd.Stderr = os.Stderr
		stdin, err := cmd.StdinPipe()
		if err != nil {
			f.close()
			return nil, err
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			f.close()
			return nil, err
		}
		if err := cmd.Start(); err != nil {
			f.close()
			return nil, err
		}
		f.hosts, f.stdins = append(f.hosts, cmd), append(f.stdins, stdin)
		sc := bufio.NewScanner(stdout)
		ready := false
		for sc.Scan() {
			if sc.Text() == "ready" {
				ready = true
				break
			}
			lines.WriteString(sc.Text() + "\n")
		}
		if !ready {
			f.close()
			return nil, fmt.Errorf("the servers of clusters %d to %d did not start", from, to)
		}
	}
	f.clustersFile = filepath.Join(dir, "clusters.txt")
	if err := os.WriteFile(f.clustersFile, []byte(lines.String()), 0o600); err != nil {
		f.close()
		return nil, err
	}
	return f, nil
}

func (f *shardedFleet) close() {
	for _, s := range f.stdins {
		_ = s.Close()
	}
	for _, h := range f.hosts {
		_ = h.Wait()
	}
}

// procSample is one process's rusage.
type procSample struct {
	wall, cpu time.Duration
	rss       int64
	code      int
}

// runMeasured runs argv through the rusage program, its stdout discarded.
func runMeasured(ctx context.Context, rusage string, runCap time.Duration, argv ...string) (procSample, error) {
	capped, cancel := context.WithTimeout(ctx, runCap)
	defer cancel()
	cmd := exec.CommandContext(capped, rusage, argv...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if capped.Err() != nil && ctx.Err() == nil {
		return procSample{}, fmt.Errorf("%s did not end within %s", filepath.Base(argv[0]), runCap)
	}
	var s procSample
	var wall, user, sys int64
	if _, serr := fmt.Sscanf(stdout.String(), "rusage %d %d %d %d %d", &wall, &s.rss, &s.code, &user, &sys); serr != nil {
		return s, fmt.Errorf("%s: %w, %w: %s", strings.Join(argv, " "), err, serr, lastLines(stderr.String(), 10))
	}
	s.wall, s.cpu = time.Duration(wall), time.Duration(user+sys)
	return s, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// verdicts reads a JSON report's verdicts, by cluster ("Current", or the verdict and code),
// and how many healthy clusters that were not Current said the runner was short of CPU.
func verdicts(data []byte, plan []plannedCluster) (map[string]string, int, error) {
	var run struct {
		Results []struct {
			Name    string `json:"cluster"`
			Verdict string `json:"verdict"`
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"results"`
	}
	if err := json.Unmarshal(data, &run); err != nil {
		return nil, 0, fmt.Errorf("read the report: %w", err)
	}
	healthy := map[string]bool{}
	for _, c := range plan {
		healthy[c.name] = c.behaviour == fakeapi.Healthy
	}
	got, starved := map[string]string{}, 0
	for _, c := range run.Results {
		got[c.Name] = strings.TrimSuffix(c.Verdict+" "+c.Code, " ")
		if healthy[c.Name] && c.Verdict != "Current" && strings.Contains(c.Message, "short of CPU") {
			starved++
		}
	}
	return got, starved, nil
}

// shardsResult is what the benchmark measured.
type shardsResult struct {
	shards        []procSample
	shardsWall    time.Duration // from the first shard's start to the last one's end
	merge         procSample
	merged        map[string]string
	mergedStarved int
	union         map[string]string // every shard's verdicts, as its report has them
	single        procSample
	singleV       map[string]string
	singleStarved int
}

func shards(ctx context.Context, args []string) error {
	cfg, err := parseShardsConfig(args)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "app-status-shards-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	rusage, err := buildRusage(ctx, dir)
	if err != nil {
		return err
	}
	began := time.Now()
	f, err := startShardedFleet(ctx, cfg, dir)
	if err != nil {
		return err
	}
	defer f.close()
	logf("%d clusters served by %d processes, started in %s", cfg.clusters, len(f.hosts), time.Since(began).Round(time.Millisecond))
	verify := func(extra ...string) []string {
		return append([]string{cfg.appStatus, "verify", "--clusters-file", f.clustersFile, "--resource", "kustomization/app",
			"--revision", "a1b2c3d", "--timeout", cfg.timeout.String(), "--quiet", "-o", "json"}, extra...)
	}
	var r shardsResult
	// The shards, all at once, as a matrix's legs.
	r.shards = make([]procSample, cfg.shards)
	reports := make([]string, cfg.shards)
	errs := make([]error, cfg.shards)
	start := time.Now()
	var wg sync.WaitGroup
	for i := range cfg.shards {
		reports[i] = filepath.Join(dir, fmt.Sprintf("shard-%02d.json", i+1))
		wg.Go(func() {
			r.shards[i], errs[i] = runMeasured(ctx, rusage, cfg.runCap, verify("--shard", fmt.Sprintf("%d/%d", i+1, cfg.shards), "--json-file", reports[i])...)
		})
	}
	wg.Wait()
	r.shardsWall = time.Since(start)
	if err := errors.Join(errs...); err != nil {
		return err
	}
	logf("%d shards: %s", cfg.shards, r.shardsWall.Round(time.Millisecond))
	// The merge, measured, then again for its report.
	mergeArgs := append([]string{cfg.appStatus, "merge", "-o", "json"}, reports...)
	if r.merge, err = runMeasured(ctx, rusage, cfg.runCap, mergeArgs...); err != nil {
		return err
	}
	merged, err := exec.CommandContext(ctx, mergeArgs[0], mergeArgs[1:]...).Output()
	if err != nil && len(merged) == 0 {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return fmt.Errorf("merge: %w: %s", err, lastLines(string(exit.Stderr), 10))
		}
		return fmt.Errorf("merge: %w", err)
	}
	if r.merged, r.mergedStarved, err = verdicts(merged, f.plan); err != nil {
		return err
	}
	r.union = map[string]string{}
	for _, path := range reports {
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		v, _, err := verdicts(data, f.plan)
		if err != nil {
			return err
		}
		for name, verdict := range v {
			if _, twice := r.union[name]; twice {
				return fmt.Errorf("%s is in two shards' reports", name)
			}
			r.union[name] = verdict
		}
	}
	logf("merge: %s, %d MiB", r.merge.wall.Round(time.Millisecond), r.merge.rss>>20)
	// The same fleet in one process.
	single := filepath.Join(dir, "single.json")
	if r.single, err = runMeasured(ctx, rusage, cfg.runCap, verify("--json-file", single)...); err != nil {
		return err
	}
	data, err := os.ReadFile(single)
	if err != nil {
		return err
	}
	if r.singleV, r.singleStarved, err = verdicts(data, f.plan); err != nil {
		return err
	}
	logf("one process: %s, %d MiB", r.single.wall.Round(time.Millisecond), r.single.rss>>20)
	doc := shardsReport(cfg, f.plan, r, began, time.Since(began))
	if err := os.MkdirAll(cfg.out, 0o755); err != nil {
		return err
	}
	path := filepath.Join(cfg.out, "shard-benchmark.md")
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		return err
	}
	logf("wrote %s", path)
	return nil
}

// tally counts verdicts: "4146 Current, 452 Throttled, ...".
func tally(v map[string]string) string {
	counts := map[string]int{}
	for _, verdict := range v {
		counts[verdict]++
	}
	return countsText(counts, "%d %v")
}

// countsText lists counts by key, in the keys' order, each as format gives it (count, key).
func countsText[K cmp.Ordered](counts map[K]int, format string) string {
	keys := slices.Sorted(maps.Keys(counts))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf(format, counts[k], k)
	}
	return strings.Join(parts, ", ")
}

func shardsReport(cfg shardsConfig, plan []plannedCluster, r shardsResult, began time.Time, took time.Duration) string {
	var b strings.Builder
	healthy := 0
	for _, c := range plan {
		if c.behaviour == fakeapi.Healthy {
			healthy++
		}
	}
	currentOf := func(v map[string]string) int {
		n := 0
		for _, c := range plan {
			if c.behaviour == fakeapi.Healthy && v[c.name] == "Current" {
				n++
			}
		}
		return n
	}
	var differ []string
	for _, c := range plan {
		if r.merged[c.name] != r.singleV[c.name] {
			differ = append(differ, fmt.Sprintf("%s (%s / %s)", c.name, orMissing(r.merged[c.name]), orMissing(r.singleV[c.name])))
		}
	}
	var walls, cpus []time.Duration
	var rsses []int64
	var shardCPU time.Duration
	var maxRSS int64
	for _, s := range r.shards {
		walls, cpus, rsses = append(walls, s.wall), append(cpus, s.cpu), append(rsses, s.rss)
		shardCPU += s.cpu
		maxRSS = max(maxRSS, s.rss)
	}
	perCluster := func(cpu time.Duration) string {
		return fmt.Sprintf("%.1f ms", float64(cpu)/float64(time.Millisecond)/float64(cfg.clusters))
	}
	fmt.Fprintf(&b, "# Shard benchmark: %d clusters in %d shards, then one merge\n\n", cfg.clusters, cfg.shards)
	fmt.Fprintf(&b, "Written by `make bench-shards` (`hack/bench shards`) on %s UTC, in %s.\n\n", began.UTC().Format("2006-01-02 15:04"), took.Round(time.Second))
	fmt.Fprintf(&b, "- **Machine:** %d CPUs, %s/%s, %s.\n", runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version())
	fmt.Fprintf(&b, "- **Command:** `go -C hack run ./bench shards %s` (paths shortened)\n", fleetArgs(cfg.args))
	fmt.Fprintf(&b, "- **Clusters:** %d fake API servers (`internal/testing/fakeapi`) on 127.0.0.1, in %d helper processes beside the runs, each holding a Kustomization Ready at the revision and an inventory of %d Current objects (metadata answered in protobuf as kube-apiserver does, the rest in JSON): %d healthy, %d hung (accept connections, never answer), %d throttled (429, `Retry-After: 30`), %d failing (500). Every kubeconfig carries its own token, over TLS.\n",
		cfg.clusters, (cfg.clusters+cfg.perHost-1)/cfg.perHost, cfg.objects, healthy, cfg.clusters/10, cfg.clusters/20, cfg.clusters/20)
	fmt.Fprintf(&b, "- **Runs:** one of each, on this machine, beside the servers: the %d shards at once (`app-status verify --clusters-file F --shard I/%d --resource kustomization/app --revision a1b2c3d --timeout %s --json-file shard-I.json`), sharing its %d cores where a matrix would give each leg a runner of its own (so their wall time and CPU wait here are an upper bound), then `app-status merge -o json shard-*.json`; then the whole fleet in one process. The failing (500) clusters keep every run to its timeout (the hung ones are Unreachable after three tries).\n\n",
		cfg.shards, cfg.shards, cfg.timeout, runtime.NumCPU())
	b.WriteString("| Run | Wall time | Peak RSS | CPU | CPU per cluster | Healthy clusters Current | Not Current, saying the runner was short of CPU |\n|---|---|---|---|---|---|---|\n")
	fmt.Fprintf(&b, "| %d shards at once | %s (each: median %s, slowest %s) | median %s, largest %s per shard | %s in all (median %s per shard) | %s | %d of %d | %d |\n",
		cfg.shards, ms(r.shardsWall), ms(median(walls)), ms(slices.Max(walls)), mib(uint64(medianInt(rsses))), mib(uint64(maxRSS)), ms(shardCPU), ms(median(cpus)), perCluster(shardCPU), currentOf(r.merged), healthy, r.mergedStarved)
	fmt.Fprintf(&b, "| `merge` of the %d reports | %s | %s | %s | | | |\n", cfg.shards, ms(r.merge.wall), mib(uint64(r.merge.rss)), ms(r.merge.cpu))
	fmt.Fprintf(&b, "| one process, the whole fleet | %s | %s | %s | %s | %d of %d | %d |\n\n",
		ms(r.single.wall), mib(uint64(r.single.rss)), ms(r.single.cpu), perCluster(r.single.cpu), currentOf(r.singleV), healthy, r.singleStarved)
	fmt.Fprintf(&b, "- **Exit after the timeout** (%s; start-up and reading the 10,000 kubeconfigs included): shards median %s, slowest %s; one process %s.\n", cfg.timeout,
		ms(median(walls)-cfg.timeout), ms(slices.Max(walls)-cfg.timeout), ms(r.single.wall-cfg.timeout))
	fmt.Fprintf(&b, "- **Merged verdicts:** %s.\n", tally(r.merged))
	fmt.Fprintf(&b, "- **One process's verdicts:** %s.\n", tally(r.singleV))
	var unlike []string
	for _, c := range plan {
		if r.merged[c.name] != r.union[c.name] {
			unlike = append(unlike, fmt.Sprintf("%s (%s / %s)", c.name, orMissing(r.merged[c.name]), orMissing(r.union[c.name])))
		}
	}
	switch {
	case len(unlike) == 0:
		fmt.Fprintf(&b, "- **Merge against its shards:** every one of the %d clusters has the verdict and code its shard reported.\n", cfg.clusters)
	default:
		fmt.Fprintf(&b, "- **Merge against its shards:** %d clusters differ (merged / shard), e.g. %s.\n", len(unlike), strings.Join(unlike[:min(5, len(unlike))], ", "))
	}
	switch {
	case len(differ) == 0:
		fmt.Fprintf(&b, "- **Merge against one process:** every one of the %d clusters has the same verdict and code.\n", cfg.clusters)
	default:
		fmt.Fprintf(&b, "- **Merge against one process:** %d clusters differ (merged / one process), e.g. %s: two runs under different load, not the merge.\n", len(differ), strings.Join(differ[:min(5, len(differ))], ", "))
	}
	fmt.Fprintf(&b, "- **Exit codes:** shards %s, merge %d, one process %d (1: the fleet has failed clusters, as it should).\n", shardCodes(r.shards), r.merge.code, r.single.code)
	return b.String()
}

func shardCodes(ss []procSample) string {
	codes := map[int]int{}
	for _, s := range ss {
		codes[s.code]++
	}
	return countsText(codes, "%d × %v")
}

// orMissing is a cluster's verdict, or "missing" when a report lacks it.
func orMissing(verdict string) string {
	if verdict != "" {
		return verdict
	}
	return "missing"
}
