package main

import (
	"context"
	"fmt"
	"time"

	"golang.org/x/sync/errgroup"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/org/app-status-action/internal/testing/testbed"
)

// scaleApp is an app the bench writes itself, status included, as if kustomize-controller had
// applied it and the workload controllers had rolled it out: for clusters that run no
// controllers. Half its objects are Deployments, a quarter Services, the rest ConfigMaps.
type scaleApp struct {
	Name    string // the Kustomization in flux-system and the target namespace
	Objects int
	Commit  string
}

func (a scaleApp) counts() (deployments, services, configMaps int) {
	d, s := a.Objects/2, a.Objects/4
	return d, s, a.Objects - d - s
}

// populate creates the app's objects with a Current status, then its Kustomization, Ready at
// the app's revision with every object in its inventory.
func (a scaleApp) populate(ctx context.Context, c *testbed.Cluster) error {
	if err := c.EnsureNamespace(ctx, a.Name); err != nil {
		return err
	}
	nd, ns, nc := a.counts()
	entries := make([]any, 0, a.Objects)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for i := range nd {
		name := fmt.Sprintf("web-%03d", i+1)
		entries = append(entries, map[string]any{"id": a.Name + "_" + name + "_apps_Deployment", "v": "v1"})
		g.Go(func() error { return a.deployment(gctx, c, name) })
	}
	for i := range ns {
		name := fmt.Sprintf("web-%03d", i+1)
		entries = append(entries, map[string]any{"id": a.Name + "_" + name + "__Service", "v": "v1"})
		g.Go(func() error {
			svc := &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Name: name},
				Spec: corev1.ServiceSpec{Selector: map[string]string{"app": name},
					Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}}},
			}
			_, err := c.Kube.CoreV1().Services(a.Name).Create(gctx, svc, metav1.CreateOptions{})
			return wrap(err, "create Service", c, name)
		})
	}
	for i := range nc {
		name := fmt.Sprintf("config-%03d", i+1)
		entries = append(entries, map[string]any{"id": a.Name + "_" + name + "__ConfigMap", "v": "v1"})
		g.Go(func() error {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name},
				Data: map[string]string{"greeting": "hello", "feature-flags": "a=true,b=false,c=true"}}
			_, err := c.Kube.CoreV1().ConfigMaps(a.Name).Create(gctx, cm, metav1.CreateOptions{})
			return wrap(err, "create ConfigMap", c, name)
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return a.kustomization(ctx, c, entries)
}

func (a scaleApp) deployment(ctx context.Context, c *testbed.Cluster, name string) error {
	replicas := int32(2)
	labels := map[string]string{"app": name}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "web", Image: "ghcr.io/example/web:1.0.0",
					Ports: []corev1.ContainerPort{{ContainerPort: 8080}},
				}}},
			},
		},
	}
	created, err := c.Kube.AppsV1().Deployments(a.Name).Create(ctx, d, metav1.CreateOptions{})
	if err != nil {
		return wrap(err, "create Deployment", c, name)
	}
	now := metav1.Now()
	created.Status = appsv1.DeploymentStatus{
		ObservedGeneration: created.Generation,
		Replicas:           replicas, UpdatedReplicas: replicas, ReadyReplicas: replicas, AvailableReplicas: replicas,
		Conditions: []appsv1.DeploymentCondition{
			{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable",
				Message: "Deployment has minimum availability.", LastUpdateTime: now, LastTransitionTime: now},
			{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionTrue, Reason: "NewReplicaSetAvailable",
				Message: fmt.Sprintf("ReplicaSet %q has successfully progressed.", name+"-5d8f7c9b6"), LastUpdateTime: now, LastTransitionTime: now},
		},
	}
	_, err = c.Kube.AppsV1().Deployments(a.Name).UpdateStatus(ctx, created, metav1.UpdateOptions{})
	return wrap(err, "write the status of Deployment", c, name)
}

// kustomization writes the Kustomization and the status kustomize-controller would give it.
func (a scaleApp) kustomization(ctx context.Context, c *testbed.Cluster, entries []any) error {
	k := testbed.Kustomization{Name: a.Name, TargetNamespace: a.Name}.Manifest()
	ri := c.Dynamic.Resource(testbed.KustomizationGVR).Namespace("flux-system")
	created, err := ri.Create(ctx, k, metav1.CreateOptions{})
	if err != nil {
		return wrap(err, "create Kustomization", c, a.Name)
	}
	rev := gitRevision(a.Commit)
	now := time.Now().UTC().Format(time.RFC3339)
	created.Object["status"] = map[string]any{
		"observedGeneration":    created.GetGeneration(),
		"lastAppliedRevision":   rev,
		"lastAttemptedRevision": rev,
		"conditions": []any{map[string]any{
			"type": "Ready", "status": "True", "reason": "ReconciliationSucceeded",
			"message": "Applied revision: " + rev, "lastTransitionTime": now, "observedGeneration": created.GetGeneration(),
		}},
		"inventory": map[string]any{"entries": entries},
	}
	_, err = ri.UpdateStatus(ctx, created, metav1.UpdateOptions{})
	return wrap(err, "write the status of Kustomization", c, a.Name)
}

func wrap(err error, what string, c *testbed.Cluster, name string) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s %s in %s: %w", what, name, c.Name, err)
}
