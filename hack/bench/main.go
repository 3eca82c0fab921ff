// Command bench is the side-by-side benchmark behind `make bench`. On real test-bed
// clusters it times app-status against what users would otherwise script, on the same events:
// `kubectl wait` and `kubectl rollout status` in a loop over clusters, and a kstatus
// StatusPoller at the flux CLI's 2 s interval (`bench poller`, run as its own process). It
// measures the verdict latency, the fail-fast time, the cost of a `get` and a `verify` from 1
// to 50 clusters (wall time, peak RSS, API requests per cluster), the start-up time and the
// binary and image sizes, and writes docs/benchmark.md and docs/benchmark.png once every phase
// has finished. Progress goes to stderr.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/klog/v2"

	"github.com/org/app-status-action/internal/testing/testbed"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:])
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	// client-go's retry and watch-error logs would drown the progress lines.
	klog.SetOutput(io.Discard)
	klog.LogToStderr(false)
	if len(args) > 0 && args[0] == "poller" {
		return poller(ctx, args[1:])
	}
	if len(args) > 0 && args[0] == "fleet" {
		return fleet(ctx, args[1:])
	}
	if len(args) > 0 && args[0] == "shards" {
		return shards(ctx, args[1:])
	}
	if len(args) > 0 && args[0] == "fleet-servers" {
		return fleetServers(ctx, args[1:])
	}
	if len(args) > 0 && args[0] == "merge" {
		return merge(ctx, args[1:])
	}
	if len(args) > 0 && args[0] == "confirm" {
		return confirm(ctx, args[1:])
	}
	return bench(ctx, args)
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

// config is the bench's command line.
type config struct {
	appStatus string
	// peer is an earlier app-status binary run beside appStatus in the latency and fail-fast
	// runs (empty: none), reported as peerName.
	peer, peerName  string
	out             string
	runs            int
	latencyClusters int
	deployments     int
	failDeadline    int
	growth          []int
	objects         int
	minFree         uint64
	apiserverArgs   []string
	phases          []string
	hold            bool
	args            []string
}

func parseConfig(args []string) (config, error) {
	c := config{args: args}
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.StringVar(&c.appStatus, "app-status", "bin/app-status", "the app-status binary to measure (make build)")
	fs.StringVar(&c.peer, "peer", "", "an earlier app-status binary to run beside --app-status in every latency and fail-fast run, on the same events: its figures and ratio in the same tables (both wait at once, so they share the CPU)")
	fs.StringVar(&c.peerName, "peer-name", "app-status (peer)", "the name --peer is reported under, for example \"main (abc1234)\"")
	fs.StringVar(&c.out, "out", "docs", "folder for benchmark.md and benchmark.png")
	fs.IntVar(&c.runs, "runs", 5, "runs per measure (medians of these)")
	fs.IntVar(&c.latencyClusters, "latency-clusters", 3, "clusters with Flux for the latency and fail-fast measures")
	fs.IntVar(&c.deployments, "deployments", 5, "Deployments (2 replicas, a Service each) of the app rolled out in the latency measure")
	fs.IntVar(&c.failDeadline, "progress-deadline", 60, "progressDeadlineSeconds of the fail-fast Deployment")
	growth := fs.String("growth", "1,5,20,50", "cluster counts of the scale and growth measures")
	fs.IntVar(&c.objects, "objects", 200, "objects per cluster in the scale and growth measures")
	minFree := fs.Int("min-free-mib", 2560, "memory to leave available when starting growth clusters; counts that do not fit are cut")
	var apiserverArgs stringList
	fs.Var(&apiserverArgs, "apiserver-arg", "extra kube-apiserver flag (key=value) for the growth clusters; repeat; \"none\" for none (default watch-cache=false, which saves about 30 MiB per cluster so that 50 fit in 24 GiB)")
	phases := fs.String("phases", "startup,latency,failfast,growth", "phases to run")
	fs.BoolVar(&c.hold, "hold", false, "keep the growth clusters running after the growth phase until interrupted, for profiling by hand (writes no results)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	for _, f := range strings.Split(*growth, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return c, fmt.Errorf("--growth: %q is not a cluster count", f)
		}
		c.growth = append(c.growth, n)
	}
	slices.Sort(c.growth)
	c.growth = slices.Compact(c.growth)
	c.minFree = uint64(*minFree) << 20
	switch {
	case len(apiserverArgs) == 0:
		c.apiserverArgs = []string{"watch-cache=false"}
	case !slices.Equal(apiserverArgs, []string{"none"}):
		c.apiserverArgs = apiserverArgs
	}
	c.phases = strings.Split(*phases, ",")
	if c.peer != "" && slices.Contains([]string{toolAppStatus, toolKubectl, toolPoller}, c.peerName) {
		return c, fmt.Errorf("--peer-name %q is the name of a tool the bench runs anyway: give the peer a name of its own", c.peerName)
	}
	if c.runs < 1 || c.latencyClusters < 1 || c.deployments < 1 || c.objects < 4 {
		return c, errors.New("--runs, --latency-clusters and --deployments must be at least 1, --objects at least 4")
	}
	return c, nil
}

func (c config) phase(name string) bool { return slices.Contains(c.phases, name) }

// env is what every phase needs.
type env struct {
	appStatus string // absolute path of the binary measured
	// peer is the absolute path of an earlier build run beside it (config.peer), named
	// peerName; empty: none.
	peer, peerName string
	self           string // this program, for `bench poller`
	rusage         string // hack/bench/rusage, built into workdir
	bins           testbed.Bins
	workdir        string
	// clusters and clustersFile are the clusters of the bed in use.
	clusters     []clusterRef
	clustersFile string
}

