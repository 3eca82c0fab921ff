package testbed_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/yaml"

	"github.com/org/app-status-action/internal/testing/testbed"
)

const failImage = "ghcr.io/example/web:1.4.2"

// TestFailureStages proves every failure mode: a workload whose pod template asks for the mode
// gets pods in exactly the state a real kubelet (or scheduler) reports for it, with its events
// and logs, while a healthy Deployment in the same namespace still becomes available.
func TestFailureStages(t *testing.T) {
	t.Parallel()
	b := bed.Get(t)
	cluster := func(i int) *testbed.Cluster { return b.Clusters[i%2] }

	t.Run("image-pull", func(t *testing.T) {
		t.Parallel()
		c, ns, ctx := setUpFailure(t, cluster(0))
		createDeployment(ctx, t, c, ns, "app", testbed.FailImagePull)

		var seen []string // waiting reasons in the order they were seen
		var pullMessage string
		pod := waitPod(ctx, t, c, ns, "app=app", func(p *corev1.Pod) error {
			cs, err := onlyContainer(p)
			if err != nil {
				return err
			}
			if w := cs.State.Waiting; w != nil && (len(seen) == 0 || seen[len(seen)-1] != w.Reason) {
				seen = append(seen, w.Reason)
				if w.Reason == "ErrImagePull" {
					pullMessage = w.Message
				}
			}
			return all(
				phaseIs(p, corev1.PodPending),
				scheduled(p),
				conditionIs(p, corev1.PodReady, corev1.ConditionFalse, "ContainersNotReady"),
				conditionIs(p, corev1.ContainersReady, corev1.ConditionFalse, "ContainersNotReady"),
				waitingIs(cs, "ImagePullBackOff", fmt.Sprintf("Back-off pulling image %q", failImage)),
				notReady(cs),
				notRestarted(cs),
			)
		})
		if !slices.Equal(seen, []string{"ErrImagePull", "ImagePullBackOff"}) {
			t.Errorf("waiting reasons seen %v, want ErrImagePull then ImagePullBackOff", seen)
		}
		if !strings.Contains(pullMessage, fmt.Sprintf("failed to pull and unpack image %q", failImage)) || !strings.HasSuffix(pullMessage, ": not found") {
			t.Errorf("ErrImagePull message %q, want a failed pull of %s ending in not found", pullMessage, failImage)
		}
		waitEvent(ctx, t, c, pod, corev1.EventTypeWarning, "Failed",
			fmt.Sprintf("Failed to pull image %q: ", failImage), ": not found")
		waitEvent(ctx, t, c, pod, corev1.EventTypeNormal, "BackOff", fmt.Sprintf("Back-off pulling image %q", failImage), "")
		// Like a kubelet ("is waiting to start: trying and failing to pull image"), no logs: 400.
		if _, err := podLogs(ctx, c, pod, false); !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), "log target not found") {
			t.Errorf("logs of a container that never started: err = %v, want a BadRequest: log target not found", err)
		}
	})

	t.Run("image-pull-timeout", func(t *testing.T) {
		t.Parallel()
		c, ns, ctx := setUpFailure(t, cluster(1))
		createDeployment(ctx, t, c, ns, "app", testbed.FailImagePullTimeout)
		pod := waitPod(ctx, t, c, ns, "app=app", func(p *corev1.Pod) error {
			cs, err := onlyContainer(p)
			if err != nil {
				return err
			}
			return all(
				phaseIs(p, corev1.PodPending),
				scheduled(p),
				conditionIs(p, corev1.PodReady, corev1.ConditionFalse, "ContainersNotReady"),
				waitingIs(cs, "ErrImagePull", "rpc error: code = Unknown desc = failed to pull and unpack image"),
				notReady(cs),
				notRestarted(cs),
			)
		})
		if cs, _ := onlyContainer(pod); !strings.HasSuffix(cs.State.Waiting.Message, ": i/o timeout") {
			t.Errorf("ErrImagePull message %q, want a network failure ending in i/o timeout", cs.State.Waiting.Message)
		}
		waitEvent(ctx, t, c, pod, corev1.EventTypeWarning, "Failed", fmt.Sprintf("Failed to pull image %q: ", failImage), ": i/o timeout")
	})

	t.Run("crash-loop", func(t *testing.T) {
		t.Parallel()
		c, ns, ctx := setUpFailure(t, cluster(1))
		createDeployment(ctx, t, c, ns, "app", testbed.FailCrashLoop)

		var counts []int32
		var looping time.Time
		pod := waitPod(ctx, t, c, ns, "app=app", func(p *corev1.Pod) error {
			cs, err := onlyContainer(p)
			if err != nil {
				return err
			}
			if n := len(counts); n == 0 || counts[n-1] != cs.RestartCount {
				counts = append(counts, cs.RestartCount)
			}
			if looping.IsZero() && cs.State.Waiting != nil && cs.State.Waiting.Reason == "CrashLoopBackOff" {
				looping = time.Now()
			}
			return all(
				phaseIs(p, corev1.PodRunning),
				scheduled(p),
				conditionIs(p, corev1.PodReady, corev1.ConditionFalse, "ContainersNotReady"),
				conditionIs(p, corev1.ContainersReady, corev1.ConditionFalse, "ContainersNotReady"),
				waitingIs(cs, "CrashLoopBackOff", "back-off "),
				lastTerminatedIs(cs, 1, "Error"),
				notReady(cs),
				restartsAbove(cs, 3),
			)
		})
		if took := time.Since(looping); took > 10*time.Second {
			t.Errorf("restartCount took %s to climb past 3 after the first CrashLoopBackOff, want under 10s", took)
		}
		if !slices.IsSorted(counts) || len(counts) < 3 {
			t.Errorf("restartCount went %v, want it to climb step by step", counts)
		}
		waitEvent(ctx, t, c, pod, corev1.EventTypeWarning, "BackOff", "Back-off restarting failed container app in pod "+pod.Name, "")
		for _, previous := range []bool{false, true} {
			got, err := podLogs(ctx, c, pod, previous)
			if err != nil {
				t.Fatalf("logs (previous=%v): %v", previous, err)
			}
			if !slices.Equal(got, testbed.CrashLoopLog) {
				t.Errorf("logs (previous=%v) = %q, want %q", previous, got, testbed.CrashLoopLog)
			}
		}
		// The healthy neighbour logs healthy lines (the bed's ClusterLogs).
		healthy := waitPod(ctx, t, c, ns, "app=healthy", func(p *corev1.Pod) error {
			return conditionIs(p, corev1.PodReady, corev1.ConditionTrue, "")
		})
		if got, err := podLogs(ctx, c, healthy, false); err != nil || !slices.Equal(got, testbed.HealthyLog) {
			t.Errorf("healthy pod logs = %q, %v; want %q", got, err, testbed.HealthyLog)
		}
	})

	t.Run("config", func(t *testing.T) {
		t.Parallel()
		c, ns, ctx := setUpFailure(t, cluster(0))
		createDeployment(ctx, t, c, ns, "app", testbed.FailConfig)
		pod := waitPod(ctx, t, c, ns, "app=app", func(p *corev1.Pod) error {
			cs, err := onlyContainer(p)
			if err != nil {
				return err
			}
			return all(
				phaseIs(p, corev1.PodPending),
				scheduled(p),
				conditionIs(p, corev1.PodReady, corev1.ConditionFalse, "ContainersNotReady"),
				conditionIs(p, corev1.ContainersReady, corev1.ConditionFalse, "ContainersNotReady"),
				waitingIs(cs, "CreateContainerConfigError", `configmap "missing" not found`),
				notReady(cs),
				notRestarted(cs),
			)
		})
		waitEvent(ctx, t, c, pod, corev1.EventTypeWarning, "Failed", `Error: configmap "missing" not found`, "")
	})

	t.Run("oom", func(t *testing.T) {
		t.Parallel()
		c, ns, ctx := setUpFailure(t, cluster(1))
		createDeployment(ctx, t, c, ns, "app", testbed.FailOOM)
		pod := waitPod(ctx, t, c, ns, "app=app", func(p *corev1.Pod) error {
			cs, err := onlyContainer(p)
			if err != nil {
				return err
			}
			return all(
				phaseIs(p, corev1.PodRunning),
				scheduled(p),
				conditionIs(p, corev1.PodReady, corev1.ConditionFalse, "ContainersNotReady"),
				waitingIs(cs, "CrashLoopBackOff", "back-off "),
				lastTerminatedIs(cs, 137, "OOMKilled"),
				notReady(cs),
				restartsAbove(cs, 0),
			)
		})
		got, err := podLogs(ctx, c, pod, true)
		if err != nil {
			t.Fatalf("previous logs: %v", err)
		}
		if !slices.Equal(got, testbed.OOMLog) {
			t.Errorf("previous logs = %q, want %q", got, testbed.OOMLog)
		}
	})

	t.Run("never-ready", func(t *testing.T) {
		t.Parallel()
		c, ns, ctx := setUpFailure(t, cluster(0))
		createDeployment(ctx, t, c, ns, "app", testbed.FailNeverReady)
		check := func(p *corev1.Pod) error {
			cs, err := onlyContainer(p)
			if err != nil {
				return err
			}
			var running error
			if cs.State.Running == nil || cs.Started == nil || !*cs.Started {
				running = fmt.Errorf("container state %s, want running and started", toYAML(cs.State))
			}
			return all(
				phaseIs(p, corev1.PodRunning),
				scheduled(p),
				conditionIs(p, corev1.PodReady, corev1.ConditionFalse, "ContainersNotReady"),
				conditionIs(p, corev1.ContainersReady, corev1.ConditionFalse, "ContainersNotReady"),
				running,
				notReady(cs),
				notRestarted(cs),
			)
		}
		pod := waitPod(ctx, t, c, ns, "app=app", check)
		waitEvent(ctx, t, c, pod, corev1.EventTypeWarning, "Unhealthy", "Readiness probe failed: HTTP probe failed with statuscode: 503", "")
		// Not ready for ever: once the Deployment controller has seen the pod (its status
		// counts it unavailable), the pod is still not ready.
		d := waitDeployment(ctx, t, c, ns, "app", func(d *appsv1.Deployment) error {
			if d.Status.ObservedGeneration != d.Generation || d.Status.Replicas != 1 || d.Status.UnavailableReplicas != 1 {
				return fmt.Errorf("observed generation %d of %d, replicas %d, unavailable %d; want the pod counted unavailable",
					d.Status.ObservedGeneration, d.Generation, d.Status.Replicas, d.Status.UnavailableReplicas)
			}
			return nil
		})
		if d.Status.AvailableReplicas != 0 {
			t.Errorf("Deployment available %d, want 0", d.Status.AvailableReplicas)
		}
		p, err := c.Kube.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := check(p); err != nil {
			t.Errorf("once the Deployment counted it: %v", err)
		}
		if got, err := podLogs(ctx, c, pod, false); err != nil || !slices.Equal(got, testbed.NeverReadyLog) {
			t.Errorf("logs = %q, %v; want %q", got, err, testbed.NeverReadyLog)
		}
	})

	t.Run("job-failed", func(t *testing.T) {
		t.Parallel()
		c, ns, ctx := setUpFailure(t, cluster(1))
		job := &batchv1.Job{
			ObjectMeta: metav1.ObjectMeta{Name: "migrate"},
			Spec: batchv1.JobSpec{
				BackoffLimit: new(int32),
				Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers:    []corev1.Container{{Name: "migrate", Image: "ghcr.io/example/migrate:1.4.2"}},
				}},
			},
		}
		testbed.WithFailure(&job.Spec.Template, testbed.FailJob)
		if _, err := c.Kube.BatchV1().Jobs(ns).Create(ctx, job, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		pod := waitPod(ctx, t, c, ns, "job-name=migrate", func(p *corev1.Pod) error {
			cs, err := onlyContainer(p)
			if err != nil {
				return err
			}
			var terminated error
			if tm := cs.State.Terminated; tm == nil || tm.ExitCode != 1 || tm.Reason != "Error" {
				terminated = fmt.Errorf("container state %s, want terminated with exit code 1, reason Error", toYAML(cs.State))
			}
			return all(
				phaseIs(p, corev1.PodFailed),
				scheduled(p),
				conditionIs(p, corev1.PodReady, corev1.ConditionFalse, "PodFailed"),
				terminated,
				notReady(cs),
			)
		})
		var last *batchv1.Job
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			j, err := c.Kube.BatchV1().Jobs(ns).Get(ctx, "migrate", metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			last = j
			for _, cond := range j.Status.Conditions {
				if cond.Type == batchv1.JobFailed && cond.Status == corev1.ConditionTrue && cond.Reason == "BackoffLimitExceeded" {
					return j.Status.Failed == 1, nil
				}
			}
			return false, nil
		})
		if err != nil {
			t.Fatalf("Job not Failed with BackoffLimitExceeded: %v\nstatus:\n%s", err, toYAML(last.Status))
		}
		if got, err := podLogs(ctx, c, pod, false); err != nil || !slices.Equal(got, testbed.JobFailedLog) {
			t.Errorf("logs = %q, %v; want %q", got, err, testbed.JobFailedLog)
		}
	})

	t.Run("unschedulable", func(t *testing.T) {
		t.Parallel()
		c, ns, ctx := setUpFailure(t, cluster(0))
		createDeployment(ctx, t, c, ns, "app", testbed.FailUnschedulable)
		// A nodeSelector no node matches is the other way to be unschedulable.
		selector := deployment("selector", "")
		selector.Spec.Template.Spec.NodeSelector = map[string]string{"topology.kubernetes.io/zone": "nowhere"}
		if _, err := c.Kube.AppsV1().Deployments(ns).Create(ctx, selector, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		for sel, want := range map[string]string{"app=app": "Insufficient cpu", "app=selector": "didn't match Pod's node affinity/selector"} {
			check := func(p *corev1.Pod) error {
				var nodeName error
				if p.Spec.NodeName != "" {
					nodeName = fmt.Errorf("pod is on node %s", p.Spec.NodeName)
				}
				return all(
					phaseIs(p, corev1.PodPending),
					conditionIs(p, corev1.PodScheduled, corev1.ConditionFalse, corev1.PodReasonUnschedulable),
					conditionMessageHas(p, corev1.PodScheduled, want),
					nodeName,
				)
			}
			waitPod(ctx, t, c, ns, sel, check)
		}
	})
}

