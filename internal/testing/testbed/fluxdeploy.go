package testbed

import (
	"context"
	"fmt"
	"slices"
	"syscall"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
)

// The Flux controllers of a bed run as processes on this machine, outside the cluster. With
// Options.ControllerDeployments each is also represented in the cluster as Flux installs it:
// a Deployment of that name in flux-system, labelled as the Flux distribution labels it (the
// manifests flux-operator v0.59.0 installs, config/data/flux/v2.7.4/kustomize-controller.yaml,
// and the flux install labels), whose pod kwok runs. Its availability follows the process:
// StopController stops the process and scales the Deployment to zero, StartController starts
// both again. source-controller, which the bed plays unless RealSources, is represented too,
// available while the bed plays it. Tools that judge a Flux installation by those Deployments
// (the preflight) then see what a cluster would show.

// fluxControllerFlags are the flags StartFlux gives kustomize-controller and helm-controller.
var fluxControllerFlags = []string{"--http-retry=3", "--feature-gates=ExternalArtifact=true"}

// controllerDeployment is the Deployment that represents a Flux controller of the cluster.
func controllerDeployment(name string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{
		"app.kubernetes.io/component": name,
		"app.kubernetes.io/instance":  "flux-system",
		"app.kubernetes.io/part-of":   "flux",
		"control-plane":               "controller",
	}
	podLabels := map[string]string{"app": name, "app.kubernetes.io/component": name, "app.kubernetes.io/part-of": "flux"}
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "flux-system", Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: podLabels},
				Spec: corev1.PodSpec{
					Containers: []corev1.Container{{Name: "manager", Image: "ghcr.io/fluxcd/" + name}},
				},
			},
		},
	}
}

// deployControllers represents every Flux controller of the cluster by its Deployment and
// waits until each is available.
func (c *Cluster) deployControllers(ctx context.Context, opts Options) error {
	c.mu.Lock()
	var names []string
	for _, ctl := range c.controllers {
		names = append(names, ctl.name)
	}
	c.mu.Unlock()
	if !opts.RealSources {
		names = append(names, "source-controller")
	}
	for _, name := range names {
		d := controllerDeployment(name, 1)
		if _, err := c.Kube.AppsV1().Deployments("flux-system").Create(ctx, d, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("testbed: create Deployment %s in %s: %w", name, c.Name, err)
		}
	}
	for _, name := range names {
		if err := c.waitControllerDeployment(ctx, name, 1); err != nil {
			return err
		}
	}
	return nil
}

// StopController stops the named Flux controller of the cluster as scaling it to zero does:
// its process ends (if the bed runs one: not for a source-controller the bed plays), and its
// Deployment in flux-system is scaled to zero. It returns once the Deployment's status shows
// no replica available.
func (c *Cluster) StopController(ctx context.Context, name string) error {
	c.mu.Lock()
	var stopped []*controller
	kept := c.controllers[:0]
	for _, ctl := range c.controllers {
		if ctl.name == name {
			stopped = append(stopped, ctl)
		} else {
			kept = append(kept, ctl)
		}
	}
	c.controllers = kept
	c.mu.Unlock()
	for _, ctl := range stopped {
		_ = ctl.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-ctl.done:
		case <-time.After(5 * time.Second):
			_ = ctl.cmd.Process.Kill()
			<-ctl.done
		}
	}
	return c.scaleController(ctx, name, 0)
}

// StartController starts a controller StopController stopped: its process again (for the
// controllers StartFlux and StartSourceController run), and its Deployment scaled back to one
// available replica.
func (c *Cluster) StartController(ctx context.Context, name string) error {
	var err error
	switch {
	case name == "source-controller" && c.bed.Registry != nil:
		err = c.StartSourceController(ctx)
	case slices.Contains(fluxControllers, name):
		err = c.startController(ctx, name, fluxControllerFlags...)
	}
	if err != nil {
		return err
	}
	return c.scaleController(ctx, name, 1)
}

// scaleController sets the replicas of the controller's Deployment and waits until its status
// shows them available.
func (c *Cluster) scaleController(ctx context.Context, name string, replicas int32) error {
	patch := fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, replicas)
	if _, err := c.Kube.AppsV1().Deployments("flux-system").Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("testbed: scale %s in %s to %d: %w", name, c.Name, replicas, err)
	}
	return c.waitControllerDeployment(ctx, name, replicas)
}

// waitControllerDeployment waits until the Deployment's status, of its generation, shows
// replicas available and no other.
func (c *Cluster) waitControllerDeployment(ctx context.Context, name string, replicas int32) error {
	var last appsv1.DeploymentStatus
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		d, err := c.Kube.AppsV1().Deployments("flux-system").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		last = d.Status
		return d.Status.ObservedGeneration == d.Generation && d.Status.AvailableReplicas == replicas &&
			d.Status.Replicas == replicas && d.Status.UpdatedReplicas == replicas, nil
	})
	if err != nil {
		return fmt.Errorf("testbed: Deployment flux-system/%s in %s not at %d available replicas: %w (status: %+v)", name, c.Name, replicas, err, last)
	}
	return nil
}

// ControllerRunning reports whether the bed runs a process of the named controller for the
// cluster.
func (c *Cluster) ControllerRunning(name string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, ctl := range c.controllers {
		if ctl.name == name && !exited(ctl) {
			return true
		}
	}
	return false
}
