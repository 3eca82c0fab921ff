package verify

import (
	"math"
	"runtime/metrics"
	"strings"
	"testing"
	"time"
)

// TestCPUWatch: the windows' 99th percentile of scheduling latency, from the runtime's
// cumulative histogram, and which windows a wait overlaps.
func TestCPUWatch(t *testing.T) {
	t.Parallel()
	buckets := []float64{math.Inf(-1), 0, 0.001, 0.01, 0.1, 0.5, 1, 5, math.Inf(1)}
	counts := make([]uint64, len(buckets)-1)
	now := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	w := &cpuWatch{
		read: func() *metrics.Float64Histogram {
			return &metrics.Float64Histogram{Counts: append([]uint64(nil), counts...), Buckets: buckets}
		},
		clock: func() time.Time { return now },
	}
	w.sample()
	start := now
	tick := func(add map[int]uint64) {
		for i, n := range add {
			counts[i] += n
		}
		now = now.Add(time.Second)
		w.sample()
	}
	tick(map[int]uint64{2: 1000})        // quiet: 1 ms
	tick(map[int]uint64{2: 500, 6: 100}) // busy: 1 s for a sixth of the goroutines
	busyEnd := now
	tick(map[int]uint64{2: 1000, 5: 5}) // quiet again: 0.5 s for 0.5 %
	tick(map[int]uint64{})              // nothing ran
	tests := []struct {
		name  string
		since time.Time
		want  time.Duration
	}{
		{name: "the whole run", since: start, want: time.Second},
		{name: "from the busy window on", since: busyEnd.Add(-time.Second / 2), want: time.Second},
		{name: "after the busy window", since: busyEnd, want: time.Millisecond},
		{name: "now", since: now, want: 0},
	}
	for _, tt := range tests {
		if got := w.worstSince(tt.since); got != tt.want {
			t.Errorf("%s: worst latency %s, want %s", tt.name, got, tt.want)
		}
	}
	// Short of CPU means for half of the wait or more: a busy second does not excuse four
	// seconds of silence.
	shares := []struct {
		name    string
		since   time.Time
		share   float64
		starved bool
	}{
		{name: "the whole run", since: start, share: 0.25},
		{name: "from the middle of the busy window", since: busyEnd.Add(-time.Second / 2), share: 0.2},
		{name: "after the busy window", since: busyEnd, share: 0},
	}
	for _, tt := range shares {
		share, _ := w.starvedShare(tt.since)
		_, starved := w.starvedSince(tt.since)
		if share != tt.share || starved {
			t.Errorf("%s: short of CPU for %.2f of the time (starved %v), want %.2f (not starved)", tt.name, share, starved, tt.share)
		}
	}
	from := now
	tick(map[int]uint64{2: 100, 6: 100})
	if c, starved := w.starvedSince(from); !starved || c.latency != time.Second || !strings.Contains(starvedNote(c), "goroutines waited 1s or more to run") {
		t.Errorf("a busy second after %s: starved %v, %+v; want short of CPU, 1s", from, starved, c)
	}
	var none *cpuWatch
	if _, starved := none.starvedSince(start); starved {
		t.Errorf("no watch, yet short of CPU")
	}

	// Old windows are kept as their worst.
	for range int(cpuHistory/time.Second) + 10 {
		tick(map[int]uint64{2: 10})
	}
	if got := w.worstSince(start); got != time.Second {
		t.Errorf("after %s the run's worst is %s, want 1s", cpuHistory, got)
	}
	if got := w.worstSince(now.Add(-time.Minute)); got != time.Millisecond {
		t.Errorf("the last minute's worst is %s, want 1ms", got)
	}
	if n := len(w.windows); n > int(cpuHistory/time.Second)+1 {
		t.Errorf("%d windows kept", n)
	}
}

// TestCPUWatchReadsTheRuntime: the runtime serves the histogram this build reads.
func TestCPUWatchReadsTheRuntime(t *testing.T) {
	t.Parallel()
	if readSchedLatencies() == nil {
		t.Fatalf("the runtime has no %s histogram", schedLatencies)
	}
}

// TestCPUWatchSeesOtherProcesses: a process that gets its turns at once but short ones (many
// processes on few cores) shows in the kernel's count of the threads' wait for a CPU, not in
// the scheduler's latency: a window where the threads waited as long as they ran, for half
// of it or more, is short of CPU.
func TestCPUWatchSeesOtherProcesses(t *testing.T) {
	t.Parallel()
	buckets := []float64{0, 0.001, 3600}
	counts := []uint64{0, 0}
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	var running, waiting time.Duration
	w := &cpuWatch{
		read: func() *metrics.Float64Histogram {
			counts[0] += 1000 // every goroutine ran within a millisecond
			return &metrics.Float64Histogram{Counts: append([]uint64(nil), counts...), Buckets: buckets}
		},
		readOS: func() (time.Duration, time.Duration, bool) { return running, waiting, true },
		clock:  func() time.Time { return now },
	}
	w.sample()
	tick := func(run, wait time.Duration) {
		running, waiting, now = running+run, waiting+wait, now.Add(time.Second)
		w.sample()
	}
	quietFrom := now
	tick(900*time.Millisecond, 100*time.Millisecond) // its own work, on a free core
	tick(time.Second, 300*time.Millisecond)          // busy, a little waiting
	if _, starved := w.starvedSince(quietFrom); starved {
		t.Errorf("threads that waited less than they ran counted as short of CPU")
	}
	crowdedFrom := now
	tick(200*time.Millisecond, 1800*time.Millisecond) // a tenth of the cores, among others
	tick(100*time.Millisecond, 1900*time.Millisecond)
	c, starved := w.starvedSince(crowdedFrom)
	if !starved || c.waitPerRun != 19 || !strings.Contains(starvedNote(c), "its threads waited 19.0s for a CPU for every second they ran") {
		t.Errorf("crowded: starved %v, %+v (%s)", starved, c, starvedNote(c))
	}
	idleFrom := now
	tick(10*time.Millisecond, 10*time.Millisecond) // little to do, a short wait for it
	if _, starved := w.starvedSince(idleFrom); starved {
		t.Errorf("an idle process's short wait counted as short of CPU")
	}
	if run, wait, ok := readThreadSchedstat(); ok && run <= 0 {
		t.Errorf("this process's threads ran %s (waited %s)", run, wait)
	}
}