// setUpFailure makes a namespace on c with a healthy Deployment "healthy" and, when the test
// ends, checks that it became available next to the failing workload.
func setUpFailure(t *testing.T, c *testbed.Cluster) (*testbed.Cluster, string, context.Context) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	ns := c.Namespace(t)
	createDeployment(ctx, t, c, ns, "healthy", "")
	t.Cleanup(func() {
		if err := waitDeploymentAvailable(ctx, c, ns, "healthy", 1); err != nil {
			t.Errorf("healthy neighbour: %v", err)
		}
	})
	return c, ns, ctx
}

// deployment returns a one-replica Deployment whose pods have label app=<name> and, unless mode
// is empty, the failure mode.
func deployment(name string, mode testbed.FailureMode) *appsv1.Deployment {
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: new(int32(1)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: failImage}}},
			},
		},
	}
	if mode != "" {
		testbed.WithFailure(&d.Spec.Template, mode)
	}
	return d
}

func createDeployment(ctx context.Context, t *testing.T, c *testbed.Cluster, ns, name string, mode testbed.FailureMode) {
	t.Helper()
	if _, err := c.Kube.AppsV1().Deployments(ns).Create(ctx, deployment(name, mode), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create Deployment %s/%s: %v", ns, name, err)
	}
}

// waitPod polls every 100ms until the single pod matching selector passes check, and returns it.
func waitPod(ctx context.Context, t *testing.T, c *testbed.Cluster, ns, selector string, check func(*corev1.Pod) error) *corev1.Pod {
	const timeout = 30 * time.Second
	t.Helper()
	var pod *corev1.Pod
	last := errors.New("no pod yet")
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		pods, err := c.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			last = err
			return false, nil
		}
		if len(pods.Items) != 1 {
			last = fmt.Errorf("%d pods match %s, want 1", len(pods.Items), selector)
			return false, nil
		}
		pod = &pods.Items[0]
		last = check(pod)
		return last == nil, nil
	})
	if err != nil {
		status := "none"
		if pod != nil {
			status = toYAML(pod.Status)
		}
		t.Fatalf("cluster %s: pod %s in %s: %v (last: %v)\nstatus:\n%s", c.Name, selector, ns, err, last, status)
	}
	return pod
}

