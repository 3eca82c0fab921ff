package testbed

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// FailureAnnotation is the pod template annotation that gives a workload's pods a failure mode.
// Its value is a FailureMode. In manifests write it as
//
//	spec.template.metadata.annotations:
//	  testbed.app-status.dev/fail: crash-loop
const FailureAnnotation = "testbed.app-status.dev/fail"

// FailureMode is a rollout failure the bed can give a pod, with the status, events and logs a real
// kubelet (or, for FailUnschedulable, the real scheduler) would report.
type FailureMode string

const (
	// FailImagePull gives the pods phase Pending, the containers waiting ErrImagePull, then ImagePullBackOff
	// ("Back-off pulling image ..."); Warning event Failed "Failed to pull image ...: ... not found".
	FailImagePull FailureMode = "image-pull"
	// FailImagePullTimeout gives phase Pending, the containers waiting ErrImagePull for ever with
	// an i/o timeout reaching the registry, a transient error; Warning event Failed "Failed to
	// pull image ...: ... i/o timeout" (stages-pull-timeout.yaml).
	FailImagePullTimeout FailureMode = "image-pull-timeout"
	// FailCrashLoop gives phase Running, the containers waiting CrashLoopBackOff with restartCount
	// climbing by one a second, lastState.terminated exit code 1 reason Error; the logs hold a
	// panic (CrashLoopLog), for the current and the previous container.
	FailCrashLoop FailureMode = "crash-loop"
	// FailConfig gives phase Pending, the containers waiting CreateContainerConfigError
	// (configmap "missing" not found).
	FailConfig FailureMode = "config"
	// FailOOM is like FailCrashLoop, but lastState.terminated is exit code 137 reason OOMKilled.
	FailOOM FailureMode = "oom"
	// FailNeverReady gives phase Running, the containers running, Ready and ContainersReady False for
	// ever; Warning event Unhealthy "Readiness probe failed: HTTP probe failed with statuscode: 503".
	FailNeverReady FailureMode = "never-ready"
	// FailJob is for a Job's pods: the container runs, then terminates with exit code 1 (reason
	// Error) and the pod's phase is Failed; the real Job controller fails the Job once the
	// backoffLimit is used up.
	FailJob FailureMode = "job-failed"
	// FailUnschedulable means no node fits, so the real scheduler leaves the pods Pending with
	// PodScheduled False, reason Unschedulable. No stage is involved: WithFailure makes every
	// container request UnschedulableCPU CPUs.
	FailUnschedulable FailureMode = "unschedulable"
)

// UnschedulableCPU is the CPU request that FailUnschedulable gives every container: more than any
// node of the bed has.
const UnschedulableCPU = "1000"

// FailureModes returns every failure mode.
func FailureModes() []FailureMode {
	return []FailureMode{FailImagePull, FailImagePullTimeout, FailCrashLoop, FailConfig, FailOOM, FailNeverReady, FailJob, FailUnschedulable}
}

// WithFailure gives the pods of a pod template the failure mode: it sets FailureAnnotation and,
// for FailUnschedulable, a CPU request no node can satisfy on every container.
func WithFailure(tpl *corev1.PodTemplateSpec, mode FailureMode) {
	if tpl.Annotations == nil {
		tpl.Annotations = map[string]string{}
	}
	tpl.Annotations[FailureAnnotation] = string(mode)
	if mode != FailUnschedulable {
		return
	}
	for i := range tpl.Spec.Containers {
		c := &tpl.Spec.Containers[i]
		if c.Resources.Requests == nil {
			c.Resources.Requests = corev1.ResourceList{}
		}
		c.Resources.Requests[corev1.ResourceCPU] = resource.MustParse(UnschedulableCPU)
		if lim, ok := c.Resources.Limits[corev1.ResourceCPU]; ok && lim.Cmp(resource.MustParse(UnschedulableCPU)) < 0 {
			delete(c.Resources.Limits, corev1.ResourceCPU)
		}
	}
}

// FailureAnnotations returns annotations plus FailureAnnotation set to mode, for pod templates
// built as maps (unstructured objects). It does not change annotations. For FailUnschedulable the
// annotation alone does nothing: request UnschedulableCPU CPUs as well.
func FailureAnnotations(annotations map[string]string, mode FailureMode) map[string]string {
	out := make(map[string]string, len(annotations)+1)
	for k, v := range annotations {
		out[k] = v
	}
	out[FailureAnnotation] = string(mode)
	return out
}

