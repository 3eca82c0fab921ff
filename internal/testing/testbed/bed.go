// Package testbed starts real Kubernetes clusters on this machine for tests: etcd,
// kube-apiserver, kube-controller-manager and kube-scheduler built from pinned modules, with kwok
// simulating nodes and pods. Each cluster gets the Flux CRDs (and the Flux Operator's
// ResourceSet and FluxReport), a flux-system namespace, simulated nodes and, on request, real
// kustomize-controller and helm-controller processes. An artifact server plays
// source-controller, and kwok Stages let a test give any pod the failure it needs. Everything
// is torn down on Close, and by a guard process when the test binary dies first.
package testbed

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"
)

// Options says what clusters to start.
type Options struct {
	// Clusters is how many clusters to start.
	Clusters int
	// Flux starts a real kustomize-controller and helm-controller for every cluster.
	Flux bool
	// Controllers picks the pinned minor of those two controllers: CurrentControllers (the
	// default) or PreviousControllers, for the tests that prove a verdict on both.
	Controllers Controllers
	// RealSources also starts the real source-controller for every cluster, an OCI registry
	// in-process (Bed.Registry) and a Git server (Bed.Git) it fetches from: publishing a
	// revision is pushing an artifact or a commit, as users do, and source-controller sees it
	// at its interval or when asked.
	// The test bed then does not play source-controller: PublishGit and the other Publish
	// helpers are not for such a bed.
	RealSources bool
	// ControllerDeployments represents each Flux controller of a cluster by a Deployment in
	// flux-system, as Flux installs it, whose availability follows the controller
	// (StopController, StartController; fluxdeploy.go).
	ControllerDeployments bool
	// Flagger also starts a real Flagger for every cluster, with its CRDs (StartFlagger).
	Flagger bool
	// Nodes is the number of simulated nodes per cluster (default 2).
	Nodes int
	// Prefix names the clusters <prefix>-<i> (default "bed").
	Prefix string
	// ControlPlaneOnly starts only etcd and kube-apiserver: no controller-manager, scheduler,
	// kwok or nodes, so nothing writes status. Cheap clusters for benchmarks at scale, whose
	// caller writes the Flux and workload status itself (see controlplane.go).
	ControlPlaneOnly bool
	// APIServerArgs are extra kube-apiserver flags, as key=value (e.g. "watch-cache=false").
	APIServerArgs []string
	// AuthenticationConfig, when set, is an AuthenticationConfiguration (apiserver.config.k8s.io)
	// written into the bed's folder and given to every kube-apiserver as --authentication-config:
	// the API servers then trust the JWT issuers it lists, besides their own certificates.
	AuthenticationConfig []byte
	// Log receives progress lines; nil discards them.
	Log func(format string, args ...any)
}

// Bed is a set of running clusters and the artifact server they fetch from.
type Bed struct {
	Bins      Bins
	Clusters  []*Cluster
	Artifacts *ArtifactServer
	// Registry is the OCI registry of a bed with RealSources, nil otherwise.
	Registry *Registry
	// Git is the Git server of a bed with RealSources, nil otherwise.
	Git *GitServer

	controllers Controllers
	workdir     string
	stages      string
	guard       *guard
	log         func(format string, args ...any)
	closed      sync.Once
}

// Start builds or finds the binaries and starts the clusters. Cluster creation is serialised
// (kwokctl picks free ports when it creates a cluster, so parallel creations collide, also across
// test binaries: a lock file guards it); the rest of each cluster's set-up runs in parallel.
func Start(ctx context.Context, opts Options) (_ *Bed, err error) {
	if opts.Clusters <= 0 {
		return nil, errors.New("testbed: Options.Clusters must be at least 1")
	}
	if opts.Nodes <= 0 {
		opts.Nodes = 2
	}
	if opts.Prefix == "" {
		opts.Prefix = "bed"
	}
	log := opts.Log
	if log == nil {
		log = func(string, ...any) {}
	}
	bins, err := FindBins(ctx)
	if err != nil {
		return nil, err
	}
	if err := bins.check(opts.Controllers.binaries()); err != nil {
		return nil, err
	}
	if opts.Flagger {
		if err := bins.check([]string{"flagger", "flagger-crds/crd.yaml"}); err != nil {
			return nil, err
		}
	}
	workdir, err := os.MkdirTemp("", "app-status-testbed-")
	if err != nil {
		return nil, fmt.Errorf("testbed: make work folder: %w", err)
	}
	b := &Bed{Bins: bins, controllers: opts.Controllers, workdir: workdir, log: log}
	defer func() {
		if err != nil {
			b.Close()
		}
	}()
	logDir := filepath.Join(workdir, "pod-logs")
	if err := writePodLogs(logDir, time.Now()); err != nil {
		return nil, err
	}
	b.stages = filepath.Join(workdir, "stages.yaml")
	if err := os.WriteFile(b.stages, stageManifests(logDir), 0o600); err != nil {
		return nil, fmt.Errorf("testbed: write kwok stages: %w", err)
	}
	if b.guard, err = startGuard(b.kwokWorkdir(), bins.Path("kwokctl")); err != nil {
		return nil, err
	}
	if b.Artifacts, err = startArtifactServer(); err != nil {
		return nil, err
	}
	if opts.RealSources {
		if b.Registry, err = startRegistry(); err != nil {
			return nil, err
		}
		if b.Git, err = startGitServer(workdir); err != nil {
			return nil, err
		}
	}

	start := time.Now()
	suffix := fmt.Sprintf("%d", os.Getpid()%100000)
	for i := range opts.Clusters {
		name := fmt.Sprintf("%s-%s-%d", opts.Prefix, suffix, i+1)
		c, err := b.createCluster(ctx, name, opts)
		if err != nil {
			return nil, err
		}
		b.Clusters = append(b.Clusters, c)
	}
	log("testbed: created %d clusters in %s", opts.Clusters, time.Since(start).Round(time.Millisecond))

	g, gctx := errgroup.WithContext(ctx)
	for _, c := range b.Clusters {
		g.Go(func() error { return c.setUp(gctx, opts) })
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	log("testbed: %d clusters ready (flux=%v, %s controllers) in %s", opts.Clusters, opts.Flux, opts.Controllers, time.Since(start).Round(time.Millisecond))
	return b, nil
}

// Close stops every controller and cluster and removes the work folder. It is safe to call
// more than once.
func (b *Bed) Close() {
	b.closed.Do(func() {
		var wg sync.WaitGroup
		for _, c := range b.Clusters {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c.stopControllers()
				c.delete()
			}()
		}
		wg.Wait()
		if b.Artifacts != nil {
			b.Artifacts.Close()
		}
		if b.Registry != nil {
			b.Registry.Close()
		}
		if b.Git != nil {
			b.Git.Close()
		}
		if b.guard != nil {
			b.guard.release()
		}
		if os.Getenv("APP_STATUS_KEEP_TESTBED") == "" {
			_ = os.RemoveAll(b.workdir)
		}
	})
}

// Workdir is the folder holding the clusters' files and the controllers' logs.
func (b *Bed) Workdir() string { return b.workdir }

func (b *Bed) kwokWorkdir() string { return filepath.Join(b.workdir, "kwok") }

// creationLock serialises kwokctl cluster creation across processes on this machine.
func creationLock() (unlock func(), err error) {
	path := filepath.Join(os.TempDir(), "app-status-testbed.lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("testbed: open creation lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("testbed: take creation lock: %w", err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		_ = f.Close()
	}, nil
}
