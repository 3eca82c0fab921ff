package main

// bench fleet: the fleet-and-faults benchmark behind `make bench-fleet`, also run by `make
// bench`. It starts 1, 100 and 1000 fake API servers (internal/testing/fakeapi, in this
// process, on 127.0.0.1), each holding an app of 200 objects, a tenth of them hung, a
// twentieth throttling (429) and a twentieth failing (500), and times `app-status verify` and
// `app-status get` over the whole fleet: when the last healthy cluster's verdict is printed,
// when the process exits, its peak RSS, its CPU time per cluster and how many times the engine
// judged each cluster's tree (APP_STATUS_STATS). With --peer it runs another build (an
// earlier engine) on the same fleets in the same run, and reports both side by side, each
// measure of the peer with its ratio to this build's. It writes docs/fleet-benchmark.md and
// docs/fleet-benchmark.png.
//
// Every cluster's kubeconfig carries its own credentials, as real fleets' do (--credentials:
// a client certificate and RSA 2048 key by default, served over TLS that verifies them), so
// the time from the last verdict to the exit includes redacting a fleet's worth of secrets
// from the result (with one shared token the benchmark would never see that cost).

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/org/app-status-action/internal/testing/fakeapi"
)

const fleetRevision = "main@sha1:a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"

type fleetConfig struct {
	appStatus, peer, peerName, out string
	counts                         []int
	peerCounts                     map[int]bool // the fleet sizes the peer runs on too (all when empty)
	objects, runs                  int
	timeout                        time.Duration
	credentials                    string
	// runCap is how long one run may take before it is stopped as the runner stops a step:
	// SIGTERM, then SIGKILL 10 s later. Such a run is reported as not having exited.
	runCap time.Duration
	// busy is how many busy processes run beside a second series of verify runs on the
	// largest fleet (0: none).
	busy int
	// compareCredentials are other credentials the largest fleet is verified with too, each
	// on its own fleet of servers (shared-token: one token over plain HTTP, the engine's own
	// cost, on which its targets were set).
	compareCredentials []string
	// profile is the folder each run's pprof files go to (empty: none).
	profile string
	// peerJSONFile is whether the peer has --json-file (found out by asking it).
	peerJSONFile bool
	// large is the size of a fleet also verified in one process, its servers in helper
	// processes of perHost each, with largeTimeout (0: none).
	large, perHost int
	largeTimeout   time.Duration
	args           []string
}

func parseFleetConfig(args []string) (fleetConfig, error) {
	c := fleetConfig{args: args}
	fs := flag.NewFlagSet("bench fleet", flag.ContinueOnError)
	fs.StringVar(&c.appStatus, "app-status", "bin/app-status", "the app-status binary to measure (make build)")
	fs.StringVar(&c.peer, "peer", "", "another app-status binary to measure on the same fleets (empty: none)")
	fs.StringVar(&c.peerName, "peer-name", "peer", "what to call the peer in the report")
	fs.StringVar(&c.out, "out", "docs", "folder for fleet-benchmark.md")
	counts := fs.String("clusters", "1,100,1000", "fleet sizes, comma-separated")
	peerCounts := fs.String("peer-clusters", "", "the fleet sizes the peer runs on too, comma-separated (default: all); a peer that takes hours on the large ones would be stopped at --run-cap in every run")
	fs.IntVar(&c.objects, "objects", 200, "objects in each cluster's app")
	fs.IntVar(&c.runs, "runs", 3, "runs per measure (medians of these)")
	fs.DurationVar(&c.timeout, "timeout", 20*time.Second, "the verify timeout: when hung clusters get their Timeout verdict (TLS handshakes with RSA client keys cost about 4 ms of CPU per cluster)")
	fs.StringVar(&c.credentials, "credentials", credsCert, "what each kubeconfig carries: cert (its own client certificate and RSA 2048 key), token (its own token) or shared-token (one token for all, plain HTTP)")
	fs.IntVar(&c.busy, "busy", 0, "also verify the largest fleet with this many busy processes beside it (a runner shared with other jobs): how many healthy clusters are Current, and whether the others blame their servers or say the runner was short of CPU")
	compare := fs.String("compare-credentials", "", "also verify the largest fleet with these credentials, comma-separated (each on its own fleet), and report them side by side with --credentials")
	fs.DurationVar(&c.runCap, "run-cap", 3*time.Minute, "how long one run may take before it is stopped with SIGTERM (then SIGKILL 10 s later)")
	fs.IntVar(&c.large, "large", 0, "also verify a fleet of this many clusters (10000) in one process, `verify` only, its servers in helper processes, each kubeconfig with its own token over TLS (that many RSA keys would take longer than the runs); the peer too unless --peer-clusters leaves it out (0: none)")
	fs.DurationVar(&c.largeTimeout, "large-timeout", 3*time.Minute, "the verify timeout of the --large fleet (long enough for its healthy clusters on 2 cores)")
	fs.IntVar(&c.perHost, "servers-per-process", 2000, "fake API servers per helper process of the --large fleet")
	fs.StringVar(&c.profile, "profile", "", "write a CPU and a heap profile of every run into this folder (APP_STATUS_CPUPROFILE, APP_STATUS_MEMPROFILE): TOOL-COMMAND-CLUSTERS-runN.cpu.pprof and .mem.pprof; profiling costs a little CPU, so keep such runs' figures out of the docs")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	for f := range strings.SplitSeq(*counts, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return c, fmt.Errorf("--clusters: %q is not a positive number", f)
		}
		c.counts = append(c.counts, n)
	}
	if *peerCounts != "" {
		c.peerCounts = map[int]bool{}
		for f := range strings.SplitSeq(*peerCounts, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || (!slices.Contains(c.counts, n) && (c.large == 0 || n != c.large)) {
				return c, fmt.Errorf("--peer-clusters: %q is not one of --clusters nor --large", f)
			}
			c.peerCounts[n] = true
		}
	}
	for f := range strings.SplitSeq(*compare, ",") {
		switch f = strings.TrimSpace(f); f {
		case "":
		case credsCert, credsToken, credsSharedToken:
			if f != c.credentials && !slices.Contains(c.compareCredentials, f) {
				c.compareCredentials = append(c.compareCredentials, f)
			}
		default:
			return c, fmt.Errorf("--compare-credentials: %q is not %s, %s or %s", f, credsCert, credsToken, credsSharedToken)
		}
	}
	if c.runs < 1 || c.objects < 1 {
		return c, errors.New("--runs and --objects must be at least 1")
	}
	if c.large != 0 && (c.large < 20 || c.perHost < 1 || slices.Contains(c.counts, c.large)) {
		return c, errors.New("--large must be at least 20 (or 0: none) and not one of --clusters, --servers-per-process at least 1")
	}
	return c, nil
}

