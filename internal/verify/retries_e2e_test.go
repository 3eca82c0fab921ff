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

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
	"github.com/org/app-status-action/internal/testbed"
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

// TestSecretCreatedLater (issue 19): a pod's container cannot be created because the
// ConfigMap it reads does not exist yet (CreateContainerConfigError), as when an operator
// (External Secrets, Sealed Secrets) creates it after the rollout. 10 s later the object
// exists and the kubelet starts the container (kwok plays the kubelet: the test lifts the
// pods' failure mode once it created the ConfigMap). The run is Current, never failed
// `config` (before, it failed at once).
func TestSecretCreatedLater(t *testing.T) {
	b := bed.Get(t)
	c := b.Clusters[2]
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	ns := c.Namespace(t)
	name := ns + "-later"
	cleanUpFlux(t, c, name)
	if _, err := c.DeployApp(ctx, testbed.Kustomization{Name: name, TargetNamespace: ns}, appDir(t, "fail-config"), commitA); err != nil {
		t.Fatal(err)
	}
	type outcome struct{ res result.Cluster }
	done := make(chan outcome, 1)
	go func() {
		req := verify.Request{Targets: targetsOf(c), Resources: []flux.Ref{ks(name)}, Revision: mustRevision(t, commitA), Timeout: 3 * time.Minute, Workloads: true}
		done <- outcome{verify.Run(ctx, req).Results[0]}
	}()

	var waiting []corev1.Pod
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		pods, err := c.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil || len(pods.Items) == 0 {
			return false, nil
		}
		for _, p := range pods.Items {
			if len(p.Status.ContainerStatuses) == 0 || p.Status.ContainerStatuses[0].State.Waiting == nil ||
				p.Status.ContainerStatuses[0].State.Waiting.Reason != "CreateContainerConfigError" {
				return false, nil
			}
		}
		waiting = pods.Items
		return true, nil
	}); err != nil {
		t.Fatalf("the pods never waited CreateContainerConfigError: %v", err)
	}
	select {
	case o := <-done:
		t.Fatalf("the run ended while the ConfigMap was missing: %s (%s), want it to wait", o.res.Verdict, o.res.Message)
	case <-time.After(10 * time.Second):
	}

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "missing", Namespace: ns}, Data: map[string]string{"key": "value"}}
	if _, err := c.Kube.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	created := time.Now()
	lift := []byte(`[{"op":"remove","path":"/metadata/annotations/testbed.app-status.dev~1fail"}]`)
	for _, p := range waiting {
		if _, err := c.Kube.CoreV1().Pods(ns).Patch(ctx, p.Name, types.JSONPatchType, lift, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	o := <-done
	if o.res.Verdict != result.VerdictCurrent {
		t.Fatalf("ConfigMap created 10s later: verdict %s (%s), want Current", o.res.Verdict, o.res.Message)
	}
	t.Logf("Current %s after the ConfigMap was created", time.Since(created).Round(time.Millisecond))
}
