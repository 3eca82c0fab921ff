package report

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/org/app-status-action/internal/result"
)

// fleetFixtures are the runs of issue 23's reading tests: three clusters with one failing
// (make demo), 50 and 1000 clusters (Current, past their progress deadline, unreachable), and
// several resources on each cluster.
func fleetFixtures() []fixture {
	return []fixture{
		{name: "fleet-3", run: fleetOf(3, 1, 0)},
		{name: "fleet-50", run: fleetOf(50, 4, 3)},
		{name: "fleet-1000", run: fleetOf(1000, 20, 100)},
		{name: "resources", run: resourcesRun()},
	}
}

// notProgressing is a cluster whose Deployment is past its progress deadline, with the
// 300-character message of the demo.
func notProgressing(name string) result.Cluster {
	message := "Deployment/app/web: ReplicaSet \"web-7c9d8b6f5\" has timed out progressing: pod web-7c9d8b6f5-k2x9q " +
		"is not ready: readiness probe failed: HTTP probe failed with statuscode: 503 (the container started 9m41s ago, " +
		"restarted 0 times); the rollout of revision main@sha1:9f8e7d6 cannot complete before its progressDeadlineSeconds of 600s"
	c := result.Cluster{
		SchemaVersion: result.SchemaVersion, Name: name, Verdict: result.VerdictFailed, Code: result.CodeNotProgressing,
		Reason: "ProgressDeadlineExceeded", Message: message, ExpectedRevision: revNew, DurationMs: 612_000,
		Flux: []result.FluxObject{kustomization("my-app", result.VerdictFailed, "True", revNew)},
	}
	objects := webApp()
	objects[1].Status, objects[1].Message = result.ObjectFailed, "Progress deadline exceeded"
	objects[1].Failure = &result.Failure{Code: result.CodeNotProgressing, Reason: "ProgressDeadlineExceeded", Message: message,
		Pod: "web-7c9d8b6f5-k2x9q", Container: "web",
		Events: []result.Event{{Object: "Pod/app/web-7c9d8b6f5-k2x9q", Reason: "Unhealthy", Message: "Readiness probe failed: HTTP probe failed with statuscode: 503", Count: 58}}}
	c.Objects = objects
	// The moments of the timeline: Flux applied the revision after 3.2s, the ConfigMap and
	// the Service were Current at once, the Deployment failed at its deadline.
	ms := func(v int64) *int64 { return &v }
	c.AppliedMs, c.Flux[0].SinceMs = ms(3_200), ms(612_000)
	for i := range c.Objects {
		c.Objects[i].SinceMs = ms(3_400 + int64(i)*150)
	}
	c.Objects[1].SinceMs = ms(611_800)
	return c
}

func unreachable(name string, i int) result.Cluster {
	return result.Cluster{
		SchemaVersion: result.SchemaVersion, Name: name, Verdict: result.VerdictUnreachable, Reason: "Unreachable",
		Message:    fmt.Sprintf("Get \"https://10.%d.%d.1:6443/api?timeout=32s\": dial tcp 10.%d.%d.1:6443: i/o timeout", i/250, i%250, i/250, i%250),
		DurationMs: 30_000,
	}
}

// fleetOf is n clusters named like a fleet (region-number): failed past their progress
// deadline, down unreachable, the rest Current.
func fleetOf(n, failed, down int) result.Run {
	regions := []string{"ap", "eu", "us"}
	stepFailed, stepDown := n/max(failed, 1), n/max(down, 1)
	var clusters []result.Cluster
	for i := range n {
		name := fmt.Sprintf("%s-%04d", regions[i%len(regions)], i)
		switch {
		case failed > 0 && i%stepFailed == 1:
			failed--
			clusters = append(clusters, notProgressing(name))
		case down > 0 && i%stepDown == 3:
			down--
			clusters = append(clusters, unreachable(name, i))
		default:
			clusters = append(clusters, currentCluster(name, revNew, int64(9_000+i*7%5_000)))
		}
	}
	return result.NewRun([]string{app}, revNew, clusters, 10*time.Minute)
}

// resourcesRun verifies two resources on four clusters: one fails on one cluster, the other
// is suspended on another.
func resourcesRun() result.Run {
	const web = "HelmRelease/app/web"
	helm := func(verdict result.Verdict) result.FluxObject {
		return result.FluxObject{ID: web, Kind: "HelmRelease", Namespace: "app", Name: "web", Verdict: verdict, Ready: "True",
			Reason: "UpgradeSucceeded", LastAppliedRevision: "1.4.0"}
	}
	var clusters []result.Cluster
	for _, name := range []string{"dev", "prod-eu", "prod-us", "staging"} {
		c := currentCluster(name, revNew, 8_000)
		c.Flux = append(c.Flux, helm(result.VerdictCurrent))
		clusters = append(clusters, c)
	}
	clusters[1] = notProgressing("prod-eu")
	clusters[1].Flux = append(clusters[1].Flux, helm(result.VerdictCurrent))
	clusters[3].Verdict, clusters[3].Code, clusters[3].Message = result.VerdictSuspended, result.CodeFluxSuspended, web+" is suspended"
	clusters[3].Flux[1].Verdict, clusters[3].Flux[1].Suspended = result.VerdictSuspended, true
	return result.NewRun([]string{app, web}, revNew, clusters, time.Minute)
}

// TestFleetGolden renders the fleet fixtures as the summary, the text output and the
// pull-request comment.
func TestFleetGolden(t *testing.T) {
	t.Parallel()
	for _, f := range fleetFixtures() {
		for ext, render := range map[string]func(result.Run) []byte{
			"md":  func(r result.Run) []byte { return []byte(Markdown(r, MarkdownOptions{})) },
			"txt": func(r result.Run) []byte { var b strings.Builder; _ = Text(&b, r); return []byte(b.String()) },
			"comment.md": func(r result.Run) []byte {
				return []byte(Comment(r, CommentOptions{Marker: CommentMarker("deploy", "", r.Resources)}))
			},
		} {
			t.Run(f.name+"."+ext, func(t *testing.T) {
				t.Parallel()
				checkGolden(t, "testdata/"+f.name+".golden."+ext, render(f.run))
			})
		}
	}
}