// fakeFleet is a set of fake clusters and the clusters-file that names them.
type fakeFleet struct {
	servers []*fakeapi.Server
	// helpers hold the servers instead, for a fleet larger than one process can serve
	// (startLargeFleet).
	helpers      *shardedFleet
	clusters     int
	healthy      map[string]bool
	mix          string
	clustersFile string
}

// startFleet starts the servers of fleetPlan(n) in this process and writes their
// clusters-file.
func startFleet(n, objects int, dir string, creds *fleetCredentials) (*fakeFleet, error) {
	f := &fakeFleet{clusters: n, healthy: map[string]bool{}}
	counts := map[fakeapi.Behaviour]int{}
	resources, objs := fakeapi.App("app", fleetRevision, objects)
	var lines strings.Builder
	for i, c := range fleetPlan(n) {
		counts[c.behaviour]++
		s := fakeapi.Start(fakeapi.Options{Behaviour: c.behaviour, Resources: resources, Objects: objs, RetryAfter: 30, TLS: creds.serverTLS})
		f.servers = append(f.servers, s)
		if c.behaviour == fakeapi.Healthy {
			f.healthy[c.name] = true
		}
		path := filepath.Join(dir, c.name+".yaml")
		if err := os.WriteFile(path, []byte(creds.kubeconfig(i, s.URL())), 0o600); err != nil {
			f.close()
			return nil, err
		}
		fmt.Fprintf(&lines, "%s=file:%s\n", c.name, path)
	}
	f.mix = fmt.Sprintf("%d healthy, %d hung, %d throttled (429), %d failing (500)",
		counts[fakeapi.Healthy], counts[fakeapi.Hang], counts[fakeapi.Throttle], counts[fakeapi.Fail])
	f.clustersFile = filepath.Join(dir, fmt.Sprintf("clusters-%d.txt", n))
	if err := os.WriteFile(f.clustersFile, []byte(lines.String()), 0o600); err != nil {
		f.close()
		return nil, err
	}
	return f, nil
}

func (f *fakeFleet) close() {
	for _, s := range f.servers {
		s.Close()
	}
	if f.helpers != nil {
		f.helpers.close()
	}
}

// fleetSample is one timed run of a tool over a fleet.
type fleetSample struct {
	lastHealthy   time.Duration // when the last healthy cluster's Current verdict was printed
	healthyOK     int           // healthy clusters printed Current
	lastVerdict   time.Duration // when the last verdict of any cluster was printed
	killed        bool          // stopped at the run cap: exit, RSS and CPU are unknown
	exit          time.Duration
	rss           int64
	cpu           time.Duration // user + system
	verdictCounts map[string]int
	// healthyStarved and healthyBlamed count the healthy clusters that were not Current: saying
	// the runner was short of CPU, or blaming their server.
	healthyStarved, healthyBlamed int
	// passes is how many times the engine judged a cluster's tree, per cluster judged at least
	// once, from its APP_STATUS_STATS file; hasPasses is false for a build that writes none.
	passes    float64
	hasPasses bool
}

