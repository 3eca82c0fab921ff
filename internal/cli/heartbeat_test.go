package cli

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/verify"
)

// TestProgressHeartbeat: while any cluster waits, the log gets a tally line whenever a beat
// finds nothing printed since the previous one, so with beats every half of tallyEvery no
// waiting run is silent for longer than tallyEvery; below fleetLogAbove clusters any line is a
// sign of life, above it only a tally. Once every cluster has its verdict, or the heartbeat
// is stopped, it prints nothing.
func TestProgressHeartbeat(t *testing.T) {
	t.Parallel()
	const s = time.Second
	waiting := func(cluster string, at time.Duration) verify.Progress {
		return verify.Progress{Cluster: cluster, Elapsed: at, Verdict: result.VerdictInProgress, Message: "waiting for Deployment/app/web: Available: 0/2"}
	}
	current := func(cluster string, at time.Duration) verify.Progress {
		return verify.Progress{Cluster: cluster, Elapsed: at, Verdict: result.VerdictCurrent, Message: "3 objects Current", Final: true}
	}
	// step is a progress event, or with beat set a beat of the heartbeat at that time.
	type step struct {
		beat bool
		at   time.Duration
		p    verify.Progress
	}
	show := func(p verify.Progress) step { return step{at: p.Elapsed, p: p} }
	beat := func(at time.Duration) step { return step{beat: true, at: at} }
	fleet := func(at time.Duration) []step {
		var steps []step
		for i := range 40 {
			steps = append(steps, show(waiting(fmt.Sprintf("c%02d", i), at)))
		}
		return steps
	}
	tests := []struct {
		name     string
		clusters int
		steps    []step
		want     []string
	}{
		{
			name: "a silent wait gets a tally", clusters: 2,
			steps: []step{show(waiting("eu", 0)), show(waiting("us", 0)), beat(5 * s), beat(10 * s), beat(15 * s), show(current("eu", 16*s)), beat(20 * s), beat(25 * s)},
			want: []string{
				"[   0.0s] … eu: waiting for Deployment/app/web: Available: 0/2",
				"[   0.0s] … us: waiting for Deployment/app/web: Available: 0/2",
				"[  10.0s] 0/2 Current, 2 waiting",
				"[  15.0s] 0/2 Current, 2 waiting",
				"[  16.0s] ✔ eu: 3 objects Current",
				"[  25.0s] 1/2 Current, 1 waiting",
			},
		},
		{
			name: "lines keep a small run alive", clusters: 1,
			steps: []step{show(waiting("eu", 0)), beat(5 * s), show(waiting("eu", 7*s)), beat(10 * s), show(waiting("eu", 12*s)), beat(15 * s)},
			want: []string{
				"[   0.0s] … eu: waiting for Deployment/app/web: Available: 0/2",
				"[   7.0s] … eu: waiting for Deployment/app/web: Available: 0/2",
				"[  12.0s] … eu: waiting for Deployment/app/web: Available: 0/2",
			},
		},
		{
			name: "nothing once every cluster has its verdict", clusters: 1,
			steps: []step{show(current("eu", s)), beat(5 * s), beat(10 * s), beat(15 * s)},
			want:  []string{"[   1.0s] ✔ eu: 3 objects Current"},
		},
		{
			name: "a waiting fleet gets a tally without events", clusters: 40,
			steps: append(fleet(0), beat(5*s), beat(10*s), beat(15*s), beat(20*s)),
			want: []string{
				"[   5.0s] 0/40 Current, 40 waiting",
				"[  10.0s] 0/40 Current, 40 waiting",
				"[  15.0s] 0/40 Current, 40 waiting",
				"[  20.0s] 0/40 Current, 40 waiting",
			},
		},
		{
			name: "a fleet's own tallies are signs of life", clusters: 40,
			steps: append(append(append(fleet(0), beat(5*s)), fleet(15*s)...), beat(15*s), beat(20*s)),
			want: []string{
				"[   5.0s] 0/40 Current, 40 waiting",
				"[  15.0s] 0/40 Current, 40 waiting", // an event's, 10 s after the last tally
				"[  20.0s] 0/40 Current, 40 waiting",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var log strings.Builder
			var now time.Duration
			l := newProgressLog(&log, func(s string) string { return s }, tt.clusters, func() time.Duration { return now })
			for _, st := range tt.steps {
				now = st.at
				if st.beat {
					l.beat()
				} else {
					l.show(st.p)
				}
			}
			if diff := cmp.Diff(tt.want, strings.Split(strings.TrimSuffix(log.String(), "\n"), "\n")); diff != "" {
				t.Errorf("log (-want +got):\n%s", diff)
			}
		})
	}
}

