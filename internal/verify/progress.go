package verify

import (
	"sync"
	"time"

	"github.com/org/app-status-action/internal/result"
)

// reporter hands progress to the caller's Progress function from a goroutine of its own, so a
// slow writer (a blocked terminal, a full pipe) never holds up a cluster: a cluster's state
// change replaces its previous one not yet delivered, repeats are dropped, and a final verdict
// is always delivered.
type reporter struct {
	fn   func(Progress)
	mu   sync.Mutex
	cond *sync.Cond
	// queue holds the clusters with something to deliver, in order; pending their latest.
	queue   []string
	pending map[string][]Progress
	last    map[string]string
	closed  bool
	done    chan struct{}
}

// closeWait is how long close waits for a stuck Progress to take the last verdicts.
const closeWait = 5 * time.Second

func newReporter(fn func(Progress)) *reporter {
	r := &reporter{fn: fn, pending: map[string][]Progress{}, last: map[string]string{}, done: make(chan struct{})}
	r.cond = sync.NewCond(&r.mu)
	if fn == nil {
		close(r.done)
		return r
	}
	go r.deliver()
	return r
}

func (r *reporter) report(cluster string, elapsed time.Duration, verdict result.Verdict, message string, final bool) {
	if r.fn == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	key := string(verdict) + "\x00" + message
	if !final && r.last[cluster] == key {
		return
	}
	r.last[cluster] = key
	p := Progress{Cluster: cluster, Elapsed: elapsed, Verdict: verdict, Message: message, Final: final}
	queued := r.pending[cluster]
	if len(queued) == 0 {
		r.queue = append(r.queue, cluster)
	}
	if n := len(queued); n > 0 && !queued[n-1].Final {
		queued[n-1] = p // not delivered yet: the newer state replaces it
	} else {
		queued = append(queued, p)
	}
	r.pending[cluster] = queued
	r.cond.Signal()
}

func (r *reporter) deliver() {
	defer close(r.done)
	for {
		r.mu.Lock()
		for len(r.queue) == 0 && !r.closed {
			r.cond.Wait()
		}
		if len(r.queue) == 0 {
			r.mu.Unlock()
			return
		}
		cluster := r.queue[0]
		r.queue = r.queue[1:]
		batch := r.pending[cluster]
		delete(r.pending, cluster)
		r.mu.Unlock()
		for _, p := range batch {
			r.fn(p)
		}
	}
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