// fleetRun is where one run of a tool writes its files: the report (--json-file; empty for a
// build without the flag), its engine's counts (APP_STATUS_STATS) and, when profiling, the
// prefix of its pprof files (APP_STATUS_CPUPROFILE, APP_STATUS_MEMPROFILE: PREFIX.cpu.pprof
// and PREFIX.mem.pprof).
type fleetRun struct {
	reportFile, statsFile, profile string
}

// measureFleet runs `BINARY command` over the fleet through the rusage program.
//
// Above 30 clusters app-status's log prints the verdicts that are not Current and a tally, so
// the healthy clusters' verdicts are read from its report (--json-file, reportFile: empty for
// a peer that has no such flag): each cluster's duration, from the run's start.
func measureFleet(ctx context.Context, rusage, binary, command string, f *fakeFleet, timeout, runCap time.Duration, files fleetRun) (fleetSample, error) {
	args := []string{binary, command, "--clusters-file", f.clustersFile, "--resource", "kustomization/app", "-o", "json", "--timeout", timeout.String()}
	if files.reportFile != "" {
		args = append(args, "--json-file", files.reportFile)
	}
	if command == "verify" {
		args = append(args, "--revision", "a1b2c3d")
	}
	capped, cancel := context.WithTimeout(ctx, runCap)
	defer cancel()
	cmd := exec.CommandContext(capped, rusage, args...)
	// At the cap, rusage gets SIGTERM, which it passes to app-status, as a runner stops a
	// step; SIGKILL for the whole process group 10 s later, and whenever this returns early.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	cmd.Env = os.Environ()
	if files.statsFile != "" {
		// A file left by an earlier run would pass for this one's.
		if err := os.Remove(files.statsFile); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fleetSample{}, err
		}
		cmd.Env = append(cmd.Env, "APP_STATUS_STATS="+files.statsFile)
	}
	if files.profile != "" {
		cmd.Env = append(cmd.Env, "APP_STATUS_CPUPROFILE="+files.profile+".cpu.pprof", "APP_STATUS_MEMPROFILE="+files.profile+".mem.pprof")
	}
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return fleetSample{}, err
	}
	s := fleetSample{verdictCounts: map[string]int{}}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return s, err
	}
	defer func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }()
	var tail []string
	sc := bufio.NewScanner(stderr)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Text()
		if cluster, verdict, ok := appStatusLine(line); ok {
			s.lastVerdict = time.Since(start)
			switch {
			case f.healthy[cluster] && verdict == "Current":
				s.healthyOK++
				s.lastHealthy = s.lastVerdict
			case f.healthy[cluster] && strings.Contains(verdict, "short of CPU"):
				s.healthyStarved++
			case f.healthy[cluster]:
				s.healthyBlamed++
			}
		}
		if tail = append(tail, line); len(tail) > 10 {
			tail = tail[1:]
		}
	}
	err = cmd.Wait()
	if capped.Err() != nil && ctx.Err() == nil {
		// Stopped at the cap: whether it then ended by itself or was killed, it did not end
		// on its own in time.
		s.killed, s.exit = true, time.Since(start)
		return s, nil
	}
	if err != nil {
		return s, fmt.Errorf("%s %s: %w: %s", filepath.Base(binary), command, err, strings.Join(tail, "\n"))
	}
	var wall, user, sys time.Duration
	var code int
	if _, err := fmt.Sscanf(stdout.String(), "rusage %d %d %d %d %d", &wall, &s.rss, &code, &user, &sys); err != nil {
		return s, fmt.Errorf("read the rusage of %s: %w (%q)", command, err, stdout.String())
	}
	s.exit, s.cpu = wall, user+sys
	if files.reportFile != "" && len(f.healthy) > 30 {
		if err := s.readReport(files.reportFile, f); err != nil {
			return s, err
		}
	}
	if files.statsFile != "" {
		if err := s.readStats(files.statsFile); err != nil {
			return s, err
		}
	}
	if s.lastVerdict == 0 {
		return s, fmt.Errorf("%s %s printed no verdict: %s", filepath.Base(binary), command, strings.Join(tail, "\n"))
	}
	if len(f.healthy) > 0 && s.healthyOK == 0 && s.healthyStarved == 0 {
		// Every healthy cluster blamed its server: the fleet's kubeconfigs or servers are
		// refused, and the run measured nothing but that refusal.
		return s, fmt.Errorf("%s %s: none of the %d healthy clusters was Current, so the run measured nothing: %s",
			filepath.Base(binary), command, len(f.healthy), strings.Join(tail, "\n"))
	}
	return s, nil
}

