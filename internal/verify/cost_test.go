package verify_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/testing/fakeapi"
	"github.com/org/app-status-action/internal/verify"
)

// BenchmarkVerifyHealthyClusters is the engine's own cost per healthy cluster of 200 objects
// (plain HTTP: the fleet benchmark measures TLS): a run over 100 fake clusters, until every
// verdict. Profile it with
//
//	go test -run '^$' -bench VerifyHealthyClusters -benchtime 3x -cpuprofile cpu.out -memprofile mem.out ./internal/verify/
func BenchmarkVerifyHealthyClusters(b *testing.B) {
	const clusters = 100
	resources, objects := fakeapi.App("app", fakeRevision, 200)
	targets := make([]verify.Target, clusters)
	for i := range targets {
		s := fakeapi.Start(fakeapi.Options{Behaviour: fakeapi.Healthy, Resources: resources, Objects: objects})
		b.Cleanup(s.Close)
		targets[i] = fakeTarget(fmt.Sprintf("c%03d", i), s)
	}
	b.ReportAllocs()
	for b.Loop() {
		run := verify.Run(context.Background(), fakeRequest(targets, time.Minute))
		if run.Status != result.RunSuccess {
			b.Fatalf("run %s: %s", run.Status, run.Condition.Message)
		}
	}
	b.ReportMetric(float64(b.Elapsed())/float64(b.N)/clusters/1e6, "ms/cluster")
}
