package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/org/app-status-action/internal/result"
)

// The fixed runs the golden files render.

const (
	app    = "Kustomization/flux-system/my-app"
	revOld = "main@sha1:0a1b2c3d4e5f60718293a4b5c6d7e8f901234567"
	revNew = "main@sha1:9f8e7d6c5b4a39281706f5e4d3c2b1a098765432"
)

type fixture struct {
	name string
	run  result.Run
}

func fixtures() []fixture {
	return []fixture{
		{name: "all-current", run: allCurrentRun()},
		{name: "mixed", run: mixedRun()},
		{name: "mixed-evidence-no-logs", run: KeepEvidence(mixedRun(), EvidenceNoLogs)},
		{name: "mixed-evidence-none", run: KeepEvidence(mixedRun(), EvidenceNone)},
		{name: "nested", run: nestedRun()},
		{name: "hostile", run: hostileRun()},
		{name: "empty", run: result.NewRun([]string{"HelmRelease/app/web"}, "1.4.0", nil, 1500*time.Millisecond)},
		{name: "empty-shard", run: emptyShardRun()},
		{name: "preflight", run: preflightRun()},
		{name: "not-found", run: notFoundRun()},
	}
}

// notFoundRun is a typo'd resource: NotFound once the not-found grace passed, naming the close
// name and the namespace where the name exists, on one cluster; still waiting for a parent
// Kustomization to create it on another, until the timeout.
func notFoundRun() result.Run {
	const typo = "Kustomization/flux-system/my-ap"
	missing := func(name string, v result.Verdict, message string, ms int64) result.Cluster {
		return result.Cluster{
			SchemaVersion: result.SchemaVersion, Name: name, Verdict: v, Reason: "NotFound", ExpectedRevision: revNew,
			Message: message,
			Flux: []result.FluxObject{{ID: typo, Kind: "Kustomization", Namespace: "flux-system", Name: "my-ap", Ready: "Unknown",
				Verdict: result.VerdictNotFound, Message: typo + " not found"}},
			DurationMs: ms,
		}
	}
	return result.NewRun([]string{typo}, revNew, []result.Cluster{
		missing("prod-eu", result.VerdictNotFound, typo+" not found; close names in flux-system: my-app; Kustomization my-ap exists in namespace team-a; no Kustomization or ResourceSet is creating it (missing for 2m0s or more)", 120_310),
		missing("staging", result.VerdictNotFound, "timed out after 10m0s: "+typo+" not found yet; Flux may still create it: Kustomization/flux-system/apps waits for its dependencies (spec.dependsOn)", 600_004),
	}, 10*time.Minute+12*time.Millisecond)
}

// emptyShardRun is a shard that holds none of the fleet's clusters, as the CLI writes it: it
// passes, saying why it verified nothing.
func emptyShardRun() result.Run {
	run := result.NewRun([]string{"Kustomization/flux-system/app"}, "a1b2c3d", nil, 40*time.Millisecond)
	run.Status = result.RunSuccess
	run.Condition = result.Condition{Type: "Ready", Status: "True", Reason: "EmptyShard",
		Message: "shard 3/3 holds none of the fleet's 2 clusters"}
	return run
}

// kustomization is a Flux object; verdict and ready say how it is.
func kustomization(name string, verdict result.Verdict, ready, applied string) result.FluxObject {
	const ns = "flux-system"
	return result.FluxObject{
		ID: result.ObjectID("Kustomization", ns, name), Kind: "Kustomization", Namespace: ns, Name: name,
		Verdict: verdict, Ready: ready, Reason: "ReconciliationSucceeded", Message: "Applied revision: " + applied,
		LastAppliedRevision: applied, LastAttemptedRevision: applied, Generation: 3, ObservedGeneration: 3,
	}
}

// object is an inventory object of owner.
func object(owner, group, kind, ns, name string, status result.ObjectStatus, message string) result.Object {
	return result.Object{
		ID: result.ObjectID(kind, ns, name), Group: group, Version: "v1", Kind: kind, Namespace: ns, Name: name,
		Owner: owner, Status: status, Message: message,
	}
}

// webApp is my-app's inventory, every object Current.
func webApp() []result.Object {
	return []result.Object{
		object(app, "", "ConfigMap", "app", "web-config", result.ObjectCurrent, "Resource is always ready"),
		object(app, "apps", "Deployment", "app", "web", result.ObjectCurrent, "Deployment is available. Replicas: 2"),
		object(app, "", "Service", "app", "web", result.ObjectCurrent, "Service is ready"),
	}
}