// TestHeartbeatStops: once stopped, the heartbeat prints nothing more, nor does a late event.
func TestHeartbeatStops(t *testing.T) {
	t.Parallel()
	var log strings.Builder
	l := newProgressLog(&log, func(s string) string { return s }, 1, func() time.Duration { return 0 })
	stop := l.startHeartbeat(time.Hour)
	stop()
	l.beat()
	l.beat()
	l.show(verify.Progress{Cluster: "eu", Verdict: result.VerdictInProgress, Message: "late"})
	if log.String() != "" {
		t.Errorf("printed %q after the heartbeat stopped", log.String())
	}
}

// TestHeartbeatWhileWaiting: a cluster that waits without a change keeps the CLI's and the
// action's log alive with tally lines, and none follows the verdict (the heartbeat is
// shortened here; it is heartbeatTick in a real run).
func TestHeartbeatWhileWaiting(t *testing.T) {
	t.Parallel()
	for _, action := range []bool{false, true} {
		t.Run(map[bool]string{false: "cli", true: "action"}[action], func(t *testing.T) {
			t.Parallel()
			kubeconfig := healthyCluster(t)
			f := newFakeEnv(t, map[string]string{"KC_PROD": kubeconfig})
			env := f.env()
			env.heartbeat = 20 * time.Millisecond
			// The cluster applied a1b2c3d: it waits for another revision until the timeout.
			var code int
			if action {
				f.vars["INPUT_CLUSTERS"], f.vars["INPUT_RESOURCE"], f.vars["INPUT_REVISION"], f.vars["INPUT_TIMEOUT"] = "prod=env:KC_PROD", "ks/app", "b2c3d4e5", "1"
				code = Run(context.Background(), []string{"action"}, env)
			} else {
				delete(f.vars, "GITHUB_ACTIONS")
				code = Run(context.Background(), []string{"verify", "--clusters-file", clustersFile(t, t.TempDir(), "prod=env:KC_PROD\n", map[string]string{"KC_PROD": kubeconfig}),
					"--resource", "ks/app", "--revision", "b2c3d4e5", "--timeout", "1"}, env)
			}
			log := f.stdout.String() + f.stderr.String()
			if code != 1 {
				t.Fatalf("Run() = %d, want 1\n%s", code, log)
			}
			shown, _ := progressLines(log)
			const tally = "[   0.0s] 0/1 Current, 1 waiting" // (the test's clock stands still)
			final := -1
			for i, l := range shown {
				if strings.Contains(l, "prod: ") && !strings.Contains(l, "] … ") {
					final = i
				}
			}
			if final < 0 {
				t.Fatalf("no verdict in the progress:\n%s", log)
			}
			tallies := 0
			for i, l := range shown {
				if l == tally {
					tallies++
					if i > final {
						t.Errorf("a tally after the verdict: %q\n%s", l, log)
					}
				}
			}
			if tallies < 2 {
				t.Errorf("%d tally lines while the cluster waited 1 s, want a tally on every quiet beat of 20 ms:\n%s", tallies, log)
			}
		})
	}
}

// blockedWriter blocks every Write until release is closed, telling entered of the first.
type blockedWriter struct {
	entered, release chan struct{}
	once             sync.Once
}

func (w *blockedWriter) Write(p []byte) (int, error) {
	w.once.Do(func() { close(w.entered) })
	<-w.release
	return len(p), nil
}

// TestHeartbeatStopWithABlockedWriter: a beat stuck in a blocked log (a full pipe, a frozen
// terminal) does not hold up the end of the run for longer than heartbeatStopWait.
func TestHeartbeatStopWithABlockedWriter(t *testing.T) {
	t.Parallel()
	w := &blockedWriter{entered: make(chan struct{}), release: make(chan struct{})}
	defer close(w.release)
	l := newProgressLog(w, func(s string) string { return s }, 1, func() time.Duration { return 0 })
	stop := l.startHeartbeat(time.Millisecond)
	<-w.entered // a beat's tally is blocked in Write
	start := time.Now()
	stop()
	if took := time.Since(start); took > heartbeatStopWait+time.Second {
		t.Errorf("stop took %s with a blocked writer, want at most about %s", took, heartbeatStopWait)
	}
}
