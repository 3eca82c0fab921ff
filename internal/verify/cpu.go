package verify

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime/metrics"
	"sync"
	"time"

	"github.com/org/app-status-action/internal/assess"
)

// A client short of CPU looks, from inside, like a server that does not answer: the answer is
// in the socket, but the goroutine that would read it waits for a CPU, and a deadline fires
// first. On a busy runner (a fleet's worth of TLS handshakes and lists on two cores, or other
// jobs beside it) that would blame healthy API servers. cpuWatch tells the two apart with the
// Go scheduler's own measure, the time runnable goroutines waited for a CPU
// (/sched/latencies:seconds): a wait for an answer that ended while goroutines waited this
// long says nothing about the server.

// starvedLatency is the scheduling latency (99th percentile of a window) above which the client
// counts as short of CPU: a request takes a dozen scheduling turns, so at this latency a few
// seconds go by without the server being slow.
const starvedLatency = 250 * time.Millisecond

// cpuSampleEvery is how often the run samples the scheduler's histogram; cpuHistory how long
// it keeps the windows one by one (older ones are kept as their worst).
const (
	cpuSampleEvery = 250 * time.Millisecond
	cpuHistory     = 15 * time.Minute
)

const schedLatencies = "/sched/latencies:seconds"

// cpuWatch keeps the scheduling latency of the run, window by window.
type cpuWatch struct {
	read func() *metrics.Float64Histogram
	// readOS is how long this process's threads have run and have waited for a CPU, as the
	// kernel counts them (ok false where it does not say).
	readOS func() (running, waiting time.Duration, ok bool)
	clock  func() time.Time

	mu      sync.Mutex
	last    []uint64  // cumulative counts at the last sample
	lastAt  time.Time // when it was taken
	lastRun time.Duration
	lastOS  time.Duration // the threads' wait for a CPU at the last sample
	hasOS   bool
	windows []cpuWindow
	older   time.Duration // the worst latency of the windows dropped from windows
}

// cpuWindow is what a window between two samples says: the 99th percentile of the scheduling
// latency, and how long the process's threads waited for a CPU for every second they ran (the
// kernel's measure, which also sees a process that gets its turns at once but short ones, as
// among many processes on few cores).
type cpuWindow struct {
	start, end time.Time
	p99        time.Duration
	waitPerRun float64
}

// starved says whether the window was short of CPU: goroutines waited starvedLatency or more
// to run, or the threads waited for a CPU at least as long as they ran, and for half the
// window or more.
func (w cpuWindow) starved() bool { return w.p99 >= starvedLatency || w.waitPerRun >= 1 }

func newCPUWatch(clock func() time.Time) *cpuWatch {
	w := &cpuWatch{read: readSchedLatencies, readOS: readThreadSchedstat, clock: clock}
	w.sample()
	return w
}

// readThreadSchedstat sums, over this process's threads, the time run and the time waited on
// a run queue (/proc/self/task/*/schedstat, in nanoseconds, Linux).
func readThreadSchedstat() (running, waiting time.Duration, ok bool) {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return 0, 0, false
	}
	for _, t := range tasks {
		data, err := os.ReadFile(filepath.Join("/proc/self/task", t.Name(), "schedstat"))
		if err != nil {
			continue // a thread that ended
		}
		var run, wait, slices int64
		if _, err := fmt.Sscan(string(data), &run, &wait, &slices); err != nil {
			return 0, 0, false
		}
		running, waiting = running+time.Duration(run), waiting+time.Duration(wait)
	}
	return running, waiting, true
}

// readSchedLatencies reads the runtime's histogram of scheduling latencies.
func readSchedLatencies() *metrics.Float64Histogram {
	s := []metrics.Sample{{Name: schedLatencies}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindFloat64Histogram {
		return nil
	}
	return s[0].Value.Float64Histogram()
}

// run samples every cpuSampleEvery until stop is closed.
func (w *cpuWatch) run(stop <-chan struct{}) {
	t := time.NewTicker(cpuSampleEvery)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			w.sample()
		}
	}
}