func currentCluster(name, rev string, ms int64) result.Cluster {
	return result.Cluster{
		SchemaVersion: result.SchemaVersion, Name: name, Verdict: result.VerdictCurrent, ExpectedRevision: rev,
		Flux:    []result.FluxObject{kustomization("my-app", result.VerdictCurrent, "True", rev)},
		Objects: webApp(), DurationMs: ms,
	}
}

func allCurrentRun() result.Run {
	return result.NewRun([]string{app}, revNew, []result.Cluster{
		currentCluster("staging", revNew, 8423),
		currentCluster("prod-us", revNew, 61990),
		currentCluster("dev-eu", revNew, 12345),
	}, 62*time.Second)
}

// crashLogs is a log of n lines ending in a panic.
func crashLogs(n int) string {
	var b strings.Builder
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "{\"level\":\"info\",\"msg\":\"processed batch %d\"}\n", i)
	}
	b.WriteString("panic: runtime error: invalid memory address or nil pointer dereference\n")
	return b.String()
}

func mixedRun() result.Run {
	prodObjects := webApp()
	prodObjects[1] = object(app, "apps", "Deployment", "app", "web", result.ObjectInProgress, "Available: 0/2")
	prodObjects[1].Failure = &result.Failure{
		Code: result.CodeImagePull, Reason: "ImagePullBackOff", Message: `Back-off pulling image "ghcr.io/org/web:nope"`,
		Pod: "web-5d9c7b8f4-x2x7q", Container: "web",
		LogsError: `container "web" in pod "web-5d9c7b8f4-x2x7q" is waiting to start: trying and failing to pull image`,
		Events: []result.Event{
			{Object: "Pod/app/web-5d9c7b8f4-x2x7q", Reason: "Failed", Message: `Failed to pull image "ghcr.io/org/web:nope": not found`, Count: 3},
			{Object: "Pod/app/web-5d9c7b8f4-x2x7q", Reason: "BackOff", Message: `Back-off pulling image "ghcr.io/org/web:nope"`, Count: 12},
		},
	}
	worker := object(app, "apps", "Deployment", "app", "worker", result.ObjectFailed, `Progress deadline exceeded`)
	worker.Failure = &result.Failure{
		Code: result.CodeCrashLoop, Reason: "CrashLoopBackOff", Message: "back-off 5m0s restarting failed container=worker",
		Pod: "worker-7f6b9c-qq2lm", Container: "worker", RestartCount: 5, Logs: crashLogs(25),
		Events: []result.Event{{Object: "Pod/app/worker-7f6b9c-qq2lm", Reason: "BackOff", Message: "Back-off restarting failed container worker", Count: 7}},
	}
	prodObjects = append(prodObjects, worker)

	lab := currentCluster("lab", revNew, 2310)
	lab.Verdict, lab.Code, lab.Message = result.VerdictSuspended, result.CodeFluxSuspended, app+" is suspended"
	lab.Flux[0] = kustomization("my-app", result.VerdictSuspended, "True", revOld)
	lab.Flux[0].Suspended, lab.Flux[0].Code = true, result.CodeFluxSuspended

	staging := currentCluster("staging", revNew, 300_004)
	staging.Verdict = result.VerdictTimeout
	staging.Message = "timed out after 5m0s waiting for revision main@sha1:9f8e7d6 (applied main@sha1:0a1b2c3)"
	staging.Flux[0] = kustomization("my-app", result.VerdictTimeout, "True", revOld)
	staging.Flux[0].Generation = 4

	ms := func(v int64) *int64 { return &v }
	devEU := currentCluster("dev-eu", revNew, 12345)
	devEU.Reconcile = &result.Reconcile{
		Requested:   []string{"GitRepository/flux-system/my-app", app},
		RequestedMs: ms(212), SourceReadyMs: ms(3150), AppliedMs: ms(9870), Notes: []string{},
	}
	staging.Reconcile = &result.Reconcile{
		Requested: []string{}, RequestedMs: nil,
		Notes: []string{"reconciliation not requested: the credentials may not patch GitRepository/flux-system/my-app (403): gitrepositories.source.toolkit.fluxcd.io \"my-app\" is forbidden"},
	}
	return result.NewRun([]string{app}, revNew, []result.Cluster{
		devEU,
		{
			SchemaVersion: result.SchemaVersion, Name: "prod-us", Verdict: result.VerdictFailed, ExpectedRevision: revNew,
			Code: result.CodeImagePull, Reason: "ImagePullBackOff",
			Message:    `Deployment/app/web: Back-off pulling image "ghcr.io/org/web:nope"`,
			Flux:       []result.FluxObject{kustomization("my-app", result.VerdictCurrent, "True", revNew)},
			Objects:    prodObjects,
			DurationMs: 184_250,
		},
		staging,
		{
			SchemaVersion: result.SchemaVersion, Name: "edge-ap", Verdict: result.VerdictUnreachable, ExpectedRevision: revNew,
			Message:    `Get "https://10.20.30.40:6443/api?timeout=32s": dial tcp 10.20.30.40:6443: i/o timeout`,
			DurationMs: 30_012,
		},
		lab,
		{
			SchemaVersion: result.SchemaVersion, Name: "sandbox", Verdict: result.VerdictInvalidConfig, ExpectedRevision: revNew,
			Message:    `kubeconfig context "sandbox" runs exec plugin "aws", which is not installed in the container`,
			DurationMs: 3,
		},
	}, 5*time.Minute+1500*time.Millisecond)
}