// waitDeployment waits until check accepts the Deployment, and returns it.
func waitDeployment(ctx context.Context, t *testing.T, c *testbed.Cluster, ns, name string, check func(*appsv1.Deployment) error) *appsv1.Deployment {
	t.Helper()
	var d *appsv1.Deployment
	last := errors.New("not read yet")
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err := c.Kube.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			last = err
			return false, nil
		}
		d, last = got, check(got)
		return last == nil, nil
	})
	if err != nil {
		t.Fatalf("cluster %s: Deployment %s/%s: %v (last: %v)", c.Name, ns, name, err, last)
	}
	return d
}

// waitEvent waits for an event of the pod with the type and reason whose message starts with
// prefix and ends with suffix.
func waitEvent(ctx context.Context, t *testing.T, c *testbed.Cluster, pod *corev1.Pod, typ, reason, prefix, suffix string) {
	t.Helper()
	var seen []string
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 15*time.Second, true, func(ctx context.Context) (bool, error) {
		evs, err := c.Kube.CoreV1().Events(pod.Namespace).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + pod.Name})
		if err != nil {
			return false, nil
		}
		seen = seen[:0]
		for _, e := range evs.Items {
			seen = append(seen, fmt.Sprintf("%s %s (%s): %s", e.Type, e.Reason, e.Source.Component, e.Message))
			if e.Type == typ && e.Reason == reason && strings.HasPrefix(e.Message, prefix) && strings.HasSuffix(e.Message, suffix) &&
				e.InvolvedObject.UID == pod.UID && e.Source.Component == "kubelet" {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Errorf("no %s event %s %q...%q for pod %s: %v; events:\n%s", typ, reason, prefix, suffix, pod.Name, err, strings.Join(seen, "\n"))
	}
}