// sample closes a window: the latencies recorded since the last sample. The histogram is read
// under the lock, so that a sample that stalled cannot record older counts after a newer one.
func (w *cpuWatch) sample() {
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.clock()
	if !w.lastAt.IsZero() && now.Sub(w.lastAt) < cpuSampleEvery/4 {
		return // a window that short says little; the next sample takes it in
	}
	h := w.read()
	if h == nil {
		return
	}
	var run, wait time.Duration
	hasOS := false
	if w.readOS != nil {
		run, wait, hasOS = w.readOS()
	}
	if w.last != nil && len(w.last) == len(h.Counts) {
		win := cpuWindow{start: w.lastAt, end: now, p99: percentile99(h, w.last)}
		if hasOS && w.hasOS {
			// Threads that ended take their counts with them: a window whose sums went back
			// says nothing.
			dRun, dWait := run-w.lastRun, wait-w.lastOS
			if dRun > 0 && dWait >= dRun && dWait >= now.Sub(w.lastAt)/2 {
				win.waitPerRun = float64(dWait) / float64(dRun)
			}
		}
		w.windows = append(w.windows, win)
		for len(w.windows) > 0 && now.Sub(w.windows[0].end) > cpuHistory {
			w.older = max(w.older, w.windows[0].p99)
			w.windows = w.windows[1:]
		}
	}
	w.last, w.lastAt = append(w.last[:0], h.Counts...), now
	w.lastRun, w.lastOS, w.hasOS = run, wait, hasOS
}

// percentile99 is the lower bound of the bucket holding the 99th percentile of the counts
// added since last: an estimate that never overstates the wait.
func percentile99(h *metrics.Float64Histogram, last []uint64) time.Duration {
	var total uint64
	for i, c := range h.Counts {
		if c < last[i] {
			return 0 // counts never go back: not a window
		}
		total += c - last[i]
	}
	if total == 0 {
		return 0
	}
	rank := total - total/100 // the first count at or above the 99th percentile
	var seen uint64
	for i, c := range h.Counts {
		seen += c - last[i]
		if seen >= rank {
			lower := h.Buckets[i]
			if math.IsInf(lower, -1) || lower <= 0 {
				return 0
			}
			if math.IsInf(lower, 1) {
				return time.Hour
			}
			return time.Duration(lower * float64(time.Second))
		}
	}
	return 0
}

// worstSince is the worst scheduling latency of the windows that overlap [since, now]; it
// closes the current window first.
func (w *cpuWatch) worstSince(since time.Time) time.Duration {
	if w == nil {
		return 0
	}
	w.sample()
	w.mu.Lock()
	defer w.mu.Unlock()
	var worst time.Duration
	if len(w.windows) > 0 && since.Before(w.windows[0].end.Add(-cpuSampleEvery)) {
		worst = w.older
	}
	for i := len(w.windows) - 1; i >= 0 && w.windows[i].end.After(since); i-- {
		worst = max(worst, w.windows[i].p99)
	}
	return worst
}

// cpuShortage is how short of CPU a wait was: its worst windows' measures.
type cpuShortage struct {
	latency    time.Duration // goroutines' wait to run (99th percentile)
	waitPerRun float64       // the threads' wait for a CPU per second run
}

// starvedShare is the share of [since, now] that this client spent short of CPU, and how
// short it was in those windows.
func (w *cpuWatch) starvedShare(since time.Time) (float64, cpuShortage) {
	if w == nil {
		return 0, cpuShortage{}
	}
	w.sample()
	w.mu.Lock()
	defer w.mu.Unlock()
	now := w.clock()
	if !now.After(since) {
		return 0, cpuShortage{}
	}
	var starved time.Duration
	var worst cpuShortage
	for i := len(w.windows) - 1; i >= 0 && w.windows[i].end.After(since); i-- {
		win := w.windows[i]
		if !win.starved() {
			continue
		}
		starved += win.end.Sub(maxTime(win.start, since))
		worst.latency, worst.waitPerRun = max(worst.latency, win.p99), max(worst.waitPerRun, win.waitPerRun)
	}
	return float64(starved) / float64(now.Sub(since)), worst
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// starvedSince says whether the client was short of CPU for at least half of the time since
// then (a wait for an answer that long may be the client's, not the server's), and how short.
// A moment's load is no excuse for a server that stays silent.
func (w *cpuWatch) starvedSince(since time.Time) (cpuShortage, bool) {
	share, worst := w.starvedShare(since)
	return worst, share >= 0.5
}

// facts are c as the decision words it (assess.CPUShortage): the goroutines' latency only when
// it is a shortage.
func (c cpuShortage) facts() assess.CPUShortage {
	short := assess.CPUShortage{WaitPerRun: c.waitPerRun}
	if c.latency >= starvedLatency {
		short.Latency = c.latency
	}
	return short
}

// starvedNote says why a wait that timed out may not be the server's doing.
func starvedNote(c cpuShortage) string {
	return c.facts().Note()
}
