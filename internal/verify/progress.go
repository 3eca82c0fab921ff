package verify

import (
	"strings"
	"sync"
	"time"

	"github.com/org/app-status-action/internal/assess"
	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
)

// progressKind is what a progress event tells a person. It is set where the event is made,
// never guessed from its text.
type progressKind int

const (
	// progressState is what the cluster waits for now, as a person acts on it: a Flux
	// object's condition, a named workload and its status, a failure within its grace period.
	progressState progressKind = iota
	// progressStep is an internal step of the run: a list, discovery of a kind, a read of
	// Helm's storage, the connection before the server answered. Sent only with
	// Request.ProgressSteps.
	progressStep
	// progressPhase is a Flux controller at work on a reconcile (flux.Gate.Working): the
	// first of a run of phases is a state ("Building manifests…"), the phases after it steps.
	progressPhase
	// progressMilestone happens once in a cluster's run (connected, Flux asked to reconcile,
	// the revision applied): no later change replaces it before it is delivered.
	progressMilestone
	// progressFinal is the verdict.
	progressFinal
)

// reporter hands progress to the caller's Progress function from a goroutine of its own, so a
// slow writer (a blocked terminal, a full pipe) never holds up a cluster: a cluster's state
// change replaces its previous one not yet delivered (a step replaces only a step), repeats
// are dropped, and milestones and the final verdict are always delivered. Steps are dropped
// at once unless steps is set.
type reporter struct {
	fn    func(Progress)
	steps bool
	mu    sync.Mutex
	cond  *sync.Cond
	// queue holds the clusters with something to deliver, in order; pending their latest.
	queue   []string
	pending map[string][]queued
	last    map[string]string
	// inPhase holds the clusters whose last event other than a step was a phase.
	inPhase map[string]bool
	closed  bool
	done    chan struct{}
}

// queued is a progress event waiting for delivery, with its kind.
type queued struct {
	Progress
	kind progressKind
}

// closeWait is how long close waits for a stuck Progress to take the last verdicts.
const closeWait = 5 * time.Second

func newReporter(fn func(Progress), steps bool) *reporter {
	r := newProgressQueue(fn, steps)
	if fn == nil {
		close(r.done)
		return r
	}
	go r.deliver()
	return r
}

// newProgressQueue is a reporter that delivers nothing on its own: next takes what it holds.
func newProgressQueue(fn func(Progress), steps bool) *reporter {
	r := &reporter{fn: fn, steps: steps, pending: map[string][]queued{}, last: map[string]string{}, inPhase: map[string]bool{}, done: make(chan struct{})}
	r.cond = sync.NewCond(&r.mu)
	return r
}

func (r *reporter) report(cluster string, elapsed time.Duration, verdict result.Verdict, message string, kind progressKind) {
	if r.fn == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case kind == progressPhase && r.inPhase[cluster]:
		kind = progressStep // the next phase of the reconcile a person saw start
	case kind == progressPhase:
		kind = progressState
		r.inPhase[cluster] = true
	case kind != progressStep:
		r.inPhase[cluster] = false
	}
	if kind == progressStep && !r.steps {
		return
	}
	key := string(verdict) + "\x00" + message
	if kind != progressFinal && r.last[cluster] == key {
		return
	}
	r.last[cluster] = key
	p := queued{Progress: Progress{Cluster: cluster, Elapsed: elapsed, Verdict: verdict, Message: message,
		Step: kind == progressStep, Final: kind == progressFinal}, kind: kind}
	q := r.pending[cluster]
	if len(q) == 0 {
		r.queue = append(r.queue, cluster)
	}
	// Not delivered yet: a newer state replaces the states and steps it follows, a step only
	// the steps; milestones and verdicts stay.
	for len(q) > 0 && replaces(kind, q[len(q)-1].kind) {
		q = q[:len(q)-1]
	}
	r.pending[cluster] = append(q, p)
	r.cond.Signal()
}

// replaces reports whether an event of kind newer, not yet delivered, makes one of kind older
// before it say nothing a person needs.
func replaces(newer, older progressKind) bool {
	switch older {
	case progressStep:
		return newer == progressStep || newer == progressState
	case progressState:
		return newer == progressState
	}
	return false
}

func (r *reporter) deliver() {
	defer close(r.done)
	for {
		batch, ok := r.next(true)
		if !ok {
			return
		}
		for _, p := range batch {
			r.fn(p.Progress)
		}
	}
}

// next takes the events of the next cluster that has some, in order, waiting for one while
// wait is set and the reporter is open; ok is false when there is none to take.
func (r *reporter) next(wait bool) (batch []queued, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for wait && len(r.queue) == 0 && !r.closed {
		r.cond.Wait()
	}
	if len(r.queue) == 0 {
		return nil, false
	}
	cluster := r.queue[0]
	r.queue = r.queue[1:]
	batch = r.pending[cluster]
	delete(r.pending, cluster)
	return batch, true
}

// close delivers what is queued and returns, or gives up after closeWait.
func (r *reporter) close() {
	r.mu.Lock()
	r.closed = true
	r.cond.Signal()
	r.mu.Unlock()
	select {
	case <-r.done:
	case <-time.After(closeWait):
	}
}

// appliedMessage says which requested objects applied which revision: "Kustomization/
// flux-system/my-app applied main@sha1:5f1c0ff", the revision as Flux recorded it when it is
// the expected one, else as the user gave it. It is "" while a requested object has recorded
// no applied revision at all: a new object is "applied" with nothing to list, before its
// controller applied anything.
func appliedMessage(objects []result.FluxObject, want flux.Revision) string {
	var parts []string
	for _, fo := range objects {
		if fo.Owner != "" {
			continue
		}
		if fo.LastAppliedRevision == "" {
			return ""
		}
		rev := want.String()
		// (Health-checking, Flux applied the revision it attempts and records it applied
		// once the checks pass.)
		for _, r := range []string{fo.LastAttemptedRevision, fo.LastAppliedRevision} {
			if r != "" && want.Matches(r) {
				rev = flux.ShortRevision(r)
				break
			}
		}
		parts = append(parts, fo.ID+" applied "+rev)
	}
	return strings.Join(parts, "; ")
}

// progressOf is the progress kind of a reason to wait the decision gave.
func progressOf(p assess.Progress) progressKind {
	switch p {
	case assess.ProgressStep:
		return progressStep
	case assess.ProgressPhase:
		return progressPhase
	}
	return progressState
}
