package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// writeResults writes benchmark.md and benchmark.png into dir.
func writeResults(dir string, res *results) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	png, err := drawChart(res)
	if err != nil {
		return fmt.Errorf("draw the chart: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "benchmark.png"), png, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "benchmark.md"), []byte(markdown(res)), 0o644)
}

// Tool names, as the tables print them.
const (
	toolAppStatus = "app-status"
	toolKubectl   = "kubectl loop"
	toolPoller    = "kstatus poller"
)

// Targets the engine was built to meet.
const (
	targetP50       = 100 * time.Millisecond
	targetP95       = 500 * time.Millisecond
	targetWall      = 2 * time.Second
	targetRSS       = 250 << 20
	targetStartup   = 50 * time.Millisecond
	targetImageSize = 15 << 20
	scaleClusters   = 20
)

func markdown(res *results) string {
	var b strings.Builder
	m := res.Machine
	fmt.Fprintf(&b, "# Benchmark: app-status side by side with kubectl and a kstatus poller\n\n")
	fmt.Fprintf(&b, "Written by `make bench` (`hack/bench`) on %s, in %s.\n\n", m.Date.Format("2006-01-02 15:04 UTC"), res.Took.Round(time.Second))
	fmt.Fprintf(&b, "- **Machine:** %d CPUs (%s), %s memory, Linux %s, %s; load average %s at the start, %s at the end. The machine is shared with other work, so the numbers carry noise.\n",
		m.CPUs, orUnknown(m.CPUModel), gib(m.MemTotal), orUnknown(m.Kernel), m.GoVersion, m.LoadStart, m.LoadEnd)
	fmt.Fprintf(&b, "- **Command:** `%s`\n", strings.TrimSpace(res.Command))
	fmt.Fprintf(&b, "- **Clusters:** real kube-apiservers and etcds (v1.36.3) started by `internal/testing/testbed` with kwokctl; kwok simulates the nodes and pods.\n")
	fmt.Fprintf(&b, "- Every figure is a median of %d runs unless it says otherwise; ratios compare tools measured in the same runs, on the same events.\n\n", res.Config.runs)
	fmt.Fprintf(&b, "![Benchmark chart](benchmark.png)\n\n")
	writeTargets(&b, res)
	if res.Latency != nil {
		writeLatency(&b, res.Latency, res.Config)
	}
	if res.FailFast != nil {
		writeFailFast(&b, res.FailFast, res.Config)
	}
	if res.Growth != nil {
		writeGrowth(&b, res.Growth, res.Config)
	}
	if res.Startup != nil {
		writeStartup(&b, res.Startup)
	}
	writeNotes(&b, res)
	return b.String()
}

// writeNotes closes the report: by how much each missed target was missed, and what stands in
// the way where the bench knows.
func writeNotes(b *strings.Builder, res *results) {
	var notes []string
	if g := res.Growth; g != nil {
		for _, p := range g.Points {
			wall := max(median(p.Get), median(p.Verify))
			if wall >= targetWall && p.Clusters <= scaleClusters {
				notes = append(notes, fmt.Sprintf("At %d clusters the slower of `get` and `verify` took %s, %s over the 2 s target.", p.Clusters, ms(wall), ms(wall-targetWall)))
			}
			if rss := max(medianInt(p.GetRSS), medianInt(p.VerifyRSS)); rss >= targetRSS {
				notes = append(notes, fmt.Sprintf("At %d clusters the peak RSS was %s, %s over the 250 MB target.", p.Clusters, mib(uint64(rss)), mib(uint64(rss-targetRSS))))
			}
		}
		if last := g.Points[len(g.Points)-1]; last.Clusters > scaleClusters {
			notes = append(notes, fmt.Sprintf("The 2 s and 250 MB targets are set for %d clusters; at %d clusters `verify` took %s with a peak RSS of %s.",
				scaleClusters, last.Clusters, ms(median(last.Verify)), mib(uint64(medianInt(last.VerifyRSS)))))
		}
		if g.Cut != "" {
			notes = append(notes, g.Cut+".")
		}
	}
	if s := res.Startup; s != nil && median(s.AppStatus) >= targetStartup {
		notes = append(notes, fmt.Sprintf("Start-up took %s, %s over the 50 ms target.", ms(median(s.AppStatus)), ms(median(s.AppStatus)-targetStartup)))
	}
	b.WriteString("## Notes\n\n")
	for _, n := range notes {
		fmt.Fprintf(b, "- %s\n", n)
	}
	b.WriteString("- Where the time goes at scale (a CPU profile of `app-status get` on 20 clusters of 200 objects, taken while writing this bench): about 60% of the process's CPU decodes the watch streams' JSON into unstructured objects (client-go's JSON framer, then a first pass that only looks for apiVersion and kind, then the decode proper: each object's bytes are scanned three to four times), about 10% is garbage collection and about 10% the evaluations. The wall time follows the CPU time, on 2 cores shared with the API servers that serve the lists. Watching Deployments and Services through typed clients in protobuf, or CBOR once the API servers serve it, would remove most of the decoding.\n")
	b.WriteString("- The kubectl loop pays a process start and a discovery per call and waits for one cluster at a time; the kstatus poller sees a change only at its next 2 s tick. Both wait for `progressDeadlineSeconds` before they call an unpullable image a failure.\n\n")
}

// targetRow is one line of the targets table.
type targetRow struct{ target, measured, met string }

func met(ok bool) string {
	if ok {
		return "met"
	}
	return "**missed**"
}

func writeTargets(b *strings.Builder, res *results) {
	var rows []targetRow
	if l := res.Latency; l != nil {
		// Judged on the slower of the two views: a cluster's verdict line, and the process's
		// exit after the last cluster (what a CI step waits for).
		as := l.tool(toolAppStatus)
		p50 := max(median(as.PerCluster), median(as.Run))
		worst := max(p95(as.PerCluster), p95(as.Run))
		rows = append(rows,
			targetRow{"1. Verdict latency p50 < 100 ms", fmt.Sprintf("%s per cluster (%d samples), %s to exit (%d runs)",
				ms(median(as.PerCluster)), len(as.PerCluster), ms(median(as.Run)), len(as.Run)), met(p50 < targetP50)},
			targetRow{"1. Verdict latency p95 < 500 ms", fmt.Sprintf("%s per cluster, %s to exit", ms(p95(as.PerCluster)), ms(p95(as.Run))), met(worst < targetP95)})
	}
	if f := res.FailFast; f != nil {
		as, kc := median(f.tool(toolAppStatus).Run), median(f.tool(toolKubectl).Run)
		rows = append(rows, targetRow{"2. Fail-fast against `kubectl rollout status` (report the ratio)",
			fmt.Sprintf("%s against %s: %s sooner", ms(as), ms(kc), times(ratio(kc, as))), "reported"})
	}
	if g := res.Growth; g != nil {
		if p, ok := g.point(scaleClusters); ok {
			rows = append(rows,
				targetRow{"3. `get`, 20 clusters × 200 objects, < 2 s", ms(median(p.Get)), met(median(p.Get) < targetWall)},
				targetRow{"3. `verify` (all Current), 20 clusters, < 2 s", ms(median(p.Verify)), met(median(p.Verify) < targetWall)},
				targetRow{"3. Peak memory < 250 MB", fmt.Sprintf("get %s, verify %s", mib(uint64(medianInt(p.GetRSS))), mib(uint64(medianInt(p.VerifyRSS)))),
					met(max(medianInt(p.GetRSS), medianInt(p.VerifyRSS)) < targetRSS)})
		} else {
			rows = append(rows, targetRow{"3. Scale at 20 clusters", "not measured (see growth)", "**missed**"})
		}
		rows = append(rows, targetRow{"3. API requests grow with kinds, not objects",
			fmt.Sprintf("verify of one cluster: %.0f requests for %d objects, %.0f for %d", g.Small.PerCluster, g.SmallObjects, g.Large.PerCluster, g.Objects),
			met(g.Large.PerCluster <= g.Small.PerCluster)})
		last := g.Points[len(g.Points)-1]
		want := slices.Max(g.Wanted)
		reached := "measured"
		if last.Clusters < want {
			reached = "**cut**"
		}
		rows = append(rows, targetRow{fmt.Sprintf("4. Growth to %d clusters (table and chart)", want),
			fmt.Sprintf("up to %d clusters: verify %s, peak RSS %s", last.Clusters, ms(median(last.Verify)), mib(uint64(medianInt(last.VerifyRSS)))),
			reached})
	}
	if s := res.Startup; s != nil {
		rows = append(rows,
			targetRow{"5. Start-up to first API request < 50 ms", ms(median(s.AppStatus)), met(median(s.AppStatus) < targetStartup)},
			targetRow{"5. Image < 15 MB compressed (computed, not pulled)", mb(s.ImageGzip), met(s.ImageGzip < targetImageSize)})
	}
	if len(rows) == 0 {
		return
	}
	b.WriteString("## Targets\n\n| Target | Measured | |\n|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(b, "| %s | %s | %s |\n", r.target, r.measured, r.met)
	}
	b.WriteString("\n")
}

func writeLatency(b *strings.Builder, l *latencyResult, cfg config) {
	fmt.Fprintf(b, "## 1. Verdict latency\n\n")
	fmt.Fprintf(b, "%d runs on %d clusters with the real kustomize-controller. Each run publishes a new revision of an app of %d Deployments (2 replicas each), %d Services and a ConfigMap (%d objects), which rolls every Deployment; the three tools start before it is published and wait for it. The bench's own informers record, per cluster, the moment the Kustomization is Ready at the revision and the last object of its inventory turned Current (kstatus), as the watch event reached the bench. Median rollout: %s.\n\n",
		l.Runs, l.Clusters, cfg.deployments, cfg.deployments, l.Objects, ms(median(l.Rollout)))
	writeToolTable(b, l, "Current")
	fmt.Fprintf(b, "app-status and the bench wait on the same kind of watch, so app-status's delay per cluster is its own evaluation and one progress line: a few milliseconds, at the noise of the measure (a negative value means app-status's watch delivered the event before the bench's did). The per-run figure adds writing the JSON report and exiting.\n\n")
	fmt.Fprintf(b, "- **app-status:** `app-status verify --clusters-file F --resource kustomization/bench-app --revision SHA -o json`; a cluster's verdict is its final progress line on stderr, read as it is printed; the run ends when the process exits.\n")
	fmt.Fprintf(b, "- **kubectl loop:** a bash loop over the clusters, as a user would script it: `kubectl wait kustomization/bench-app --for=jsonpath='{.status.lastAppliedRevision}'=REV`, `kubectl wait --for=condition=Ready`, then `kubectl rollout status deployment/X` for each Deployment (kubectl v1.36.3, a fresh discovery cache per run, as on a CI runner).\n")
	fmt.Fprintf(b, "- **kstatus poller:** `bench poller`, a separate process: per cluster (concurrently) it polls the Kustomization every 2 s until it is Ready at the revision, then polls its inventory with kstatus's `StatusPoller` every 2 s until the aggregate status is Current, as the flux CLI and Flux's health checks do.\n\n")
}

func writeFailFast(b *strings.Builder, f *latencyResult, cfg config) {
	fmt.Fprintf(b, "## 2. Fail-fast\n\n")
	fmt.Fprintf(b, "%d runs on %d clusters, overlapped (started %s apart) to keep the bench short: each run updates a healthy app to a revision whose Deployment (2 replicas, `progressDeadlineSeconds: %d`) has pods that cannot pull their image (the test bed's `image-pull` failure: ErrImagePull, then ImagePullBackOff). Times run from the first fatal pod state the bench saw (per cluster; for the run, the last cluster's) to each tool's failure verdict.\n\n",
		f.Runs, f.Clusters, failStagger, cfg.failDeadline)
	writeToolTable(b, f, "a failure")
	as, kc := median(f.tool(toolAppStatus).Run), median(f.tool(toolKubectl).Run)
	fmt.Fprintf(b, "app-status reports the failure (with its events) %s after the pods show it; `kubectl rollout status` reports it only when the Deployment exceeds its progress deadline, %s after: **%s** later. The kstatus poller waits for the same deadline (kstatus calls a Deployment Failed only on ProgressDeadlineExceeded).\n\n",
		ms(as), ms(kc), times(ratio(kc, as)))
}

// writeToolTable writes per-cluster and per-run delays of every tool and the ratios to
// app-status.
func writeToolTable(b *strings.Builder, l *latencyResult, verdict string) {
	base := l.tool(toolAppStatus)
	fmt.Fprintf(b, "| Tool | p50 per cluster | p95 per cluster | p50 per run (to exit) | p95 per run | against app-status (p50 per run) | verdicts |\n|---|---|---|---|---|---|---|\n")
	for _, name := range toolOrder(l) {
		t := l.tool(name)
		rel := "1×"
		if name != toolAppStatus {
			rel = times(ratio(median(t.Run), median(base.Run)))
		}
		verdicts := fmt.Sprintf("%d of %d %s", len(t.PerCluster), len(t.PerCluster)+len(t.Wrong), verdict)
		if len(t.Wrong) > 0 {
			verdicts += "; other: " + strings.Join(t.Wrong, "; ")
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s |\n", name, ms(median(t.PerCluster)), ms(p95(t.PerCluster)),
			ms(median(t.Run)), ms(p95(t.Run)), rel, verdicts)
	}
	b.WriteString("\n")
}

// toolOrder is the order of l's tools in a table: app-status, an earlier build run beside it
// (--peer), then its peers.
func toolOrder(l *latencyResult) []string {
	names := []string{toolAppStatus}
	for _, t := range l.Tools {
		if !slices.Contains([]string{toolAppStatus, toolPoller, toolKubectl}, t.Name) {
			names = append(names, t.Name)
		}
	}
	return append(names, toolPoller, toolKubectl)
}

func writeGrowth(b *strings.Builder, g *growthResult, cfg config) {
	nd, ns, nc := scaleApp{Objects: g.Objects}.counts()
	fmt.Fprintf(b, "## 3 and 4. Scale and growth\n\n")
	fmt.Fprintf(b, "Control-plane-only clusters (`testbed.Options.ControlPlaneOnly`: etcd and kube-apiserver, no controller-manager, scheduler or kwok), each holding an app of %d objects (%d Deployments, %d Services, %d ConfigMaps) that the bench wrote with a Current status, and its Kustomization, Ready at the revision with all %d objects in its inventory. `app-status get` and `app-status verify --revision SHA` run with `--clusters-file` (the first N clusters), `--max-parallel N`, `-o json --quiet`; wall time from exec to exit, peak RSS from the process's rusage (wait4). Requests are counted by running the same request through the engine in the bench's process with a counting `rest.Config.WrapTransport` per cluster (the product has no counting switch); a watch counts as one request.\n\n",
		g.Objects, nd, ns, nc, g.Objects)
	b.WriteString("| Clusters | `get` wall | `verify` wall | `get` peak RSS | `verify` peak RSS | requests per cluster, `get` | requests per cluster, `verify` |\n|---|---|---|---|---|---|---|\n")
	for _, p := range g.Points {
		fmt.Fprintf(b, "| %d | %s | %s | %s | %s | %.1f | %.1f |\n", p.Clusters, ms(median(p.Get)), ms(median(p.Verify)),
			mib(uint64(medianInt(p.GetRSS))), mib(uint64(medianInt(p.VerifyRSS))), p.GetReq.PerCluster, p.VerifyReq.PerCluster)
	}
	for _, want := range g.Wanted {
		if _, ok := g.point(want); !ok {
			fmt.Fprintf(b, "| %d | did not fit | | | | | |\n", want)
		}
	}
	b.WriteString("\n")
	if len(g.Points) > 0 {
		last := g.Points[len(g.Points)-1]
		fmt.Fprintf(b, "Requests per cluster at %d clusters, by kind: `verify` %s; `get` %s. Verifying one cluster takes %.0f requests for an app of %d objects and %.0f for one of %d objects of the same kinds.\n\n",
			last.Clusters, last.VerifyReq.breakdown(), last.GetReq.breakdown(), g.Small.PerCluster, g.SmallObjects, g.Large.PerCluster, g.Objects)
	}
	if len(g.ClusterRSS) > 0 {
		rss := make([]int64, len(g.ClusterRSS))
		for i, r := range g.ClusterRSS {
			rss[i] = int64(r)
		}
		fmt.Fprintf(b, "A populated control-plane-only cluster takes %s resident (etcd and kube-apiserver; median of %d, largest %s), against about 600 MB for a full test-bed cluster with Flux.",
			mib(uint64(medianInt(rss))), len(rss), mib(slices.Max(g.ClusterRSS)))
		if len(g.APIServerArgs) > 0 {
			fmt.Fprintf(b, " kube-apiserver ran with `--%s`.", strings.Join(g.APIServerArgs, "`, `--"))
		}
		if g.Cut != "" {
			fmt.Fprintf(b, " **%s.**", g.Cut)
		} else {
			fmt.Fprintf(b, " Every requested count fitted in memory (the bench keeps %s available and cuts the counts that do not fit).", mib(cfg.minFree))
		}
		b.WriteString("\n\n")
	}
}

func writeStartup(b *strings.Builder, s *startupResult) {
	fmt.Fprintf(b, "## 5. Start-up and size\n\n")
	fmt.Fprintf(b, "Start-up: from exec to the first request received by a local HTTP listener posing as the API server (named in a kubeconfig), median of %d runs; the page cache is warm.\n\n", len(s.AppStatus))
	fmt.Fprintf(b, "| | app-status (`get`) | kubectl (`get kustomization`) |\n|---|---|---|\n")
	fmt.Fprintf(b, "| exec to first API request, p50 | %s | %s |\n| p95 | %s | %s |\n\n", ms(median(s.AppStatus)), ms(median(s.Kubectl)), ms(p95(s.AppStatus)), ms(p95(s.Kubectl)))
	fmt.Fprintf(b, "- **Binary:** %s (`make build`: static, `-trimpath -ldflags \"-s -w\"`).\n", mb(s.BinarySize))
	fmt.Fprintf(b, "- **Image:** %s compressed (%s uncompressed): **computed, not pulled** (no container engine runs here) as the Dockerfile's final stage would be, `FROM scratch` plus one layer holding the binary, the CA bundle (%s of this machine, as Debian's golang image has it) and `/tmp`, tarred and gzip-compressed; the image config and manifest add about 1 kB.\n\n",
		mb(s.ImageGzip), mb(s.ImageTar), s.CABundle)
}

func (g *growthResult) point(clusters int) (growthPoint, bool) {
	for _, p := range g.Points {
		if p.Clusters == clusters {
			return p, true
		}
	}
	return growthPoint{}, false
}

// ms prints a duration for the tables: milliseconds below 10 s, seconds above.
func ms(d time.Duration) string {
	switch {
	case d >= 10*time.Second || d <= -10*time.Second:
		return fmt.Sprintf("%.1f s", d.Seconds())
	case d < 10*time.Millisecond && d > -10*time.Millisecond:
		return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond))
}

func times(r float64) string {
	if r >= 10 {
		return fmt.Sprintf("%.0f×", r)
	}
	return fmt.Sprintf("%.1f×", r)
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