// platform is a Kustomization that owns a HelmRelease that owns a Deployment.
func platform(cluster string, failing bool) result.Cluster {
	const ks, hr = "Kustomization/flux-system/platform", "HelmRelease/app/web"
	c := result.Cluster{
		SchemaVersion: result.SchemaVersion, Name: cluster, Verdict: result.VerdictCurrent, DurationMs: 45_600,
		Flux: []result.FluxObject{
			kustomization("platform", result.VerdictCurrent, "True", revNew),
			{
				ID: hr, Kind: "HelmRelease", Namespace: "app", Name: "web", Owner: ks, Verdict: result.VerdictCurrent,
				Ready: "True", Reason: "UpgradeSucceeded", Message: "Helm upgrade succeeded for release app/web.v7 with chart web@1.4.0",
				LastAppliedRevision: "1.4.0", LastAttemptedRevision: "1.4.0", ChartVersion: "1.4.0", Generation: 7, ObservedGeneration: 7,
			},
		},
		Objects: []result.Object{
			object(hr, "", "ConfigMap", "app", "web-config", result.ObjectCurrent, "Resource is always ready"),
			object(hr, "apps", "Deployment", "app", "web", result.ObjectCurrent, "Deployment is available. Replicas: 3"),
			object(hr, "", "Service", "app", "web", result.ObjectCurrent, "Service is ready"),
			object(ks, "helm.toolkit.fluxcd.io", "HelmRelease", "app", "web", result.ObjectCurrent, "Resource is Ready"),
			object(ks, "source.toolkit.fluxcd.io", "HelmRepository", "flux-system", "charts", result.ObjectCurrent, "Resource is Ready"),
			object(ks, "", "Namespace", "", "app", result.ObjectCurrent, "Resource is current"),
		},
	}
	if !failing {
		return c
	}
	c.Verdict, c.Code, c.Reason = result.VerdictFailed, result.CodeCrashLoop, "CrashLoopBackOff"
	c.Message = "Deployment/app/web: back-off 5m0s restarting failed container=web"
	c.Flux[0].Verdict, c.Flux[0].Code, c.Flux[0].Ready = result.VerdictFailed, result.CodeFluxHealthCheckFailed, "False"
	c.Flux[0].Reason = "HealthCheckFailed"
	c.Flux[0].Message = "health check failed after 4m59s: failed early due to stalled resources: [HelmRelease/app/web status: 'Failed']"
	f := &c.Flux[1]
	f.Verdict, f.Code, f.Ready, f.Reason = result.VerdictFailed, result.CodeFluxUpgradeFailed, "False", "UpgradeFailed"
	f.Message = "Helm upgrade failed for release app/web with chart web@1.4.0: context deadline exceeded"
	f.LastAppliedRevision, f.ChartVersion = "1.3.2", "1.3.2"
	c.Objects[1].Status, c.Objects[1].Message = result.ObjectFailed, "Progress deadline exceeded"
	c.Objects[1].Failure = &result.Failure{
		Code: result.CodeCrashLoop, Reason: "CrashLoopBackOff", Message: "back-off 5m0s restarting failed container=web",
		Pod: "web-6c8d9f7b5-abcde", Container: "web", RestartCount: 12,
		Logs: "starting web 1.4.0\nloading config from /etc/web/config.yaml\nError: config: missing required key \"database.url\"\n",
		Events: []result.Event{
			{Object: "Pod/app/web-6c8d9f7b5-abcde", Reason: "BackOff", Message: "Back-off restarting failed container web in pod web-6c8d9f7b5-abcde", Count: 41},
		},
	}
	c.Objects[3].Status, c.Objects[3].Message = result.ObjectFailed, "UpgradeFailed: Helm upgrade failed for release app/web"
	return c
}

