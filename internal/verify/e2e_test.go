package verify_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Masterminds/semver/v3"
	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/testing/testbed"
	"github.com/org/app-status-action/internal/verify"
)

// bed holds three clusters with the real kustomize-controller and helm-controller, shared by
// the package's tests; each test deploys its own app in its own namespace.
var bed = testbed.NewShared(testbed.Options{Clusters: 3, Flux: true, Prefix: "verify"})

// realBed runs the real source-controller, which fetches from an OCI registry: publishing a
// revision is pushing an artifact (reconcile_e2e_test.go).
var realBed = testbed.NewShared(testbed.Options{Clusters: 2, Flux: true, RealSources: true, Prefix: "sources"})

// prevBed runs the previous minors of kustomize-controller and helm-controller (against the
// current minors' CRDs), so the failure-code tests prove their verdicts on both
// (onControllerMatrix).
var prevBed = testbed.NewShared(testbed.Options{Clusters: 2, Flux: true, Controllers: testbed.PreviousControllers, Prefix: "prev"})

// downBed represents its Flux controllers by Deployments in flux-system, for the tests that
// stop one (resourceset_e2e_test.go), so that the tests on the other beds never see a
// controller go away. It starts when such a test first asks for it.
var downBed = testbed.NewShared(testbed.Options{Clusters: 1, Nodes: 1, Flux: true, ControllerDeployments: true, Prefix: "down"})

func TestMain(m *testing.M) {
	// As the CLI does: the verdicts the tests check say what matters.
	verify.DiscardClientLogs()
	code := m.Run()
	bed.Close()
	realBed.Close()
	prevBed.Close()
	downBed.Close()
	flaggerBed.Close()
	os.Exit(code)
}

const (
	commitA = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
	commitB = "b2c3d4e5f60718293a4b5c6d7e8f9012345678a1"
)

// onControllerMatrix runs test on the bed of each pinned generation of the Flux controllers,
// the current minors' and the previous ones', as parallel subtests named by the version of
// the controller under test that runs there (e.g. "kustomize-controller@v1.9.5").
func onControllerMatrix(t *testing.T, controller string, test func(t *testing.T, b *testbed.Bed)) {
	t.Helper()
	seen := map[string]bool{}
	for _, s := range []*testbed.Shared{bed, prevBed} {
		b := s.Get(t)
		version, err := b.ControllerVersion(controller)
		if err != nil {
			t.Fatal(err)
		}
		if seen[version] {
			t.Fatalf("both beds of the controller matrix run %s %s", controller, version)
		}
		seen[version] = true
		t.Run(controller+"@"+version, func(t *testing.T) {
			t.Parallel()
			test(t, b)
		})
	}
}

// controllerAtLeast reports whether the bed runs the named controller at version or later:
// a test on the controller matrix asserts what the run does where the older one lacks a
// feature.
func controllerAtLeast(t *testing.T, b *testbed.Bed, controller, version string) bool {
	t.Helper()
	running, err := b.ControllerVersion(controller)
	if err != nil {
		t.Fatal(err)
	}
	have, err := semver.NewVersion(running)
	if err != nil {
		t.Fatal(err)
	}
	return !have.LessThan(semver.MustParse(version))
}

func appDir(t *testing.T, name string) string { return testbed.Testdata(t, "apps", name) }

