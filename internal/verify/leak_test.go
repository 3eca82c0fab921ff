package verify_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	"k8s.io/client-go/rest"

	"github.com/org/app-status-action/internal/testing/fakeapi"
	"github.com/org/app-status-action/internal/verify"
)

// TestNoGoroutineOutlivesItsCluster: once Run has returned, every goroutine a cluster started
// (informers, watches, HTTP connections, the progress printer) is gone, whatever the cluster
// did: Current, hung, throttled, failing, expired watches, refused, or cancelled mid-wait, over
// HTTP/1.1 and over HTTP/2 with TLS.
func TestNoGoroutineOutlivesItsCluster(t *testing.T) {
	// Not parallel: goleak looks at every goroutine of the test binary. What runs before is
	// not the run's.
	for _, maxParallel := range []int{0, 1} {
		// With one cluster read at a time, the others wait for their turn without a
		// connection (park) and dial again when it comes.
		t.Run(fmt.Sprintf("max-parallel %d", maxParallel), func(t *testing.T) { checkNoGoroutineOutlives(t, maxParallel) })
	}
}

func checkNoGoroutineOutlives(t *testing.T, maxParallel int) {
	before := goleak.IgnoreCurrent()
	var servers []*fakeapi.Server
	start := func(b fakeapi.Behaviour) verify.Target {
		resources, objects := fakeapi.App("app", fakeRevision, 30)
		s := fakeapi.Start(fakeapi.Options{Behaviour: b, Resources: resources, Objects: objects, RetryAfter: 1})
		servers = append(servers, s)
		return fakeTarget(b.String(), s)
	}
	// And one over TLS (HTTP/2), whose connection a parked cluster closes and dials again.
	resources, objects := fakeapi.App("app", fakeRevision, 30)
	overTLS := fakeapi.Start(fakeapi.Options{Behaviour: fakeapi.Healthy, Resources: resources, Objects: objects, TLS: &tls.Config{MinVersion: tls.VersionTLS12}})
	servers = append(servers, overTLS)
	targets := []verify.Target{start(fakeapi.Healthy), start(fakeapi.Hang), start(fakeapi.Throttle), start(fakeapi.Fail),
		start(fakeapi.HangWatch), start(fakeapi.GoneWatch), refusedTarget(t, "refused"),
		{Name: "healthy-tls", Config: &rest.Config{Host: overTLS.URL(), TLSClientConfig: rest.TLSClientConfig{Insecure: true}}}}
	// A revision no cluster has: the healthy ones keep watching until the run is cancelled.
	req := fakeRequest(targets, time.Minute)
	req.MaxParallel = maxParallel
	req.Revision = mustRevisionOf("0123456")
	var lines int
	req.Progress = func(verify.Progress) { lines++ }
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
	defer cancel()
	verify.Run(ctx, req)
	// Right away: when Run returns, no informer, watch, connection or printer of the run may
	// still be running. client-go's watch decoder and a closed connection's write loop end on
	// their own a moment after their stream is closed (client-go does not wait for them), so
	// they get 200ms; goleak below retries for seconds, so it alone would not tell.
	left := engineGoroutines()
	for wait := 0; len(left) > 0 && wait < 20; wait++ {
		time.Sleep(10 * time.Millisecond)
		left = engineGoroutines()
	}
	if len(left) > 0 {
		t.Errorf("%d goroutines of the run still running when it returned:\n%s", len(left), strings.Join(left, "\n\n"))
	}
	if lines == 0 {
		t.Error("no progress was reported")
	}
	// Checked while the servers still run, so a connection the client kept would show: only
	// the servers' own goroutines are ignored.
	goleak.VerifyNone(t, before,
		// klog's flush daemon starts with the first client and lives as long as the process.
		goleak.IgnoreTopFunction("k8s.io/klog/v2.(*flushDaemon).run.func1"),
		goleak.IgnoreAnyFunction("net/http.(*conn).serve"),
		goleak.IgnoreAnyFunction("net/http.(*Server).Serve"),
		goleak.IgnoreAnyFunction("net/http/httptest.(*Server).goServe.func1"),
	)
	for _, s := range servers {
		s.Close()
	}
}

// engineGoroutines returns the stacks of the goroutines that belong to a run: client-go's,
// HTTP client connections', and the engine's own, but for this test's.
func engineGoroutines() []string {
	buf := make([]byte, 4<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		// Test goroutines (this one, and the parallel tests paused until it ends) run
		// testing.tRunner; the run's goroutines never do.
		if strings.Contains(g, "testing.tRunner(") {
			continue
		}
		if strings.Contains(g, "k8s.io/client-go/") || strings.Contains(g, "net/http.(*persistConn)") ||
			strings.Contains(g, "app-status-action/internal/verify.") {
			out = append(out, g)
		}
	}
	return out
}
