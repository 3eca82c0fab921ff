package verify

import (
	"context"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/testing/fakeapi"
)

// The verdicts on a runner that is, or is not, short of CPU, with the scheduler's measure
// replaced by one that always says so (or never): what each verdict blames must follow the
// measure, whatever the load of the machine running the test.

const starveCommit = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"

// fixedCPUWatch is a watch whose every window has the scheduling latency p99: at or above
// starvedLatency, the runner is always short of CPU; below it, never.
func fixedCPUWatch(p99 time.Duration) *cpuWatch {
	buckets := []float64{0, p99.Seconds(), 3600}
	var counts [2]uint64
	return &cpuWatch{
		read: func() *metrics.Float64Histogram {
			counts[1] += 1000 // every wait in the bucket from p99 up
			return &metrics.Float64Histogram{Counts: append([]uint64(nil), counts[:]...), Buckets: buckets}
		},
		clock: time.Now,
	}
}

// flippingCPUWatch is a watch that says the runner is short of CPU until the moment until,
// and never after it.
func flippingCPUWatch(until time.Time) *cpuWatch {
	buckets := []float64{0, time.Second.Seconds(), 3600}
	var counts [2]uint64
	return &cpuWatch{
		read: func() *metrics.Float64Histogram {
			if time.Now().Before(until) {
				counts[1] += 1000
			} else {
				counts[0] += 1000
			}
			return &metrics.Float64Histogram{Counts: append([]uint64(nil), counts[:]...), Buckets: buckets}
		},
		clock: time.Now,
	}
}

func starveRequest(t *testing.T, b fakeapi.Behaviour, revision string, timeout time.Duration, cpu *cpuWatch) Request {
	t.Helper()
	resources, objects := fakeapi.App("app", revision, 30)
	s := fakeapi.Start(fakeapi.Options{Behaviour: b, Resources: resources, Objects: objects, RetryAfter: 30})
	t.Cleanup(s.Close)
	want, err := flux.ParseRevision(starveCommit[:7])
	if err != nil {
		t.Fatal(err)
	}
	cpu.sample()
	return Request{
		Targets:   []Target{{Name: "c", Config: &rest.Config{Host: s.URL()}}},
		Resources: []flux.Ref{{Kind: flux.KindKustomization, Namespace: "flux-system", Name: "app"}},
		Revision:  want, Timeout: timeout, Workloads: true, cpu: cpu,
	}
}

func TestStarvedVerdicts(t *testing.T) {
	t.Parallel()
	const (
		quiet   = time.Millisecond
		starved = time.Second
		applied = "main@sha1:" + starveCommit
		older   = "main@sha1:b2c3d4e5f60718293a4b5c6d7e8f9012345678a1"
	)
	tests := []struct {
		name      string
		behaviour fakeapi.Behaviour
		revision  string
		latency   time.Duration
		timeout   time.Duration
		snapshot  bool
		// starvedFor, when set, replaces latency: the runner is short of CPU for that long
		// from the start, then no longer.
		starvedFor time.Duration
		want       result.Verdict
		// says is in the message; never is not.
		says, never string
		within      time.Duration
	}{
		{name: "hung server, quiet runner", behaviour: fakeapi.Hang, revision: applied, latency: quiet, timeout: 40 * time.Second,
			want: result.VerdictUnreachable, says: "did not answer within 5s (3 tries)", never: "short of CPU", within: 20 * time.Second},
		{name: "hung server, starved runner", behaviour: fakeapi.Hang, revision: applied, latency: starved, timeout: 8 * time.Second,
			want: result.VerdictTimeout, says: "timed out after 8s while connecting: no answer read: this runner was short of CPU", never: "did not answer", within: 10 * time.Second},
		{name: "get, hung server, starved runner", behaviour: fakeapi.Hang, revision: applied, latency: starved, timeout: time.Minute, snapshot: true,
			want: result.VerdictUnreachable, says: "did not answer within 3s (3 tries); this runner was short of CPU", within: 15 * time.Second},
		// Starved tries go on to the deadline (past the seven tries after which the server
		// used to be called Unreachable): the verdict cannot blame a server it never heard.
		{name: "hung server, starved runner, long timeout", behaviour: fakeapi.Hang, revision: applied, latency: starved, timeout: 70 * time.Second,
			want: result.VerdictTimeout, says: "timed out after 1m10s while connecting: no answer read: this runner was short of CPU", never: "did not answer", within: 75 * time.Second},
		// The shortage ends while the server stays silent: the tries it starved are not
		// counted, the ones after are, and the verdict says both. Try 1 (0-5s) starved, then
		// fair tries (from about 5.6s): three counted.
		{name: "shortage ends, server silent", behaviour: fakeapi.Hang, revision: applied, starvedFor: 8 * time.Second, timeout: time.Minute,
			want: result.VerdictUnreachable, says: "did not answer within 5s (3 tries); not counted: 1 try while this runner was short of CPU", within: 35 * time.Second},
		// Tries 1 (0-5s) and 2 (about 5.6-10.8s) starved; try 3 (from about 11.8s) is cut
		// short at 13s, under half a try, its window judged after the shortage ended: the
		// whole tries before it say why.
		{name: "shortage ends as the deadline cuts a try", behaviour: fakeapi.Hang, revision: applied, starvedFor: 12500 * time.Millisecond, timeout: 13 * time.Second,
			want: result.VerdictTimeout, says: "timed out after 13s while connecting: no answer read: this runner was short of CPU", never: "no answer from the API server", within: 16 * time.Second},
		{name: "get, hung server, quiet runner", behaviour: fakeapi.Hang, revision: applied, latency: quiet, timeout: time.Minute, snapshot: true,
			want: result.VerdictUnreachable, says: "did not answer within 3s (2 tries)", never: "short of CPU", within: 10 * time.Second},
		{name: "stuck rollout, starved runner", behaviour: fakeapi.Healthy, revision: older, latency: starved, timeout: 3 * time.Second,
			want: result.VerdictTimeout, says: "waiting for a1b2c3d", never: "short of CPU", within: 6 * time.Second},
		{name: "throttled, starved runner", behaviour: fakeapi.Throttle, revision: applied, latency: starved, timeout: 20 * time.Second,
			want: result.VerdictThrottled, says: "429", never: "short of CPU", within: 15 * time.Second},
		{name: "failing server, starved runner", behaviour: fakeapi.Fail, revision: applied, latency: starved, timeout: 4 * time.Second,
			want: result.VerdictTimeout, never: "short of CPU", within: 8 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			cpu := fixedCPUWatch(tt.latency)
			if tt.starvedFor > 0 {
				cpu = flippingCPUWatch(start.Add(tt.starvedFor))
			}
			req := starveRequest(t, tt.behaviour, tt.revision, tt.timeout, cpu)
			req.Snapshot = tt.snapshot
			run := Run(context.Background(), req)
			took := time.Since(start)
			c := run.Results[0]
			if c.Verdict != tt.want || !strings.Contains(c.Message, tt.says) || tt.never != "" && strings.Contains(c.Message, tt.never) {
				t.Errorf("%s: %s; want %s saying %q, never %q", c.Verdict, c.Message, tt.want, tt.says, tt.never)
			}
			if took > tt.within {
				t.Errorf("took %s, want at most %s", took.Round(time.Millisecond), tt.within)
			}
		})
	}
}