// readReport counts the healthy clusters' verdicts from app-status's JSON report: Current (and
// when), or what the others said.
func (s *fleetSample) readReport(path string, f *fakeFleet) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read the report: %w", err)
	}
	var run struct {
		Results []struct {
			Name       string `json:"cluster"`
			Verdict    string `json:"verdict"`
			Message    string `json:"message"`
			DurationMs int64  `json:"durationMs"`
		} `json:"results"`
	}
	if err := json.Unmarshal(data, &run); err != nil {
		return fmt.Errorf("read the report: %w", err)
	}
	s.healthyOK, s.healthyStarved, s.healthyBlamed, s.lastHealthy = 0, 0, 0, 0
	if len(run.Results) != f.clusters {
		return fmt.Errorf("the report has %d clusters, the fleet %d", len(run.Results), f.clusters)
	}
	for _, c := range run.Results {
		switch {
		case !f.healthy[c.Name]:
		case c.Verdict == "Current":
			s.healthyOK++
			s.lastHealthy = max(s.lastHealthy, time.Duration(c.DurationMs)*time.Millisecond)
		case strings.Contains(c.Message, "short of CPU"):
			s.healthyStarved++
		default:
			s.healthyBlamed++
		}
	}
	return nil
}

// readStats reads the engine's counts a run wrote (APP_STATUS_STATS): the passes per cluster
// judged. A build that writes no such file leaves the sample without them.
func (s *fleetSample) readStats(path string) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read the stats: %w", err)
	}
	var stats struct {
		Judged int `json:"judged"`
		Passes int `json:"passes"`
	}
	if err := json.Unmarshal(data, &stats); err != nil {
		return fmt.Errorf("read the stats %s: %w", path, err)
	}
	if stats.Judged > 0 {
		s.passes, s.hasPasses = float64(stats.Passes)/float64(stats.Judged), true
	}
	return nil
}

// fleetTool is a build the benchmark runs: this one, or the peer.
type fleetTool struct {
	name, binary string
	// slug names its files (profiles); jsonFile is whether it has --json-file.
	slug     string
	jsonFile bool
}

// appStatusTool is the build measured.
func appStatusTool(cfg fleetConfig) fleetTool {
	return fleetTool{name: "app-status", slug: "app-status", binary: cfg.appStatus, jsonFile: true}
}

// hasFlag reports whether `binary verify -h` lists --flag: an older build may lack it.
func hasFlag(ctx context.Context, binary, flag string) bool {
	out, _ := exec.CommandContext(ctx, binary, "verify", "-h").CombinedOutput()
	return strings.Contains(string(out), "-"+flag+" ")
}

// runFiles are the files of tool's run called name (its command, fleet and run), in dir; its
// profiles go to cfg.profile when set.
func (cfg fleetConfig) runFiles(dir string, t fleetTool, name string) fleetRun {
	files := fleetRun{statsFile: filepath.Join(dir, "stats.json")}
	if t.jsonFile {
		files.reportFile = filepath.Join(dir, "report.json")
	}
	if cfg.profile != "" {
		files.profile = filepath.Join(cfg.profile, t.slug+"-"+name)
	}
	return files
}

// passesText is a sample's passes per cluster for the log.
func passesText(s fleetSample) string {
	if !s.hasPasses {
		return "unknown"
	}
	return fmt.Sprintf("%.1f", s.passes)
}

// fleetRow is the runs of one tool and one command over one fleet.
type fleetRow struct {
	tool, command string
	clusters      int
	healthy       int
	busy          int    // busy processes beside it
	credentials   string // what the kubeconfigs carry when not --credentials (compareCredentials)
	samples       []fleetSample
}

