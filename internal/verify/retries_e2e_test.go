package verify_test

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/testing/testbed"
	"github.com/org/app-status-action/internal/verify"
)

// TestWebhookAvailableLater (issue 19): a validating webhook for the app's pods, installed
// with the rollout, cannot be called yet (connection refused): the real kube-apiserver refuses
// the ReplicaSet's pods and the ReplicaSet reports ReplicaFailure "failed calling webhook".
// The webhook comes up 10 s later; the ReplicaSet controller retries and the run is Current,
// never failed (before, admission-denied at once).
func TestWebhookAvailableLater(t *testing.T) {
	b := bed.Get(t)
	c := b.Clusters[2]
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	ns := c.Namespace(t)
	name := ns + "-hook"

	// An address nothing listens on yet, and the CA of the server that will (httptest's TLS
	// servers share one certificate, valid for 127.0.0.1).
	probe := httptest.NewTLSServer(http.NotFoundHandler())
	caBundle := certPEM(probe)
	probe.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()

	url := "https://" + addr + "/validate"
	fail, none, timeout := admissionregistrationv1.Fail, admissionregistrationv1.SideEffectClassNone, int32(5)
	hook := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Webhooks: []admissionregistrationv1.ValidatingWebhook{{
			Name:         "pods." + ns + ".test.app-status.dev",
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: &url, CABundle: caBundle},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule:       admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}},
			}},
			NamespaceSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}},
			FailurePolicy:           &fail,
			SideEffects:             &none,
			AdmissionReviewVersions: []string{"v1"},
			TimeoutSeconds:          &timeout,
		}},
	}
	if _, err := c.Kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, hook, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	cleanUpFlux(t, c, name)
	if _, err := c.DeployApp(ctx, testbed.Kustomization{Name: name, TargetNamespace: ns}, appDir(t, "web"), commitA); err != nil {
		t.Fatal(err)
	}

	type outcome struct {
		res     result.Cluster
		elapsed time.Duration
	}
	done := make(chan outcome, 1)
	started := time.Now()
	go func() {
		req := verify.Request{Targets: targetsOf(c), Resources: []flux.Ref{ks(name)}, Revision: mustRevision(t, commitA), Timeout: 3 * time.Minute, Workloads: true}
		res := verify.Run(ctx, req).Results[0]
		done <- outcome{res, time.Since(started)}
	}()

	// The refusal is there: the ReplicaSet reports it.
	var refused time.Time
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		rss, err := c.Kube.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		for _, rs := range rss.Items {
			for _, cond := range rs.Status.Conditions {
				if cond.Type == appsv1.ReplicaSetReplicaFailure && strings.Contains(cond.Message, "failed calling webhook") {
					refused = time.Now()
					return true, nil
				}
			}
		}
		return false, nil
	}); err != nil {
		t.Fatalf("the ReplicaSet never reported the webhook's refusal: %v", err)
	}
	select {
	case o := <-done:
		t.Fatalf("the run ended while the webhook was down: %s (%s), want it to wait", o.res.Verdict, o.res.Message)
	case <-time.After(10 * time.Second):
	}

	l, err = net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("the webhook's address was taken meanwhile: %v", err)
	}
	srv := &httptest.Server{Listener: l, Config: &http.Server{Handler: http.HandlerFunc(allowAll), ReadHeaderTimeout: 5 * time.Second}}
	srv.StartTLS()
	defer srv.Close()
	up := time.Now()
	t.Logf("webhook up %s after the ReplicaSet reported the refusal", up.Sub(refused).Round(time.Millisecond))

	o := <-done
	if o.res.Verdict != result.VerdictCurrent {
		t.Fatalf("webhook up 10s later: verdict %s (%s), want Current", o.res.Verdict, o.res.Message)
	}
	t.Logf("Current %s after the webhook came up (the ReplicaSet controller's retry back-off included)", time.Since(up).Round(time.Millisecond))
}

// allowAll admits every request, as a webhook that is up and has nothing to say.
func allowAll(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var review admissionv1.AdmissionReview
	if err := json.Unmarshal(body, &review); err != nil || review.Request == nil {
		http.Error(w, "not an AdmissionReview", http.StatusBadRequest)
		return
	}
	review.Response = &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
	review.Request = nil
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(review)
}

// certPEM is the PEM of a TLS test server's certificate.
func certPEM(s *httptest.Server) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.Certificate().Raw})
}