// results is everything the report shows.
type results struct {
	Machine  machine
	Command  string
	Config   config
	Startup  *startupResult
	Latency  *latencyResult
	FailFast *latencyResult
	Growth   *growthResult
	Took     time.Duration
}

func bench(ctx context.Context, args []string) error {
	cfg, err := parseConfig(args)
	if err != nil {
		return err
	}
	start := time.Now()
	res := &results{Machine: describeMachine(start), Config: cfg, Command: "make bench  # go -C hack run ./bench " + strings.Join(args, " ")}
	e := &env{}
	if e.appStatus, err = filepath.Abs(cfg.appStatus); err != nil {
		return err
	}
	if _, err := os.Stat(e.appStatus); err != nil {
		return fmt.Errorf("the app-status binary: %w (run make build)", err)
	}
	if cfg.peer != "" {
		if e.peer, err = filepath.Abs(cfg.peer); err != nil {
			return err
		}
		if _, err := os.Stat(e.peer); err != nil {
			return fmt.Errorf("--peer: %w (build the earlier commit: git archive C | tar -x -C DIR && make -C DIR build)", err)
		}
		e.peerName = cfg.peerName
	}
	if e.self, err = os.Executable(); err != nil {
		return fmt.Errorf("find this program: %w", err)
	}
	if e.bins, err = testbed.FindBins(ctx); err != nil {
		return err
	}
	if e.workdir, err = os.MkdirTemp("", "app-status-bench-"); err != nil {
		return err
	}
	defer os.RemoveAll(e.workdir)
	if e.rusage, err = buildRusage(ctx, e.workdir); err != nil {
		return err
	}
	logf("bench: %d CPUs, %s memory (%s available), load %s; phases %s", res.Machine.CPUs, gib(res.Machine.MemTotal), gib(res.Machine.MemAvailAt), res.Machine.LoadStart, strings.Join(cfg.phases, ","))

	if cfg.phase("startup") {
		logf("== start-up and size")
		if res.Startup, err = measureStartup(ctx, e, max(2*cfg.runs, 10)); err != nil {
			return fmt.Errorf("start-up: %w", err)
		}
	}
	if cfg.phase("latency") || cfg.phase("failfast") {
		if err := withFluxBed(ctx, e, cfg, res); err != nil {
			return err
		}
	}
	if cfg.phase("growth") {
		logf("== scale and growth: %v clusters of %d objects", cfg.growth, cfg.objects)
		if res.Growth, err = measureGrowth(ctx, e, cfg); err != nil {
			return fmt.Errorf("growth: %w", err)
		}
	}
	res.Machine.LoadEnd = loadAverage()
	res.Took = time.Since(start)
	if err := writeResults(cfg.out, res); err != nil {
		return err
	}
	logf("bench: done in %s; wrote %s and %s", res.Took.Round(time.Second),
		filepath.Join(cfg.out, "benchmark.md"), filepath.Join(cfg.out, "benchmark.png"))
	return nil
}

// withFluxBed runs the latency and fail-fast phases on clusters with the real Flux controllers.
func withFluxBed(ctx context.Context, e *env, cfg config, res *results) error {
	logf("== starting %d clusters with Flux for the latency and fail-fast measures", cfg.latencyClusters)
	bed, err := testbed.Start(ctx, testbed.Options{Clusters: cfg.latencyClusters, Flux: true, Prefix: "bench", Log: logf})
	if err != nil {
		return err
	}
	defer func() {
		logf("stopping the Flux clusters")
		bed.Close()
	}()
	if err := e.useClusters(bed.Clusters, "flux"); err != nil {
		return err
	}
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	w, err := startWatcher(wctx, bed.Clusters)
	if err != nil {
		return err
	}
	if cfg.phase("latency") {
		logf("== verdict latency: %d runs, %d clusters, %d Deployments", cfg.runs, cfg.latencyClusters, cfg.deployments)
		if res.Latency, err = measureLatency(ctx, e, bed, w, cfg); err != nil {
			return fmt.Errorf("latency: %w", err)
		}
	}
	if cfg.phase("failfast") {
		logf("== fail-fast: %d runs, progressDeadlineSeconds %d", cfg.runs, cfg.failDeadline)
		if res.FailFast, err = measureFailFast(ctx, e, bed, w, cfg); err != nil {
			return fmt.Errorf("fail-fast: %w", err)
		}
	}
	return nil
}

// useClusters makes the clusters the ones the tools are given.
func (e *env) useClusters(clusters []*testbed.Cluster, tag string) error {
	e.clusters = e.clusters[:0]
	for _, c := range clusters {
		e.clusters = append(e.clusters, clusterRef{Name: c.Name, Kubeconfig: c.KubeconfigPath})
	}
	e.clustersFile = filepath.Join(e.workdir, "clusters-"+tag+".txt")
	return writeClustersFile(e.clustersFile, e.clusters)
}

// buildRusage builds hack/bench/rusage into dir and returns its path.
func buildRusage(ctx context.Context, dir string) (string, error) {
	path := filepath.Join(dir, "rusage")
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", path, "github.com/org/app-status-action/hack/bench/rusage").CombinedOutput(); err != nil {
		return "", fmt.Errorf("build hack/bench/rusage: %w\n%s", err, out)
	}
	return path, nil
}