func nestedRun() result.Run {
	return result.NewRun([]string{"Kustomization/flux-system/platform"}, "", []result.Cluster{
		platform("prod-us", true),
		platform("prod-eu", false),
	}, 46*time.Second)
}

// hostileRun carries text that tries to break every format: pipes, newlines, HTML, markdown,
// backticks and fences, terminal escapes.
func hostileRun() result.Run {
	const hostileApp = "Kustomization/flux-system/my|app"
	evil := result.Cluster{
		SchemaVersion: result.SchemaVersion, Name: "evil|<b>cluster</b>", Verdict: result.VerdictFailed, Code: result.CodeConfig,
		Reason: "CreateContainerConfigError",
		Message: "line one\nline two | with pipe <script>alert('x')</script> `code` **bold** [link](https://evil.example) " +
			"&amp; _under_ </summary></details>",
		Flux: []result.FluxObject{kustomization("my|app", result.VerdictFailed, "False", revNew)},
		Objects: []result.Object{
			object(hostileApp, "apps", "Deployment", "app", "web", result.ObjectInProgress, "Available: 0/1\n| a | b |"),
		},
		DurationMs: 999,
	}
	evil.Flux[0].ID = hostileApp
	evil.Flux[0].Code, evil.Flux[0].Reason = result.CodeFluxHealthCheckFailed, "HealthCheckFailed"
	evil.Flux[0].Message = "health check failed:\n```\n</details><img src=x onerror=alert(1)>"
	evil.Objects[0].Failure = &result.Failure{
		Code: result.CodeConfig, Reason: "CreateContainerConfigError", Message: "secret \"db-<creds>\" not found | `x`",
		Pod: "web-`pod`-1", Container: "web<1>", RestartCount: 0,
		Logs:   "ok\n```\nrm -rf / # ``\n````\n\x1b[31mred\x1b[0m\ttab\r\n\x07bell\n\n</details>\n",
		Events: []result.Event{{Object: "Pod/app/web-`pod`-1", Reason: "Failed", Message: "</summary></details><h1>pwned</h1>\r\nnext | line", Count: 2}},
	}
	good := currentCluster("ok\ncluster", "v1`|<b>", 1)
	good.Message = "all | good\tbut `odd`"
	good.Preflight = &result.Preflight{
		Warnings: []string{"helm-controller in flux-system is not available (no replica available (0 of 1) since 2026-11-24T09:00:00Z (x: \n::error::forged ##[error]y | `z` <b>w</b>)); this app does not need it"},
		Notes:    []string{"deployments in flux-system could not be read: </details>\r\n::warning::n"},
	}
	good.Reconcile = &result.Reconcile{Requested: []string{}, Notes: []string{
		"reconciliation request for GitRepository/flux-system/x failed: \n::error::forged | `x` <b>y</b> ##[warning]z",
	}}
	return result.NewRun([]string{hostileApp, "HelmRelease/app/<web>"}, "v1`|<b>", []result.Cluster{evil, good}, time.Second)
}

// preflightRun is a fleet where the check of the Flux controllers found something: a
// controller the app needs is down on one cluster (a failure), one it does not need on another
// (a warning), and a third where flux-system could not be read (a note).
func preflightRun() result.Run {
	down := result.Cluster{
		SchemaVersion: result.SchemaVersion, Name: "prod-eu", Verdict: result.VerdictFailed, Code: result.CodeFluxUnhealthy,
		Reason:     "ControllerUnavailable",
		Message:    "kustomize-controller in flux-system is not available: 0 of 1 replicas available; it must reconcile Kustomization/flux-system/my-app",
		Flux:       []result.FluxObject{kustomization("my-app", result.VerdictInProgress, "Unknown", revOld)},
		DurationMs: 1203,
	}
	warned := currentCluster("staging", revNew, 8423)
	warned.Preflight = &result.Preflight{
		Warnings: []string{"helm-controller in flux-system is not available (no replica available (0 of 1)); this app does not need it"},
		Notes:    []string{},
	}
	noted := currentCluster("prod-us", revNew, 9120)
	noted.Preflight = &result.Preflight{
		Warnings: []string{},
		Notes:    []string{"deployments in flux-system could not be read (forbidden); the preflight did not judge the controllers"},
	}
	return result.NewRun([]string{app}, revNew, []result.Cluster{down, warned, noted}, 10*time.Second)
}