// TestHealsWithinItsWindow (issue 19): what the kubelet retries and heals within its window
// never fails the run, which is Current once it healed. kwok plays the kubelet: the test
// brings what was missing, then lets the pods go on (it lifts their failure mode, or reports
// the readiness probe passing).
//   - a ConfigMap the container reads is created 10 s after the rollout, as an operator
//     (External Secrets, Sealed Secrets) does (CreateContainerConfigError, config);
//   - the registry times out, then answers 10 s later (ErrImagePull i/o timeout, image-pull);
//   - a pod runs unready for 10 s, then passes its probe, well within its Deployment's
//     progress deadline (never-ready).
func TestHealsWithinItsWindow(t *testing.T) {
	t.Parallel()
	lift := func(ctx context.Context, t *testing.T, c *testbed.Cluster, ns string, pods []corev1.Pod) {
		patch := []byte(`[{"op":"remove","path":"/metadata/annotations/testbed.app-status.dev~1fail"}]`)
		for _, p := range pods {
			if _, err := c.Kube.CoreV1().Pods(ns).Patch(ctx, p.Name, types.JSONPatchType, patch, metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	waitingWith := func(reason string) func(corev1.Pod) bool {
		return func(p corev1.Pod) bool {
			cs := p.Status.ContainerStatuses
			return len(cs) > 0 && cs[0].State.Waiting != nil && cs[0].State.Waiting.Reason == reason
		}
	}
	cases := []struct {
		name, app string
		failing   func(corev1.Pod) bool
		heal      func(ctx context.Context, t *testing.T, c *testbed.Cluster, ns string, pods []corev1.Pod)
	}{
		{
			name: "ConfigMap created later", app: "fail-config", failing: waitingWith("CreateContainerConfigError"),
			heal: func(ctx context.Context, t *testing.T, c *testbed.Cluster, ns string, pods []corev1.Pod) {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "missing", Namespace: ns}, Data: map[string]string{"key": "value"}}
				if _, err := c.Kube.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
					t.Fatal(err)
				}
				lift(ctx, t, c, ns, pods)
			},
		},
		{name: "registry back", app: "fail-image-pull-timeout", failing: waitingWith("ErrImagePull"), heal: lift},
		{
			name: "ready later", app: "fail-never-ready",
			failing: func(p corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning },
			heal: func(ctx context.Context, t *testing.T, c *testbed.Cluster, ns string, pods []corev1.Pod) {
				for _, p := range pods {
					err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
						cur, err := c.Kube.CoreV1().Pods(ns).Get(ctx, p.Name, metav1.GetOptions{})
						if err != nil {
							return err
						}
						now := metav1.Now()
						for i := range cur.Status.Conditions {
							if cur.Status.Conditions[i].Type == corev1.PodReady || cur.Status.Conditions[i].Type == corev1.ContainersReady {
								cur.Status.Conditions[i].Status, cur.Status.Conditions[i].LastTransitionTime = corev1.ConditionTrue, now
							}
						}
						for i := range cur.Status.ContainerStatuses {
							cur.Status.ContainerStatuses[i].Ready = true
						}
						_, err = c.Kube.CoreV1().Pods(ns).UpdateStatus(ctx, cur, metav1.UpdateOptions{})
						return err
					})
					if err != nil {
						t.Fatal(err)
					}
				}
			},
		},
	}
	b := bed.Get(t)
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := b.Clusters[i%len(b.Clusters)]
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			ns := c.Namespace(t)
			name := ns + "-heals"
			cleanUpFlux(t, c, name)
			if _, err := c.DeployApp(ctx, testbed.Kustomization{Name: name, TargetNamespace: ns}, appDir(t, tc.app), commitA); err != nil {
				t.Fatal(err)
			}
			done := make(chan result.Cluster, 1)
			go func() {
				req := verify.Request{Targets: targetsOf(c), Resources: []flux.Ref{ks(name)}, Revision: mustRevision(t, commitA), Timeout: 3 * time.Minute, Workloads: true}
				done <- verify.Run(ctx, req).Results[0]
			}()
			var failing []corev1.Pod
			if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
				pods, err := c.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
				if err != nil || len(pods.Items) == 0 {
					return false, nil
				}
				for _, p := range pods.Items {
					if !tc.failing(p) {
						return false, nil
					}
				}
				failing = pods.Items
				return true, nil
			}); err != nil {
				t.Fatalf("the pods never showed the failure: %v", err)
			}
			select {
			case got := <-done:
				t.Fatalf("the run ended while it was failing: %s (%s), want it to wait", got.Verdict, got.Message)
			case <-time.After(10 * time.Second):
			}
			tc.heal(ctx, t, c, ns, failing)
			healed := time.Now()
			got := <-done
			if got.Verdict != result.VerdictCurrent {
				t.Fatalf("healed 10s later: verdict %s (%s), want Current", got.Verdict, got.Message)
			}
			t.Logf("Current %s after it healed", time.Since(healed).Round(time.Millisecond))
		})
	}
}