// podLogs returns the last 20 lines of the pod's first container's log, read as kubectl logs
// reads it (Stream decodes the API server's Status on errors; DoRaw would not).
func podLogs(ctx context.Context, c *testbed.Cluster, pod *corev1.Pod, previous bool) ([]string, error) {
	tail := int64(20)
	rc, err := c.Kube.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, &corev1.PodLogOptions{
		Container: pod.Spec.Containers[0].Name, Previous: previous, TailLines: &tail,
	}).Stream(ctx)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		return nil, err
	}
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n"), nil
}

func onlyContainer(p *corev1.Pod) (corev1.ContainerStatus, error) {
	if len(p.Status.ContainerStatuses) != 1 {
		return corev1.ContainerStatus{}, fmt.Errorf("%d container statuses, want 1", len(p.Status.ContainerStatuses))
	}
	return p.Status.ContainerStatuses[0], nil
}

func all(errs ...error) error { return errors.Join(errs...) }

func phaseIs(p *corev1.Pod, want corev1.PodPhase) error {
	if p.Status.Phase != want {
		return fmt.Errorf("phase %s, want %s", p.Status.Phase, want)
	}
	return nil
}

func condition(p *corev1.Pod, typ corev1.PodConditionType) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == typ {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// conditionIs checks a condition's status and, unless want is empty, its reason.
func conditionIs(p *corev1.Pod, typ corev1.PodConditionType, status corev1.ConditionStatus, reason string) error {
	cond := condition(p, typ)
	if cond == nil {
		return fmt.Errorf("no %s condition", typ)
	}
	if cond.Status != status || (reason != "" && cond.Reason != reason) {
		return fmt.Errorf("%s condition %s/%s, want %s/%s", typ, cond.Status, cond.Reason, status, reason)
	}
	return nil
}

func conditionMessageHas(p *corev1.Pod, typ corev1.PodConditionType, want string) error {
	if cond := condition(p, typ); cond == nil || !strings.Contains(cond.Message, want) {
		return fmt.Errorf("%s condition message lacks %q", typ, want)
	}
	return nil
}

func scheduled(p *corev1.Pod) error {
	if p.Spec.NodeName == "" {
		return errors.New("not scheduled")
	}
	return conditionIs(p, corev1.PodScheduled, corev1.ConditionTrue, "")
}

// waitingIs checks the container waits for reason with a message starting with prefix.
func waitingIs(cs corev1.ContainerStatus, reason, prefix string) error {
	w := cs.State.Waiting
	if w == nil || w.Reason != reason || w.Message == "" || !strings.HasPrefix(w.Message, prefix) {
		return fmt.Errorf("container state %s, want waiting %s with a message starting %q", toYAML(cs.State), reason, prefix)
	}
	return nil
}

func lastTerminatedIs(cs corev1.ContainerStatus, exitCode int32, reason string) error {
	tm := cs.LastTerminationState.Terminated
	if tm == nil || tm.ExitCode != exitCode || tm.Reason != reason || tm.FinishedAt.IsZero() {
		return fmt.Errorf("last state %s, want terminated with exit code %d, reason %s", toYAML(cs.LastTerminationState), exitCode, reason)
	}
	return nil
}

func notReady(cs corev1.ContainerStatus) error {
	if cs.Ready {
		return errors.New("container ready")
	}
	return nil
}

func notRestarted(cs corev1.ContainerStatus) error {
	if cs.RestartCount != 0 {
		return fmt.Errorf("restartCount %d, want 0", cs.RestartCount)
	}
	return nil
}

func restartsAbove(cs corev1.ContainerStatus, n int32) error {
	if cs.RestartCount <= n {
		return fmt.Errorf("restartCount %d, want above %d", cs.RestartCount, n)
	}
	return nil
}

func toYAML(v any) string {
	data, err := yaml.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(data)
}