func fleet(ctx context.Context, args []string) error {
	cfg, err := parseFleetConfig(args)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "app-status-fleet-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(dir) }()
	rusage, err := buildRusage(ctx, dir)
	if err != nil {
		return err
	}
	tools := []fleetTool{appStatusTool(cfg)}
	if cfg.peer != "" {
		// A peer that has --json-file writes the report this build writes: the only place the
		// healthy clusters' verdicts are above 30 clusters, where the log counts them.
		cfg.peerJSONFile = hasFlag(ctx, cfg.peer, "json-file")
		tools = append(tools, fleetTool{name: cfg.peerName, slug: "peer", binary: cfg.peer, jsonFile: cfg.peerJSONFile})
	}
	if cfg.profile != "" {
		if err := os.MkdirAll(cfg.profile, 0o755); err != nil {
			return err
		}
	}
	began := time.Now()
	creds, err := newFleetCredentials(cfg.credentials, slices.Max(cfg.counts))
	if err != nil {
		return err
	}
	logf("credentials: %s for up to %d clusters, made in %s", cfg.credentials, slices.Max(cfg.counts), time.Since(began).Round(time.Millisecond))
	var rows []*fleetRow
	mixes := map[int]string{}
	for _, n := range cfg.counts {
		f, err := startFleet(n, cfg.objects, dir, creds)
		if err != nil {
			return err
		}
		mixes[n] = f.mix
		logf("%d clusters: %s", n, f.mix)
		for _, command := range []string{"verify", "get"} {
			for _, t := range tools {
				if t.binary == cfg.peer && cfg.peerCounts != nil && !cfg.peerCounts[n] {
					continue
				}
				r := &fleetRow{tool: t.name, command: command, clusters: n, healthy: len(f.healthy)}
				for i := range cfg.runs {
					files := cfg.runFiles(dir, t, fmt.Sprintf("%s-%d-run%d", command, n, i+1))
					s, err := measureFleet(ctx, rusage, t.binary, command, f, cfg.timeout, cfg.runCap, files)
					if err != nil {
						f.close()
						return err
					}
					r.samples = append(r.samples, s)
					logf("  %s %s run %d: last healthy verdict %s (%d of %d), last verdict %s, exit %s%s, peak RSS %d MiB, CPU %s, passes per cluster %s",
						t.name, command, i+1, ms(s.lastHealthy), s.healthyOK, r.healthy, ms(s.lastVerdict), ms(s.exit), killedNote(s), s.rss>>20, ms(s.cpu), passesText(s))
				}
				rows = append(rows, r)
			}
		}
		if n == slices.Max(cfg.counts) && cfg.busy > 0 {
			r, err := busyRuns(ctx, cfg, rusage, f, n)
			if err != nil {
				f.close()
				return err
			}
			rows = append(rows, r)
		}
		f.close()
	}
	if cfg.large > 0 {
		large, mix, err := largeRuns(ctx, cfg, rusage, dir, tools)
		if err != nil {
			return err
		}
		rows, mixes[cfg.large] = append(rows, large...), mix
	}
	credRows, err := credentialRuns(ctx, cfg, rusage, dir)
	if err != nil {
		return err
	}
	compared, err := credentialsReport(cfg, rows, credRows)
	if err != nil {
		return err
	}
	doc := fleetReport(cfg, rows, mixes, began, time.Since(began)) + compared
	if err := os.MkdirAll(cfg.out, 0o755); err != nil {
		return err
	}
	path := filepath.Join(cfg.out, "fleet-benchmark.md")
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		return err
	}
	chart, err := fleetChart(cfg, rows, began)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(cfg.out, "fleet-benchmark.png"), chart, 0o644); err != nil {
		return err
	}
	logf("wrote %s", path)
	if cfg.profile != "" {
		return sayProfiles(cfg.profile)
	}
	return nil
}

// sayProfiles lists the profiles the runs wrote into dir, and how to read them.
func sayProfiles(dir string) error {
	profiles, err := filepath.Glob(filepath.Join(dir, "*.pprof"))
	if err != nil {
		return err
	}
	if len(profiles) == 0 {
		return fmt.Errorf("no run wrote a profile into %s: does the build honour APP_STATUS_CPUPROFILE?", dir)
	}
	logf("%d profiles in %s (TOOL-COMMAND-CLUSTERS-runN, .cpu.pprof: the whole run; .mem.pprof: the heap at its end):", len(profiles), dir)
	for _, p := range profiles {
		logf("  %s", filepath.Base(p))
	}
	example := profiles[0]
	for _, p := range profiles {
		if strings.Contains(filepath.Base(p), "-verify-") && strings.HasSuffix(p, ".cpu.pprof") {
			example = p
		}
	}
	logf("read one with: go tool pprof -top %s (-top -cum: with what each function calls; on a .mem.pprof, -sample_index=alloc_space: what was allocated in all)", example)
	return nil
}

