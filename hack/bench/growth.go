package main

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/org/app-status-action/internal/testing/testbed"
)

// growthResult is the scale measure at every cluster count.
type growthResult struct {
	Objects int
	Wanted  []int
	Points  []growthPoint
	// ClusterRSS is the resident memory of each control-plane-only cluster (etcd and
	// kube-apiserver) once populated.
	ClusterRSS    []uint64
	APIServerArgs []string
	// Cut says why the largest counts were not reached, when they were not.
	Cut string
	// Small and Large are the requests to verify, on one cluster, an app of SmallObjects
	// objects and one of Objects objects of the same kinds.
	SmallObjects int
	Small, Large requestCounts
}

// growthPoint is the measure at one cluster count.
type growthPoint struct {
	Clusters          int
	Get, Verify       []time.Duration // wall time of the process
	GetRSS, VerifyRSS []int64         // peak RSS, bytes
	GetReq, VerifyReq requestCounts
}

const (
	scaleAppName = "bench-scale"
	smallAppName = "bench-small"
	smallObjects = 20
)

func measureGrowth(ctx context.Context, e *env, cfg config) (*growthResult, error) {
	res := &growthResult{Objects: cfg.objects, Wanted: cfg.growth, APIServerArgs: cfg.apiserverArgs, SmallObjects: smallObjects}
	app := scaleApp{Name: scaleAppName, Objects: cfg.objects, Commit: commitFor(scaleAppName, 1)}
	var beds []*testbed.Bed
	defer func() {
		logf("stopping the %d growth beds", len(beds))
		for _, b := range beds {
			b.Close()
		}
	}()
	var clusters []*testbed.Cluster
	perCluster := uint64(450 << 20) // a first guess, until measured
	for _, want := range cfg.growth {
		if need := want - len(clusters); need > 0 {
			avail := meminfo("MemAvailable")
			fit := 0
			if avail > cfg.minFree {
				fit = int((avail - cfg.minFree) / perCluster)
			}
			n := min(need, fit)
			if n < need {
				res.Cut = fmt.Sprintf("%d clusters did not fit: with %s available and %s to keep free, at %s per cluster, %d more fitted after %d",
					want, mib(avail), mib(cfg.minFree), mib(perCluster), n, len(clusters))
				logf("growth: %s", res.Cut)
			}
			if n > 0 {
				logf("growth: starting %d control-plane-only clusters (%d so far; %s available)", n, len(clusters), mib(avail))
				bed, err := testbed.Start(ctx, testbed.Options{Clusters: n, ControlPlaneOnly: true, APIServerArgs: cfg.apiserverArgs,
					Prefix: fmt.Sprintf("bench-g%d", len(beds)+1), Log: logf})
				if err != nil {
					return nil, err
				}
				beds = append(beds, bed)
				if err := populate(ctx, bed.Clusters, app, len(clusters) == 0); err != nil {
					return nil, err
				}
				for _, c := range bed.Clusters {
					res.ClusterRSS = append(res.ClusterRSS, processRSS("/clusters/"+c.Name+"/"))
				}
				perCluster = slices.Max(res.ClusterRSS) * 11 / 10
				clusters = append(clusters, bed.Clusters...)
			}
		}
		n := min(want, len(clusters))
		if len(res.Points) > 0 && res.Points[len(res.Points)-1].Clusters == n {
			break
		}
		p, err := measurePoint(ctx, e, cfg, clusters[:n], app)
		if err != nil {
			return nil, err
		}
		res.Points = append(res.Points, p)
		if len(res.Points) == 1 {
			if res.Small, err = countRequests(ctx, clusters[:1], smallAppName, gitRevision(commitFor(smallAppName, 1)), false); err != nil {
				return nil, err
			}
			res.Large = p.VerifyReq
			if n > 1 {
				if res.Large, err = countRequests(ctx, clusters[:1], app.Name, gitRevision(app.Commit), false); err != nil {
					return nil, err
				}
			}
		}
		if res.Cut != "" {
			break
		}
	}
	if cfg.hold {
		logf("growth: holding %d clusters; clusters file %s; interrupt to tear them down", len(clusters), e.clustersFile)
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return res, nil
}

// populate writes the scale app on every cluster, and the small app on the first one when
// first is set.
func populate(ctx context.Context, clusters []*testbed.Cluster, app scaleApp, first bool) error {
	start := time.Now()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(6)
	for i, c := range clusters {
		g.Go(func() error {
			if i == 0 && first {
				small := scaleApp{Name: smallAppName, Objects: smallObjects, Commit: commitFor(smallAppName, 1)}
				if err := small.populate(gctx, c); err != nil {
					return err
				}
			}
			return app.populate(gctx, c)
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	logf("growth: wrote %d objects with their status on %d clusters in %s", app.Objects, len(clusters), time.Since(start).Round(time.Millisecond))
	return nil
}

// measurePoint times `app-status get` and `verify` on the clusters, runs times each, and
// counts their API requests once, in process.
func measurePoint(ctx context.Context, e *env, cfg config, clusters []*testbed.Cluster, app scaleApp) (growthPoint, error) {
	p := growthPoint{Clusters: len(clusters)}
	if err := e.useClusters(clusters, fmt.Sprintf("growth-%d", len(clusters))); err != nil {
		return p, err
	}
	common := []string{"--clusters-file", e.clustersFile, "--resource", "kustomization/" + app.Name,
		"--max-parallel", fmt.Sprint(len(clusters)), "-o", "json", "--quiet"}
	for range cfg.runs {
		wall, rss, err := timeProcess(ctx, e.rusage, e.appStatus, append([]string{"get"}, common...)...)
		if err != nil {
			return p, fmt.Errorf("app-status get on %d clusters: %w", len(clusters), err)
		}
		p.Get, p.GetRSS = append(p.Get, wall), append(p.GetRSS, rss)
		wall, rss, err = timeProcess(ctx, e.rusage, e.appStatus, append([]string{"verify", "--revision", app.Commit, "--timeout", "2m"}, common...)...)
		if err != nil {
			return p, fmt.Errorf("app-status verify on %d clusters: %w", len(clusters), err)
		}
		p.Verify, p.VerifyRSS = append(p.Verify, wall), append(p.VerifyRSS, rss)
	}
	var err error
	if p.GetReq, err = countRequests(ctx, clusters, app.Name, "", true); err != nil {
		return p, err
	}
	if p.VerifyReq, err = countRequests(ctx, clusters, app.Name, gitRevision(app.Commit), false); err != nil {
		return p, err
	}
	logf("growth %2d clusters: get %s (peak RSS %s), verify %s (peak RSS %s); requests per cluster: get %.1f, verify %.1f",
		len(clusters), median(p.Get).Round(time.Millisecond), mib(uint64(medianInt(p.GetRSS))),
		median(p.Verify).Round(time.Millisecond), mib(uint64(medianInt(p.VerifyRSS))), p.GetReq.PerCluster, p.VerifyReq.PerCluster)
	return p, nil
}

// timeProcess runs a command through the rusage program and returns its wall time and peak
// resident memory; a non-zero exit is an error carrying its stderr.
func timeProcess(ctx context.Context, rusage, name string, args ...string) (time.Duration, int64, error) {
	cmd := exec.CommandContext(ctx, rusage, append([]string{name}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return 0, 0, fmt.Errorf("%s: %w: %s", filepath.Base(name), err, tailString(stderr.String(), 10))
	}
	var wall time.Duration
	var rss int64
	var code int
	if _, err := fmt.Sscanf(stdout.String(), "rusage %d %d %d", &wall, &rss, &code); err != nil {
		return 0, 0, fmt.Errorf("read the rusage of %s: %w (%q)", filepath.Base(name), err, stdout.String())
	}
	if code != 0 {
		return wall, rss, fmt.Errorf("%s exited %d: %s", filepath.Base(name), code, tailString(stderr.String(), 10))
	}
	return wall, rss, nil
}

func tailString(s string, n int) string {
	lines := bytes.Split(bytes.TrimRight([]byte(s), "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}
