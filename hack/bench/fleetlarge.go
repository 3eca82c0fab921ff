package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/org/app-status-action/internal/testing/fakeapi"
)

// largeRuns verifies a fleet of cfg.large clusters in one process (--large), with each tool
// the peer runs on too: `verify` only, with --large-timeout. Its servers live in helper
// processes (`bench fleet-servers`, --servers-per-process each: one process may hold 20,000
// files here, too few for 10,000 listeners and their connections), and each kubeconfig
// carries its own token over TLS: making 10,000 RSA keys would take longer than the runs.
func largeRuns(ctx context.Context, cfg fleetConfig, rusage, dir string, tools []fleetTool) ([]*fleetRow, string, error) {
	f, err := startLargeFleet(ctx, cfg, filepath.Join(dir, "large"))
	if err != nil {
		return nil, "", err
	}
	defer f.close()
	logf("%d clusters in one process: %s", cfg.large, f.mix)
	runCap := cfg.largeRunCap()
	var rows []*fleetRow
	for _, t := range tools {
		if t.binary == cfg.peer && cfg.peerCounts != nil && !cfg.peerCounts[cfg.large] {
			continue
		}
		r := &fleetRow{tool: t.name, command: "verify", clusters: cfg.large, healthy: len(f.healthy)}
		for i := range cfg.runs {
			files := cfg.runFiles(filepath.Dir(f.clustersFile), t, fmt.Sprintf("verify-%d-run%d", cfg.large, i+1))
			s, err := measureFleet(ctx, rusage, t.binary, "verify", f, cfg.largeTimeout, runCap, files)
			if err != nil {
				return nil, "", err
			}
			r.samples = append(r.samples, s)
			logf("  %s verify run %d: last healthy verdict %s (%d of %d), last verdict %s, exit %s%s, peak RSS %d MiB, CPU %s, passes per cluster %s",
				t.name, i+1, ms(s.lastHealthy), s.healthyOK, r.healthy, ms(s.lastVerdict), ms(s.exit), killedNote(s), s.rss>>20, ms(s.cpu), passesText(s))
		}
		rows = append(rows, r)
	}
	return rows, f.mix, nil
}

// startLargeFleet starts the servers of fleetPlan(cfg.large) in helper processes, as the
// shard benchmark does.
func startLargeFleet(ctx context.Context, cfg fleetConfig, dir string) (*fakeFleet, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	helpers, err := startShardedFleet(ctx, shardsConfig{clusters: cfg.large, perHost: cfg.perHost, objects: cfg.objects}, dir)
	if err != nil {
		return nil, err
	}
	f := &fakeFleet{helpers: helpers, clusters: cfg.large, healthy: map[string]bool{}, clustersFile: helpers.clustersFile}
	counts := map[fakeapi.Behaviour]int{}
	for _, c := range helpers.plan {
		counts[c.behaviour]++
		if c.behaviour == fakeapi.Healthy {
			f.healthy[c.name] = true
		}
	}
	f.mix = fmt.Sprintf("%d healthy, %d hung, %d throttled (429), %d failing (500)",
		counts[fakeapi.Healthy], counts[fakeapi.Hang], counts[fakeapi.Throttle], counts[fakeapi.Fail])
	return f, nil
}

// largeRunCap is how long a run on the --large fleet may take: its timeout, and room for the
// exit (the report of a large fleet is hundreds of MB).
func (cfg fleetConfig) largeRunCap() time.Duration {
	return max(cfg.runCap, cfg.largeTimeout+2*time.Minute)
}
