// Package verify decides whether a Flux app is rolled out on each of many clusters: it
// connects to every cluster concurrently, watches the requested Kustomizations and
// HelmReleases and every object their inventories list, and returns one verdict per cluster as
// soon as it is known (Current, or a precise failure), or when the timeout passes. A cluster's
// failure is data in its result, never an error that hides the other clusters' verdicts.
package verify

import (
	"context"
	"crypto/tls"
	"sync"
	"time"

	"golang.org/x/sync/semaphore"
	"k8s.io/client-go/rest"

	"github.com/org/app-status-action/internal/assess"
	"github.com/org/app-status-action/internal/classify"
	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
)

// Target is one cluster to verify.
type Target struct {
	Name string
	// Config connects to the cluster. It is nil when the kubeconfig cannot be used, and Invalid
	// then says why (the cluster gets the InvalidConfig verdict without being contacted).
	Config  *rest.Config
	Invalid string
}

// Request is what to verify, where, and how long to wait.
type Request struct {
	Targets   []Target
	Resources []flux.Ref
	// Revision is the revision every resource must have applied; zero accepts any.
	Revision flux.Revision
	// Timeout bounds the whole run; zero means DefaultTimeout.
	Timeout time.Duration
	// MaxParallel bounds how many clusters connect and make their first lists at once (the
	// part that costs CPU and memory); a cluster that waits holds no slot, nor does one whose
	// first lists took longer than 5s. Zero means DefaultMaxParallel.
	MaxParallel int
	// FailFast stops the other clusters once one has failed.
	FailFast bool
	// Workloads also verifies the objects in the inventories, not only the Flux objects.
	Workloads bool
	// FailOnSuspended fails a cluster where a nested Flux object (one an inventory lists, not
	// a requested one) is suspended; by default it is reported and skipped, as teams suspend
	// a sub-Kustomization on purpose. A suspended requested object always fails.
	FailOnSuspended bool
	// Reconcile asks Flux to reconcile the requested objects and their sources before it
	// verifies (the only writes a run makes); ReconcileOff only reads.
	Reconcile ReconcileMode
	// Snapshot returns the state as it is now instead of waiting (app-status get).
	Snapshot bool
	// Classify holds the rollout-failure classifier's thresholds.
	Classify classify.Options
	// NotFoundGrace is how long a requested Flux object may be missing before the cluster is
	// NotFound, unless a Kustomization or ResourceSet of the cluster may still create it;
	// zero means assess.DefaultNotFoundGrace.
	NotFoundGrace time.Duration
	// Progress, when set, is called whenever a cluster's state changes, and once with its
	// verdict, from one goroutine of its own: a slow Progress never holds up a verdict, and
	// repeated changes of a cluster may be coalesced while it catches up; the final one never
	// is. Run returns once every final call has returned, or a few seconds after the verdicts
	// when Progress is stuck.
	Progress func(Progress)
	// ProgressSteps also reports the run's internal steps (Progress.Step): each list,
	// discovery of a kind, read of Helm's storage, the connection before it answers, and
	// every phase of a Flux reconcile after the first. By default Progress hears only what a
	// person follows a cluster by.
	ProgressSteps bool
	// Clock returns the current time; nil means time.Now.
	Clock func() time.Time
	// Stats, when set, is filled with what the run's engine did beyond its verdicts (the
	// benchmarks read it); Run writes it before it returns.
	Stats *Stats

	// cpu tells the client's own wait for a CPU apart from a server's silence (set by Run).
	cpu *cpuWatch
	// onHandshake and onTurnWait, when set, are told of every cluster's TLS handshakes and of
	// every cluster that must wait for its turn, once it has parked or chosen not to (tests).
	onHandshake func(tls.ConnectionState)
	onTurnWait  func(cluster string, parked bool)
}

// Progress is a change in one cluster's state.
type Progress struct {
	Cluster string
	Elapsed time.Duration
	// Verdict is the verdict so far: InProgress while waiting, the final verdict when Final.
	Verdict result.Verdict
	Message string
	// Step marks an internal step of the run (a list, discovery of a kind, a read of Helm's
	// storage, connecting, the next phase of a Flux reconcile already reported): sent only
	// when Request.ProgressSteps is set. The other changes are what a person acts on:
	// connected, Flux asked to reconcile, the revision applied, what the cluster waits for (a
	// Flux object's condition, a named workload and its status, a failure within its grace
	// period), and the verdict.
	Step  bool
	Final bool
}