// manifestDir is a folder holding the objects' manifests, one file each, for a Kustomization
// to apply: a tree of Flux objects.
func manifestDir(t *testing.T, objs ...*unstructured.Unstructured) string {
	t.Helper()
	dir := t.TempDir()
	for i, o := range objs {
		data, err := yaml.Marshal(o.Object)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%02d-%s.yaml", i, strings.ToLower(o.GetKind()))), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func targetsOf(clusters ...*testbed.Cluster) []verify.Target {
	var ts []verify.Target
	for _, c := range clusters {
		ts = append(ts, verify.Target{Name: c.Name, Config: c.Config})
	}
	return ts
}

func mustRevision(t *testing.T, s string) flux.Revision {
	t.Helper()
	r, err := flux.ParseRevision(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func ks(name string) flux.Ref {
	return flux.Ref{Kind: flux.KindKustomization, Namespace: "flux-system", Name: name}
}

// verdicts returns cluster name -> verdict.
func verdicts(run result.Run) map[string]result.Verdict {
	m := map[string]result.Verdict{}
	for _, c := range run.Results {
		m[c.Name] = c.Verdict
	}
	return m
}

func byName(t *testing.T, run result.Run, name string) result.Cluster {
	t.Helper()
	for _, c := range run.Results {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no result for cluster %s in %+v", name, run.Results)
	return result.Cluster{}
}

// TestCurrentOnEveryCluster: the app is applied by the real kustomize-controller on three
// clusters; verify waits for the revision (given as a short SHA) and for every object, and says
// Current for all three with the applied revision and every inventory object.
func TestCurrentOnEveryCluster(t *testing.T) {
	b := bed.Get(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := b.Namespace(t)
	for _, c := range b.Clusters {
		if _, err := c.DeployApp(ctx, testbed.Kustomization{Name: ns, TargetNamespace: ns}, appDir(t, "web"), commitA); err != nil {
			t.Fatal(err)
		}
	}
	run := verify.Run(ctx, verify.Request{
		Targets:   targetsOf(b.Clusters...),
		Resources: []flux.Ref{ks(ns)},
		Revision:  mustRevision(t, commitA[:7]),
		Timeout:   2 * time.Minute,
		Workloads: true,
	})
	if run.Status != result.RunSuccess {
		t.Fatalf("Run() status = %s, want success; condition: %+v", run.Status, run.Condition)
	}
	wantObjects := []string{"ConfigMap/" + ns + "/web-config", "Deployment/" + ns + "/web", "Service/" + ns + "/web"}
	for _, c := range run.Results {
		if c.Verdict != result.VerdictCurrent {
			t.Errorf("cluster %s verdict = %s (%s), want Current", c.Name, c.Verdict, c.Message)
		}
		checkMoments(t, c)
		if c.AppliedMs == nil || c.Flux[0].SinceMs == nil {
			t.Errorf("cluster %s: no moment Flux applied the revision (appliedMs %v, Flux sinceMs %v)", c.Name, c.AppliedMs, c.Flux[0].SinceMs)
		}
		if got, want := c.Flux[0].LastAppliedRevision, "main@sha1:"+commitA; got != want {
			t.Errorf("cluster %s applied revision = %q, want %q", c.Name, got, want)
		}
		var got []string
		for _, o := range c.Objects {
			got = append(got, o.ID)
			if o.Status != result.ObjectCurrent {
				t.Errorf("cluster %s object %s status = %s, want Current", c.Name, o.ID, o.Status)
			}
		}
		if diff := cmp.Diff(wantObjects, got); diff != "" {
			t.Errorf("cluster %s objects (-want +got):\n%s", c.Name, diff)
		}
	}
	if run.Condition.Status != "True" {
		t.Errorf("aggregated Ready = %+v, want True", run.Condition)
	}
}

// TestWaitingClustersResume: on real API servers, with one cluster read at a time, the
// clusters that wait for their turn close the probe's connection and resume its TLS session
// when their turn comes: every cluster makes one full handshake, with its client certificate,
// and every one is Current. A fake cluster whose lists never answer holds the one turn for
// slotHold (5s) while the real clusters' probes end, so that they wait.
func TestWaitingClustersResume(t *testing.T) {
	b := bed.Get(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := b.Namespace(t)
	for _, c := range b.Clusters {
		if _, err := c.DeployApp(ctx, testbed.Kustomization{Name: ns, TargetNamespace: ns}, appDir(t, "web"), commitA); err != nil {
			t.Fatal(err)
		}
	}
	holder := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("watch") == "" && strings.HasSuffix(r.URL.Path, "/kustomizations/"+ns) {
			// The probe: the object is not there (yet), the kind is served.
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprintf(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404,"details":{"name":%q,"group":"kustomize.toolkit.fluxcd.io","kind":"kustomizations"}}`, ns)
			return
		}
		<-r.Context().Done()
	}))
	t.Cleanup(holder.Close)
	var (
		mu                   sync.Mutex
		full, resumed, parks int
		done                 = map[string]bool{}
	)
	targets := append(targetsOf(b.Clusters...), verify.Target{Name: "holder", Config: &rest.Config{Host: holder.URL}})
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	req := verify.WatchConnections(verify.Request{
		Targets:     targets,
		Resources:   []flux.Ref{ks(ns)},
		Revision:    mustRevision(t, commitA),
		Timeout:     2 * time.Minute,
		Workloads:   true,
		MaxParallel: 1,
		Progress: func(p verify.Progress) {
			if !p.Final || p.Cluster == "holder" {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if done[p.Cluster] = true; len(done) == len(b.Clusters) {
				stop() // the holder's verdict says nothing here
			}
		},
	}, func(cs tls.ConnectionState) {
		mu.Lock()
		defer mu.Unlock()
		if cs.DidResume {
			resumed++
		} else {
			full++
		}
	}, func(cluster string) {
		mu.Lock()
		defer mu.Unlock()
		if cluster != "holder" {
			parks++ // (the holder, plain HTTP, has no session to resume)
		}
	})
	run := verify.Run(runCtx, req)
	want := map[string]result.Verdict{"holder": result.VerdictCancelled}
	for _, c := range b.Clusters {
		want[c.Name] = result.VerdictCurrent
		if len(c.Config.CertData) == 0 {
			// (A certificate read from files gets no session cache: newClusterHTTPClient.)
			t.Errorf("cluster %s's kubeconfig carries no inline client certificate: the test proves less than it says", c.Name)
		}
	}
	if diff := cmp.Diff(want, verdicts(run)); diff != "" {
		t.Errorf("verdicts (-want +got):\n%s", diff)
	}
	mu.Lock()
	defer mu.Unlock()
	// One full handshake per cluster; a probe try that found no answer in probeTimeout on a
	// loaded machine may have made another.
	if full < len(b.Clusters) || full > 2*len(b.Clusters) {
		t.Errorf("%d full TLS handshakes, want %d (one per real cluster), at most %d", full, len(b.Clusters), 2*len(b.Clusters))
	}
	if parks == 0 || resumed < parks {
		t.Errorf("%d clusters parked and %d sessions were resumed; want some parked, each resuming", parks, resumed)
	}
	t.Logf("%d full handshakes, %d resumed, %d clusters parked", full, resumed, parks)
}

// TestWaitsForTheExpectedRevision: a new revision reaches two of three clusters; the third is
// Ready on the old revision and must time out, never pass (the stale-success trap).
func TestWaitsForTheExpectedRevision(t *testing.T) {
	b := bed.Get(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := b.Namespace(t)
	k := testbed.Kustomization{Name: ns, TargetNamespace: ns}
	for _, c := range b.Clusters {
		art, err := c.DeployApp(ctx, k, appDir(t, "web"), commitA)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.WaitFluxApplied(ctx, testbed.KustomizationGVR, "flux-system", ns, art.Revision); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range b.Clusters[:2] {
		if _, err := c.DeployApp(ctx, k, appDir(t, "web-v2"), commitB); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	run := verify.Run(ctx, verify.Request{
		Targets:   targetsOf(b.Clusters...),
		Resources: []flux.Ref{ks(ns)},
		Revision:  mustRevision(t, "main@sha1:"+commitB),
		Timeout:   20 * time.Second,
		Workloads: true,
	})
	took := time.Since(start)
	want := map[string]result.Verdict{b.Clusters[0].Name: result.VerdictCurrent, b.Clusters[1].Name: result.VerdictCurrent, b.Clusters[2].Name: result.VerdictTimeout}
	if diff := cmp.Diff(want, verdicts(run)); diff != "" {
		t.Fatalf("verdicts (-want +got):\n%s\nresults: %+v", diff, run.Results)
	}
	stale := byName(t, run, b.Clusters[2].Name)
	if !strings.Contains(stale.Message, commitA[:7]) || !strings.Contains(stale.Message, "waiting for") {
		t.Errorf("stale cluster message = %q, want it to name the applied revision %s and what it waits for", stale.Message, commitA[:7])
	}
	if run.Status != result.RunTimeout {
		t.Errorf("status = %s, want timeout", run.Status)
	}
	if diff := cmp.Diff([]string{b.Clusters[2].Name}, run.FailedClusters); diff != "" {
		t.Errorf("failed clusters (-want +got):\n%s", diff)
	}
	if took > 30*time.Second {
		t.Errorf("Run took %s with a 20s timeout", took)
	}
}

// TestOneVerdictPerClusterProblem: a healthy cluster, a suspended Kustomization, credentials
// that may not read the Kustomization, credentials that may read it but not the Deployment, a
// stopped cluster and an unusable kubeconfig, all in one run: each gets its own verdict and
// none hides another's.
func TestOneVerdictPerClusterProblem(t *testing.T) {
	b := bed.Get(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := b.Namespace(t)
	healthy, suspended, restricted := b.Clusters[0], b.Clusters[1], b.Clusters[2]
	for _, c := range b.Clusters {
		k := testbed.Kustomization{Name: ns, TargetNamespace: ns, Suspend: c == suspended}
		if _, err := c.DeployApp(ctx, k, appDir(t, "web"), commitA); err != nil {
			t.Fatal(err)
		}
	}
	if err := restricted.WaitFluxApplied(ctx, testbed.KustomizationGVR, "flux-system", ns, "main@sha1:"+commitA); err != nil {
		t.Fatal(err)
	}
	noRights, err := restricted.TokenKubeconfig(ctx, ns, "no-rights", nil)
	if err != nil {
		t.Fatal(err)
	}
	fluxOnly, err := restricted.TokenKubeconfig(ctx, ns, "flux-only", []rbacv1.PolicyRule{{
		APIGroups: []string{"kustomize.toolkit.fluxcd.io"}, Resources: []string{"kustomizations"}, Verbs: []string{"get", "list", "watch"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	stopped, err := testbed.Start(ctx, testbed.Options{Clusters: 1, Prefix: "stopped", Nodes: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stopped.Close)
	if err := stopped.Clusters[0].Stop(ctx); err != nil {
		t.Fatal(err)
	}

	targets := []verify.Target{
		{Name: "healthy", Config: healthy.Config},
		{Name: "suspended", Config: suspended.Config},
		{Name: "no-rights", Config: restConfig(t, noRights)},
		{Name: "flux-only", Config: restConfig(t, fluxOnly)},
		{Name: "stopped", Config: stopped.Clusters[0].Config},
		{Name: "exec-plugin", Invalid: "the kubeconfig's user needs an exec credential plugin"},
	}
	start := time.Now()
	run := verify.Run(ctx, verify.Request{Targets: targets, Resources: []flux.Ref{ks(ns)}, Timeout: 90 * time.Second, Workloads: true})
	took := time.Since(start)
	want := map[string]result.Verdict{
		"healthy": result.VerdictCurrent, "suspended": result.VerdictSuspended, "no-rights": result.VerdictForbidden,
		"flux-only": result.VerdictForbidden, "stopped": result.VerdictUnreachable, "exec-plugin": result.VerdictInvalidConfig,
	}
	if diff := cmp.Diff(want, verdicts(run)); diff != "" {
		t.Fatalf("verdicts (-want +got):\n%s\nresults: %+v", diff, run.Results)
	}
	if got := byName(t, run, "suspended"); got.Code != result.CodeFluxSuspended || !strings.Contains(got.Message, "resume") {
		t.Errorf("suspended: code %q message %q, want flux-suspended and how to resume", got.Code, got.Message)
	}
	// The app's kinds are listed concurrently, so whichever list is refused first is named.
	if got := byName(t, run, "flux-only"); !strings.Contains(got.Message, "deployments") &&
		!strings.Contains(got.Message, "configmaps") && !strings.Contains(got.Message, "services") {
		t.Errorf("flux-only message = %q, want it to name what may not be read (configmaps, deployments or services)", got.Message)
	}
	if took > 60*time.Second {
		t.Errorf("Run took %s: no verdict here should wait for the 90s timeout", took)
	}
	if got, wantNames := run.ReadyClusters, []string{"healthy"}; !cmp.Equal(got, wantNames) {
		t.Errorf("ready clusters = %v, want %v", got, wantNames)
	}
}

func restConfig(t *testing.T, kubeconfig []byte) *rest.Config {
	t.Helper()
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}