// busyRuns verifies the fleet with cfg.busy busy processes beside app-status (each a shell
// loop that never sleeps), as on a runner shared with other jobs.
func busyRuns(ctx context.Context, cfg fleetConfig, rusage string, f *fakeFleet, n int) (*fleetRow, error) {
	var busy []*exec.Cmd
	defer func() {
		for _, c := range busy {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
	}()
	for range cfg.busy {
		c := exec.CommandContext(ctx, "sh", "-c", "while :; do :; done")
		if err := c.Start(); err != nil {
			return nil, fmt.Errorf("start a busy process: %w", err)
		}
		busy = append(busy, c)
	}
	r := &fleetRow{tool: fmt.Sprintf("app-status, %d busy processes beside it", cfg.busy), command: "verify", clusters: n, healthy: len(f.healthy), busy: cfg.busy}
	for i := range cfg.runs {
		s, err := measureFleet(ctx, rusage, cfg.appStatus, "verify", f, cfg.timeout, cfg.runCap,
			cfg.runFiles(filepath.Dir(f.clustersFile), appStatusTool(cfg), fmt.Sprintf("verify-%d-busy%d-run%d", n, cfg.busy, i+1)))
		if err != nil {
			return nil, err
		}
		r.samples = append(r.samples, s)
		logf("  %s run %d: last healthy verdict %s (%d of %d; not Current: %d saying the runner was short of CPU, %d blaming the server), exit %s, CPU %s",
			r.tool, i+1, ms(s.lastHealthy), s.healthyOK, r.healthy, s.healthyStarved, s.healthyBlamed, ms(s.exit), ms(s.cpu))
	}
	return r, nil
}

func pick[T any](ss []fleetSample, f func(fleetSample) T) []T {
	out := make([]T, len(ss))
	for i, s := range ss {
		out[i] = f(s)
	}
	return out
}

func fleetReport(cfg fleetConfig, rows []*fleetRow, mixes map[int]string, began time.Time, took time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Fleet benchmark: every cluster's verdict on time, whatever its API server does\n\n")
	fmt.Fprintf(&b, "Written by `make bench-fleet` (`hack/bench fleet`) on %s, in %s.\n\n", began.UTC().Format("2006-01-02 15:04 UTC"), took.Round(time.Second))
	fmt.Fprintf(&b, "- **Machine:** %d CPUs, %s, %s.\n", runtime.NumCPU(), runtime.GOOS+"/"+runtime.GOARCH, runtime.Version())
	fmt.Fprintf(&b, "- **Command:** `make bench-fleet`: `go -C hack run ./bench fleet %s` (paths shortened)\n", fleetArgs(cfg.args))
	fmt.Fprintf(&b, "- **Clusters:** fake API servers (`internal/testing/fakeapi`) in the benchmark's process on 127.0.0.1, each holding a Kustomization Ready at the revision and an inventory of %d Current objects (Deployments, Services, ConfigMaps), answering the metadata client (the probe, ConfigMaps) in protobuf as kube-apiserver does, everything else in JSON. Hung servers accept connections and never answer; throttled ones answer 429 with `Retry-After: 30`; failing ones answer 500 to everything. The unhealthy clusters come first in the clusters-file.\n", cfg.objects)
	fmt.Fprintf(&b, "- **Runs:** `app-status verify --clusters-file F --resource kustomization/app --revision a1b2c3d --timeout %s -o json --json-file R` and `app-status get` with the same clusters and timeout (without it, a `get` that waits on hung servers runs for the default 10 minutes), default `max-parallel`%s; medians of %d runs each. *Last healthy* is when the last healthy cluster's Current verdict was printed (from the progress on stderr; above 30 clusters, where the log counts the Current ones, from the report), *exit* when the process exited; peak RSS and CPU (user + system) are the process's own (rusage). *Passes per cluster* is how many times the engine judged a cluster's whole tree, per cluster it judged at least once (`APP_STATUS_STATS`; empty for a build that does not count them).\n", cfg.timeout, peerJSONText(cfg), cfg.runs)
	fmt.Fprintf(&b, "- **Credentials:** %s. *Last verdict to exit* is the time from the last cluster's verdict (the hung ones' Timeout) to the process's exit: redacting every secret from the result, fitting and writing it, and the teardown.\n", credentialsText(cfg.credentials))
	if cfg.peer != "" {
		fmt.Fprintf(&b, "- **Peer:** %s, built from that commit by `make bench-fleet`, run on the same fleets in the same run, one run of each build after the other.\n", cfg.peerName)
	}
	b.WriteString("\n![Fleet benchmark chart](fleet-benchmark.png)\n\n")
	for _, n := range cfg.counts {
		fmt.Fprintf(&b, "## %d cluster%s: %s\n\n", n, fleetPlural(n), mixes[n])
		base := writeTable(&b, rows, n, cfg.runCap)
		for _, r := range rows {
			if r.clusters == n && r.busy > 0 {
				writeBusy(&b, r, n, base["verify"])
			}
		}
	}
	if cfg.large > 0 {
		fmt.Fprintf(&b, "## %d clusters in one process: %s\n\n", cfg.large, mixes[cfg.large])
		fmt.Fprintf(&b, "`verify` only (`--large %d`), with a %s timeout; the servers in helper processes of %d each (one process may hold 20,000 files here), every kubeconfig with its own token over TLS (%d RSA keys would take longer than the runs).\n\n",
			cfg.large, cfg.largeTimeout, cfg.perHost, cfg.large)
		writeTable(&b, rows, cfg.large, cfg.largeRunCap())
	}
	if cfg.peer != "" {
		fmt.Fprintf(&b, "Ratios in brackets are the peer's median over app-status's, in the same run.\n")
	}
	return b.String()
}

// peerJSONText says how the peer writes its report, when it lacks --json-file.
func peerJSONText(cfg fleetConfig) string {
	if cfg.peer == "" || cfg.peerJSONFile {
		return ""
	}
	return "; the peer has no `--json-file`, so it writes one document where app-status writes the file and copies it to stdout"
}

// writeTable writes the table of the fleet of n clusters (its rows without busy processes
// beside them), and returns this build's rows, by command: the base of the ratios.
func writeTable(b *strings.Builder, rows []*fleetRow, n int, runCap time.Duration) map[string]*fleetRow {
	b.WriteString("| Command | Tool | Healthy clusters Current | Last healthy verdict | Exit | Last verdict to exit | Peak RSS | CPU per cluster | Passes per cluster |\n|---|---|---|---|---|---|---|---|---|\n")
	base := map[string]*fleetRow{}
	for _, r := range rows {
		if r.clusters == n && r.tool == "app-status" && r.busy == 0 {
			base[r.command] = r
		}
	}
	for _, r := range rows {
		if r.clusters != n || r.busy > 0 {
			continue
		}
		writeRow(b, r, base[r.command], runCap)
	}
	b.WriteString("\n")
	return base
}

// fleetMedians are a row's medians, as its table prints them.
type fleetMedians struct {
	ok                    int
	last, exit, tail, cpu time.Duration
	rss                   int64
	// passes is known when every run wrote its engine's counts.
	passes    float64
	hasPasses bool
}

func mediansOf(r *fleetRow) fleetMedians {
	m := fleetMedians{
		ok:   int(medianInt(pick(r.samples, func(s fleetSample) int64 { return int64(s.healthyOK) }))),
		last: median(pick(r.samples, func(s fleetSample) time.Duration { return s.lastHealthy })),
		exit: median(pick(r.samples, func(s fleetSample) time.Duration { return s.exit })),
		tail: median(pick(r.samples, func(s fleetSample) time.Duration { return s.exit - s.lastVerdict })),
		cpu:  median(pick(r.samples, func(s fleetSample) time.Duration { return s.cpu })),
		rss:  medianInt(pick(r.samples, func(s fleetSample) int64 { return s.rss })),
	}
	if len(r.samples) > 0 && !slices.ContainsFunc(r.samples, func(s fleetSample) bool { return !s.hasPasses }) {
		// (Durations carry the medians of the counts, in thousandths.)
		m.passes = float64(median(pick(r.samples, func(s fleetSample) time.Duration { return time.Duration(s.passes * 1000) }))) / 1000
		m.hasPasses = true
	}
	return m
}

// writeRow writes a row of a fleet's table; a row of another build than base (this one's, on
// the same fleet and command) gets the ratio of each measure to base's, where both are known.
func writeRow(b *strings.Builder, r, base *fleetRow, runCap time.Duration) {
	m := mediansOf(r)
	last := ms(m.last)
	if m.ok < r.healthy {
		last = "never, for " + strconv.Itoa(r.healthy-m.ok)
	}
	if killed := len(slices.DeleteFunc(slices.Clone(r.samples), func(s fleetSample) bool { return !s.killed })); killed > 0 {
		fmt.Fprintf(b, "| `%s` | %s | %d of %d | %s | not within %s: stopped in %d of %d runs | | | | |\n", r.command, r.tool, m.ok, r.healthy, last,
			runCap, killed, len(r.samples))
		return
	}
	perCluster := float64(m.cpu.Microseconds()) / 1000 / float64(r.clusters)
	exit, rss, cpu := ms(m.exit), fmt.Sprintf("%d MiB", m.rss>>20), fmt.Sprintf("%.1f ms", perCluster)
	passes := ""
	if m.hasPasses {
		passes = fmt.Sprintf("%.1f", m.passes)
	}
	if base != nil && base != r && !anyKilled(base) {
		a := mediansOf(base)
		if m.ok == r.healthy && a.ok == base.healthy {
			last += ratioText(float64(m.last), float64(a.last))
		}
		exit += ratioText(float64(m.exit), float64(a.exit))
		rss += ratioText(float64(m.rss), float64(a.rss))
		cpu += ratioText(float64(m.cpu), float64(a.cpu))
		if m.hasPasses && a.hasPasses {
			passes += ratioText(m.passes, a.passes)
		}
	}
	fmt.Fprintf(b, "| `%s` | %s | %d of %d | %s | %s | %s | %s | %s | %s |\n", r.command, r.tool, m.ok, r.healthy, last, exit, ms(m.tail), rss, cpu, passes)
}

// ratioText is " (a/b×)", or nothing when b is not a measure.
func ratioText(a, b float64) string {
	if b <= 0 {
		return ""
	}
	return fmt.Sprintf(" (%.2f×)", a/b)
}

// writeBusy is the table of the runs with busy processes beside app-status: the healthy
// clusters that were Current, and what the others said, next to the quiet runs.
func writeBusy(b *strings.Builder, r *fleetRow, n int, quiet *fleetRow) {
	fmt.Fprintf(b, "### %d clusters, %d busy processes beside app-status\n\n", n, r.busy)
	b.WriteString("A runner shared with other jobs: each busy process is a shell loop that never sleeps. A healthy cluster that is not Current by the timeout must say that the runner was short of CPU (the Go scheduler's latency, `/sched/latencies:seconds`, or the kernel's count of its threads' wait for a CPU), never blame its server.\n\n")
	b.WriteString("| Machine | Healthy clusters Current | Not Current, saying the runner was short of CPU | Not Current, blaming the server | Last healthy verdict | Exit | CPU per cluster |\n|---|---|---|---|---|---|---|\n")
	row := func(name string, r *fleetRow) {
		ok := medianInt(pick(r.samples, func(s fleetSample) int64 { return int64(s.healthyOK) }))
		starved := medianInt(pick(r.samples, func(s fleetSample) int64 { return int64(s.healthyStarved) }))
		blamed := slices.Max(pick(r.samples, func(s fleetSample) int { return s.healthyBlamed }))
		last := median(pick(r.samples, func(s fleetSample) time.Duration { return s.lastHealthy }))
		exit := median(pick(r.samples, func(s fleetSample) time.Duration { return s.exit }))
		cpu := median(pick(r.samples, func(s fleetSample) time.Duration { return s.cpu }))
		fmt.Fprintf(b, "| %s | %d of %d | %d | %d (most in a run) | %s | %s | %.1f ms |\n", name, ok, r.healthy, starved, blamed, ms(last), ms(exit),
			float64(cpu.Microseconds())/1000/float64(n))
	}
	if quiet != nil {
		row("quiet", quiet)
	}
	row(fmt.Sprintf("%d busy processes", r.busy), r)
	b.WriteString("\n")
}

func credentialsText(kind string) string {
	switch kind {
	case credsCert:
		return "every kubeconfig carries its own client certificate and RSA 2048 key (made at the start, signed by one CA), and the servers speak TLS and verify them, as kubeadm's and kind's clusters do"
	case credsToken:
		return "every kubeconfig carries its own bearer token, over TLS"
	}
	return "every kubeconfig carries the same token, over plain HTTP"
}

func anyKilled(r *fleetRow) bool {
	return slices.ContainsFunc(r.samples, func(s fleetSample) bool { return s.killed })
}

// killedNote marks a run stopped at the run cap in the log.
func killedNote(s fleetSample) string {
	if s.killed {
		return " (stopped at the run cap)"
	}
	return ""
}

// fleetArgs is the command line with every path cut to its last element and values with
// spaces quoted, for the report.
func fleetArgs(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if filepath.IsAbs(a) {
			a = filepath.Base(a)
		}
		if strings.ContainsAny(a, " ()") {
			a = strconv.Quote(a)
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}

func fleetPlural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// fleetChart draws four panels: the share of healthy clusters Current by the timeout (each
// tool), when the last one was, the time from the last verdict to the exit (each tool), and the
// peak RSS, for every fleet size (verify).
func fleetChart(cfg fleetConfig, rows []*fleetRow, began time.Time) ([]byte, error) {
	const w, h, cols = 1680, 400, 4
	c := canvas{image.NewRGBA(image.Rect(0, 0, w, h))}
	c.fill(c.Bounds(), white)
	c.text(14, 22, fmt.Sprintf("app-status fleet benchmark, %s, %d CPUs: verify, %s timeout, a fifth of the clusters hung, throttled or failing (see fleet-benchmark.md)",
		began.Format("2006-01-02"), runtime.NumCPU(), cfg.timeout), black)
	cell := func(i int) image.Rectangle {
		cw := w / cols
		return image.Rect(i*cw+4, 38, i*cw+cw-4, h-4)
	}
	var shareNames, ownNames []string
	var share, last, rss, tail []float64
	var shareColors []int // app-status blue, the peer orange
	for _, r := range rows {
		if r.command != "verify" || r.busy > 0 {
			continue
		}
		ok := int(medianInt(pick(r.samples, func(s fleetSample) int64 { return int64(s.healthyOK) })))
		name, color := strconv.Itoa(r.clusters), 0
		if r.tool != "app-status" {
			name, color = name+" before", 1
		}
		shareNames, share = append(shareNames, name), append(share, 100*float64(ok)/float64(r.healthy))
		shareColors = append(shareColors, color)
		if slices.ContainsFunc(r.samples, func(s fleetSample) bool { return s.killed }) {
			tail = append(tail, cfg.runCap.Seconds())
		} else {
			tail = append(tail, median(pick(r.samples, func(s fleetSample) time.Duration { return s.exit - s.lastVerdict })).Seconds())
		}
		if r.tool == "app-status" {
			ownNames = append(ownNames, strconv.Itoa(r.clusters))
			last = append(last, median(pick(r.samples, func(s fleetSample) time.Duration { return s.lastHealthy })).Seconds())
			rss = append(rss, float64(medianInt(pick(r.samples, func(s fleetSample) int64 { return s.rss })))/(1<<20))
		}
	}
	p := newPanel(c, cell(0), "Healthy clusters Current by the timeout", "% of the healthy ones, by clusters", 100)
	p.coloredBars(shareNames, share, shareColors, func(v float64) string { return fmt.Sprintf("%.0f%%", v) })
	own := make([]int, len(ownNames)) // all app-status: blue
	p = newPanel(c, cell(1), "Last healthy cluster's verdict (app-status)", "s, by clusters", maxOf(last))
	p.coloredBars(ownNames, last, own, func(v float64) string { return fmt.Sprintf("%.1f s", v) })
	p = newPanel(c, cell(2), "Last verdict to exit", "s, by clusters (a stopped run: the run cap)", maxOf(tail))
	p.coloredBars(shareNames, tail, shareColors, func(v float64) string { return fmt.Sprintf("%.1f s", v) })
	p = newPanel(c, cell(3), "Peak RSS (app-status)", "MiB, by clusters", maxOf(rss))
	p.coloredBars(ownNames, rss, own, func(v float64) string { return fmt.Sprintf("%.0f MiB", v) })
	var buf bytes.Buffer
	if err := png.Encode(&buf, c.RGBA); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