// Stats is the engine's work in a run, cluster by cluster.
type Stats struct {
	// Passes is how many times each cluster's state was judged (assess.Assess, a pass
	// over its whole tree), in the order of Request.Targets.
	Passes []int
}

// The defaults of Request.Timeout, Request.MaxParallel and Request.NotFoundGrace.
const (
	DefaultTimeout       = 10 * time.Minute
	DefaultMaxParallel   = 20
	DefaultNotFoundGrace = assess.DefaultNotFoundGrace
)

func (r Request) withDefaults() Request {
	if r.Timeout <= 0 {
		r.Timeout = DefaultTimeout
	}
	if r.MaxParallel <= 0 {
		r.MaxParallel = DefaultMaxParallel
	}
	if r.Clock == nil {
		r.Clock = time.Now
	}
	return r
}

// Run verifies every target concurrently and returns their verdicts sorted by cluster name.
// Every cluster starts at once; at most MaxParallel of them connect and list at the same time
// (the part that costs CPU and memory), while waiting costs nothing. Run returns when every
// cluster has a verdict: at the latest when the timeout passes or ctx is cancelled, in which
// case the clusters still waiting get the Timeout or Cancelled verdict with the state they had
// reached (a Timeout on a failure held for the run's own reconcile request reads that
// failure's evidence first, for at most heldEvidenceGrace).
func Run(ctx context.Context, req Request) result.Run {
	req = req.withDefaults()
	start := req.Clock()
	ctx, cancel := context.WithTimeoutCause(ctx, req.Timeout, errTimeout)
	defer cancel()
	// failFast is cancelled when a cluster fails and FailFast is set; it never cancels ctx
	// itself, so the timeout and the caller's cancellation stay distinguishable.
	failFast, stopOthers := context.WithCancelCause(ctx)
	defer stopOthers(nil)

	if req.cpu == nil {
		req.cpu = newCPUWatch(time.Now)
		stopCPU, cpuDone := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(cpuDone)
			req.cpu.run(stopCPU)
		}()
		defer func() {
			close(stopCPU)
			<-cpuDone
		}()
	}
	report := newReporter(req.Progress, req.ProgressSteps)
	slots := newConnectSlots(req.MaxParallel)
	requests := newRequestSlots(req.MaxParallel)
	results := make([]result.Cluster, len(req.Targets))
	// passes is written by index, as results are.
	passes := make([]int, len(req.Targets))
	var wg sync.WaitGroup
	for i, target := range req.Targets {
		wg.Go(func() {
			c := verifyCluster(failFast, req, target, report, slots, requests, &passes[i])
			results[i] = c
			if req.FailFast && !c.Ready() && c.Verdict != result.VerdictCancelled {
				stopOthers(errFailFast)
			}
		})
	}
	wg.Wait()
	report.close()
	if req.Stats != nil {
		req.Stats.Passes = passes
	}

	resources := make([]string, len(req.Resources))
	for i, r := range req.Resources {
		resources[i] = r.ID()
	}
	return result.NewRun(resources, req.Revision.String(), results, req.Clock().Sub(start))
}

// connectSlots bounds how many clusters connect and list at once: a semaphore, whose waiters
// take their turns in the order they came.
type connectSlots struct{ sem *semaphore.Weighted }

func newConnectSlots(n int) *connectSlots {
	return &connectSlots{sem: semaphore.NewWeighted(int64(n))}
}

// acquire takes a slot, or reports false when ctx ends first.
func (s *connectSlots) acquire(ctx context.Context) bool {
	return s.sem.Acquire(ctx, 1) == nil
}

// tryAcquire takes a slot if one is free, without waiting.
func (s *connectSlots) tryAcquire() bool { return s.sem.TryAcquire(1) }

// releaser returns a function that gives the slot back, once however often it is called.
func (s *connectSlots) releaser() func() {
	return sync.OnceFunc(func() { s.sem.Release(1) })
}
