package verify

import (
	"sync"
	"time"

	"github.com/org/app-status-action/internal/result"
)

// reporter serialises progress callbacks and drops repeats, so a person sees each change of a
// cluster's state once, when it happens.
type reporter struct {
	mu   sync.Mutex
	fn   func(Progress)
	last map[string]string
}

func newReporter(fn func(Progress)) *reporter {
	return &reporter{fn: fn, last: map[string]string{}}
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
	r.fn(Progress{Cluster: cluster, Elapsed: elapsed, Verdict: verdict, Message: message, Final: final})
}