// The log lines kwok's kubelet endpoint serves (kubectl logs). Healthy containers, and the
// running containers of modes without a log of their own, serve HealthyLog.
var (
	HealthyLog = []string{
		`{"level":"info","msg":"starting server","version":"1.0.0"}`,
		`{"level":"info","msg":"connected to database","host":"db:5432"}`,
		`{"level":"info","msg":"listening","addr":":8080"}`,
	}
	// CrashLoopLog is what a FailCrashLoop container logged before it exited.
	CrashLoopLog = []string{
		`{"level":"info","msg":"starting server","version":"1.0.0"}`,
		`{"level":"info","msg":"loading configuration","path":"/etc/app/config.yaml"}`,
		`{"level":"info","msg":"connecting to database","host":"db:5432"}`,
		`panic: connect to database: dial tcp 10.96.12.7:5432: connect: connection refused`,
		``,
		`goroutine 1 [running]:`,
		`main.main()`,
		`	/src/cmd/server/main.go:42 +0x1d4`,
	}
	// OOMLog is what a FailOOM container logged before the kernel killed it.
	OOMLog = []string{
		`{"level":"info","msg":"starting server","version":"1.0.0"}`,
		`{"level":"info","msg":"warming cache","entries":5000000}`,
		`{"level":"info","msg":"cache warm-up progress","percent":40,"heap":"412Mi"}`,
		`{"level":"info","msg":"cache warm-up progress","percent":80,"heap":"501Mi"}`,
	}
	// NeverReadyLog is what a FailNeverReady container logs while its readiness probe fails.
	NeverReadyLog = []string{
		`{"level":"info","msg":"starting server","version":"1.0.0"}`,
		`{"level":"info","msg":"listening","addr":":8080"}`,
		`{"level":"warn","msg":"readiness check failed","check":"upstream","err":"payments-api: 503 Service Unavailable"}`,
		`{"level":"info","msg":"GET /readyz","status":503}`,
	}
	// JobFailedLog is what a FailJob container logged before it exited with code 1.
	JobFailedLog = []string{
		`running migrations`,
		`applying 0041_add_orders_index ... ok`,
		`applying 0042_drop_legacy_users ... FAILED`,
		`error: migration 0042_drop_legacy_users: relation "legacy_users" does not exist`,
	}
)

// FailureLog returns the log lines a container of the failure mode serves, nil when it serves
// none (it never started: FailImagePull, FailImagePullTimeout, FailConfig, FailUnschedulable).
func FailureLog(mode FailureMode) []string {
	switch mode {
	case FailCrashLoop:
		return CrashLoopLog
	case FailOOM:
		return OOMLog
	case FailNeverReady:
		return NeverReadyLog
	case FailJob:
		return JobFailedLog
	}
	return nil
}

// logDirPlaceholder stands for the bed's log folder in the embedded kwok config.
const logDirPlaceholder = "__TESTBED_LOG_DIR__"

// writePodLogs writes the log files the kwok config names into dir, in the CRI log format kwok's
// kubelet endpoint reads (<RFC3339Nano time> <stream> F <line>), timestamped just before now.
func writePodLogs(dir string, now time.Time) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("testbed: make log folder: %w", err)
	}
	files := map[string][]string{
		"healthy":              HealthyLog,
		string(FailCrashLoop):  CrashLoopLog,
		string(FailOOM):        OOMLog,
		string(FailNeverReady): NeverReadyLog,
		string(FailJob):        JobFailedLog,
	}
	for name, lines := range files {
		var b strings.Builder
		t := now.Add(-time.Duration(len(lines)) * 100 * time.Millisecond).UTC()
		for _, line := range lines {
			stream := "stdout"
			if !strings.HasPrefix(line, "{") {
				stream = "stderr"
			}
			fmt.Fprintf(&b, "%s %s F %s\n", t.Format(time.RFC3339Nano), stream, line)
			t = t.Add(100 * time.Millisecond)
		}
		if err := os.WriteFile(filepath.Join(dir, name+".log"), []byte(b.String()), 0o644); err != nil {
			return fmt.Errorf("testbed: write pod log %s: %w", name, err)
		}
	}
	return nil
}
