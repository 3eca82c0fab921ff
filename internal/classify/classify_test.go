package classify

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/org/app-status-action/internal/result"
)

// webhookDown is the API server's refusal when it cannot call an admission webhook (an
// internal error, not a denial).
const webhookDown = `Internal error occurred: failed calling webhook "policy.example.com": failed to call webhook: Post "https://policy.example.svc:443/validate?timeout=10s": dial tcp 10.96.0.42:443: connect: connection refused`

// now is when every fixture is observed; their timestamps are relative to it.
var now = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func TestClassify(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		file string // in testdata
		opts Options
		// at, when set, is the moment of the look (now otherwise).
		at   time.Time
		want Outcome
	}{
		// Deployment
		{
			name: "deployment image pull",
			file: "deployment-image-pull.yaml",
			want: Outcome{Failure: &result.Failure{
				Code: result.CodeImagePull, Reason: "ImagePullBackOff",
				Message: `container "app" of pod web-7d9f-abcde: Back-off pulling image "nope:1": ErrImagePull: failed to resolve reference "nope:1": nope:1: not found`,
				Pod:     "web-7d9f-abcde", Container: "app",
			}},
		},
		{name: "deployment old revision ignored", file: "deployment-old-revision.yaml"},
		{name: "deployment healthy rollout in progress", file: "deployment-in-progress.yaml"},
		{
			name: "deployment progress deadline exceeded",
			file: "deployment-not-progressing.yaml",
			want: Outcome{Failure: &result.Failure{
				Code: result.CodeNotProgressing, Reason: "ProgressDeadlineExceeded",
				Message: `deployment web: ReplicaSet "web-7d9f" has timed out progressing.`,
			}},
		},
		{name: "deployment not yet observed by its controller", file: "deployment-stale.yaml"},
		{
			name: "deployment replica failure",
			file: "deployment-quota.yaml",
			want: Outcome{Failure: &result.Failure{
				Code: result.CodeQuota, Reason: "FailedCreate",
				Message: `replicaset web-7d9f: still refused after 2m0s: pods "web-7d9f-x2x2x" is forbidden: exceeded quota: compute, requested: limits.memory=1Gi, used: limits.memory=4Gi, limited: limits.memory=4Gi`,
			}},
		},
		{
			name: "deployment pod security refusal",
			file: "deployment-pod-security.yaml",
			want: Outcome{Failure: &result.Failure{
				Code: result.CodeAdmissionDenied, Reason: "FailedCreate",
				Message: `replicaset web-7d9f: pods "web-7d9f-x2x2x" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "app" must set securityContext.allowPrivilegeEscalation=false)`,
			}},
		},
		{
			name: "deployment admission webhook refusal",
			file: "deployment-webhook.yaml",
			want: Outcome{Failure: &result.Failure{
				Code: result.CodeAdmissionDenied, Reason: "FailedCreate",
				Message: `replicaset web-7d9f: admission webhook "validate.kyverno.svc-fail" denied the request: resource Pod/shop/web-7d9f-x2x2x was blocked due to the following policies: require-labels: label app.kubernetes.io/name is required`,
			}},
		},
		{
			name: "deployment missing service account",
			file: "deployment-service-account.yaml",
			want: Outcome{Failure: &result.Failure{
				Code: result.CodeConfig, Reason: "FailedCreate",
				Message: `replicaset web-7d9f: still refused after 2m0s: pods "web-7d9f-" is forbidden: error looking up service account shop/web: serviceaccount "web" not found`,
			}},
		},
		{name: "deployment pods of other owners ignored", file: "deployment-foreign-pods.yaml"},
		// What the controllers and the kubelet retry waits out the retry grace period.
		{name: "deployment surge pod refused by quota, within the grace period", file: "deployment-quota-30s.yaml",
			want: Outcome{Recheck: now.Add(90 * time.Second),
				Note: `pods refused since 2025-06-01T11:59:30Z, fails at 2025-06-01T12:01:30Z: pods "web-7d9f-x2x2x" is forbidden: exceeded quota: compute, requested: limits.memory=1Gi, used: limits.memory=4Gi, limited: limits.memory=4Gi`}},
		{name: "deployment webhook not up yet, within the grace period", file: "deployment-webhook-down-30s.yaml",
			want: Outcome{Recheck: now.Add(90 * time.Second), Note: "pods refused since 2025-06-01T11:59:30Z, fails at 2025-06-01T12:01:30Z: " + webhookDown}},
		{name: "deployment webhook still down after the grace period", file: "deployment-webhook-down-30s.yaml", opts: Options{RetryGrace: 10 * time.Second},
			want: Outcome{Failure: &result.Failure{
				Code: result.CodeAdmissionDenied, Reason: "FailedCreate",
				Message: "replicaset web-7d9f: still refused after 30s: " + webhookDown,
			}}},
		{name: "pod Secret not created yet, within the grace period", file: "pod-secret-missing-30s.yaml",
			want: Outcome{Recheck: now.Add(90 * time.Second),
				Note: `container "db" of pod db-0: CreateContainerConfigError since 2025-06-01T11:59:30Z, fails at 2025-06-01T12:01:30Z: secret "db-password" not found`}},
		{name: "pod Secret not created yet after the pod waited 10m for a node", file: "pod-secret-missing-after-scheduling.yaml",
			want: Outcome{Recheck: now.Add(110 * time.Second),
				Note: `container "db" of pod db-0: CreateContainerConfigError since 2025-06-01T11:59:50Z, fails at 2025-06-01T12:01:50Z: secret "db-password" not found`}},
		{name: "pod image that would run as root under runAsNonRoot: at once", file: "pod-run-as-root.yaml",
			want: Outcome{Failure: &result.Failure{
				Code: result.CodeConfig, Reason: "CreateContainerConfigError",
				Message: `container "db" of pod db-0: container has runAsNonRoot and image will run as root (pod: "db-0_shop(1)", container: db)`,
				Pod:     "db-0", Container: "db",
			}}},
		{name: "pod Secret not created yet, a grace period of 10s", file: "pod-secret-missing-30s.yaml", opts: Options{RetryGrace: 10 * time.Second},
			want: Outcome{Failure: &result.Failure{
				Code: result.CodeConfig, Reason: "CreateContainerConfigError",
				Message: `container "db" of pod db-0: still failing after 30s: secret "db-password" not found`,
				Pod:     "db-0", Container: "db",
			}}},
		{name: "deployment terminating pod ignored", file: "deployment-terminating.yaml"},
		{
			name: "deployment several failures: severity, then pod, then container",
			file: "deployment-deterministic.yaml",
			want: Outcome{Failure: &result.Failure{
				Code: result.CodeImagePull, Reason: "ImagePullBackOff",
				Message: `container "app" of pod web-7d9f-bbbbb: Back-off pulling image "nope:1": ErrImagePull: failed to resolve reference "nope:1": nope:1: not found`,
				Pod:     "web-7d9f-bbbbb", Container: "app",
			}},
		},
		{
			// A Deployment's own deadline: progressDeadlineSeconds (600s when unset), then its
			// controller's not-progressing; never-ready a margin after it.
			name: "deployment not ready within its progress deadline",
			file: "deployment-never-ready.yaml",
			want: Outcome{Recheck: now.Add(8*time.Minute + 30*time.Second),
				Note: "pod web-7d9f-bbbbb running, not ready since 2025-06-01T11:58:00Z; fails at 2025-06-01T12:08:30Z"},
		},
		{
			name: "deployment past its progress deadline names the unready pod",
			file: "deployment-past-deadline-never-ready.yaml",
			want: Outcome{Failure: &result.Failure{
				Code: result.CodeNotProgressing, Reason: "ProgressDeadlineExceeded",
				Message: `deployment web: ReplicaSet "web-7d9f" has timed out progressing. (container "app" of pod web-7d9f-bbbbb: running, not ready)`,
				Pod:     "web-7d9f-bbbbb", Container: "app",
			}},
		},
		{
			// 2147483647 is no deadline: the readiness probe's budget (44s) and the margin
			// are under the least grace, 120s, which has passed.
			name: "deployment without a progress deadline: the probes' budget",
			file: "deployment-no-deadline-never-ready.yaml",
			want: Outcome{Failure: &result.Failure{
				Code: result.CodeNeverReady, Reason: "ContainersNotReady",
				Message: `container "app" of pod web-7d9f-bbbbb: running but not ready for 2m0s: readiness probe failing`,
				Pod:     "web-7d9f-bbbbb", Container: "app",
			}},
		},
		{name: "pod Secret cache not synced yet: retried", file: "pod-secret-cache-30s.yaml",
			want: Outcome{Recheck: now.Add(90 * time.Second),
				Note: `container "db" of pod db-0: CreateContainerConfigError since 2025-06-01T11:59:30Z, fails at 2025-06-01T12:01:30Z: failed to sync secret cache: timed out waiting for the condition`}},
		{
			name: "deployment never ready within a never-ready grace of 2m",
			file: "deployment-never-ready.yaml",
			opts: Options{NeverReadyGrace: 2 * time.Minute},
			want: Outcome{Failure: &result.Failure{
				Code: result.CodeNeverReady, Reason: "ContainersNotReady",
				Message: `container "app" of pod web-7d9f-bbbbb: running but not ready for 2m0s: readiness probe failing`,
				Pod:     "web-7d9f-bbbbb", Container: "app",
			}},
		},

		// StatefulSet, DaemonSet, ReplicaSet
		{
			name: "statefulset update revision crash loop, old revision ignored",
			file: "statefulset-crash-loop.yaml",
			want: Outcome{Failure: &result.Failure{
				Code: result.CodeCrashLoop, Reason: "CrashLoopBackOff",
				Message: `container "db" of pod db-1: restartCount 3, last exit code 2 (Error): back-off 40s restarting failed container=db pod=db-1_shop(0b5c)`,
				Pod:     "db-1", Container: "db", RestartCount: 3,
			}},
		},
		{
			name: "statefulset current revision when no update revision",
			file: "statefulset-current-revision.yaml",
			want: Outcome{Failure: &result.Failure{
				Code: result.CodeConfig, Reason: "CreateContainerConfigError",
				Message: `container "db" of pod db-0: still failing after 2m0s: secret "db-password" not found`,
				Pod:     "db-0", Container: "db",
			}},
		},
		{
			name: "statefulset update blocked by a broken pod of an older revision",
			file: "statefulset-blocked.yaml",
			want: Outcome{Failure: &result.Failure{
				Code: result.CodeStatefulSetBlocked, Reason: "CrashLoopBackOff",
				Message: `statefulset db: pod db-2 of revision db-5b8c is broken (crash-loop: container "db" of pod db-2: restartCount 6, last exit code 1 (Error): back-off 2m40s restarting failed container=db pod=db-2_shop(7c1d)) ` +
					`and the rolling update to db-9a1e waits for it (podManagementPolicy OrderedReady); delete it so the update can go on: kubectl delete pod db-2 -n shop`,
				Pod: "db-2", Container: "db", RestartCount: 6,
			}},
		},
		{name: "statefulset with parallel pod management replaces a broken old pod itself", file: "statefulset-parallel-old-broken.yaml"},
		{
			name: "daemonset newest revision crash loop, old revision ignored",
			file: "daemonset-crash-loop.yaml",
			want: Outcome{Failure: &result.Failure{
				Code: result.CodeCrashLoop, Reason: "CrashLoopBackOff",
				Message: `container "agent" of pod agent-bbbbb: restartCount 4, last exit code 1 (Error): back-off 1m20s restarting failed container=agent`,
				Pod:     "agent-bbbbb", Container: "agent", RestartCount: 4,
			}},
		},
		{
			name: "replicaset replica failure",
			file: "replicaset-quota.yaml",
			want: Outcome{Failure: &result.Failure{
				Code: result.CodeQuota, Reason: "FailedCreate",
				Message: `replicaset worker: pods "worker-abcde" is forbidden: maximum memory usage per Container is 512Mi, but limit is 1Gi`,
			}},
		},
		{
			name: "replicaset create container error",
			file: "replicaset-config.yaml",
			want: Outcome{Failure: &result.Failure{
				Code: result.CodeConfig, Reason: "CreateContainerError",
				Message: `container "worker" of pod worker-aaaaa: still failing after 2m0s: failed to generate container spec: failed to apply OCI options: no such file or directory`,
				Pod:     "worker-aaaaa", Container: "worker",
			}},
		},
		{
			name: "replicaset recheck at the earliest end of a grace period",
			file: "replicaset-unschedulable-recheck.yaml",
			opts: Options{UnschedulableGrace: 2 * time.Minute},
			want: Outcome{Recheck: now.Add(time.Second)},
		},

		// Job, CronJob
		{
			name: "job failed",
			file: "job-failed.yaml",
			want: Outcome{Failure: &result.Failure{
				Code: result.CodeJobFailed, Reason: "BackoffLimitExceeded",
				Message: "job migrate: Job has reached the specified backoff limit",
				Pod:     "migrate-bbbbb", Container: "migrate",
			}},
		},
		{name: "job failed pod left to the job's backoff", file: "job-pod-failed.yaml"},
		{
			name: "job invalid image name",
			file: "job-image-pull.yaml",
			want: Outcome{Failure: &result.Failure{
				Code: result.CodeImagePull, Reason: "InvalidImageName",
				Message: `container "migrate" of pod migrate-aaaaa: Failed to apply default image tag "migrate:nope!": invalid reference format`,
				Pod:     "migrate-aaaaa", Container: "migrate",
			}},
		},
		{
			name: "cronjob active job crash loop, history ignored",
			file: "cronjob-active.yaml",
			want: Outcome{Failure: &result.Failure{
				Code: result.CodeCrashLoop, Reason: "CrashLoopBackOff",
				Message: `container "report" of pod report-29100000-aaaaa: restartCount 3, last exit code 3 (Error): back-off 40s restarting failed container=report`,
				Pod:     "report-29100000-aaaaa", Container: "report", RestartCount: 3,
			}},
		},
		{name: "cronjob failed job of the past ignored", file: "cronjob-history.yaml"},
		{
			name: "cronjob active job failed",
			file: "cronjob-active-failed.yaml",
			want: Outcome{Failure: &result.Failure{
				Code: result.CodeJobFailed, Reason: "DeadlineExceeded",
				Message: "job report-29100000: Job was active longer than specified deadline",
			}},
		},

		// Pod: the container rules
		{name: "pod healthy", file: "pod-healthy.yaml"},
		{
			name: "pod image not found fails at once",
			file: "pod-pull-not-found.yaml",
			want: Outcome{Failure: &result.Failure{
				Code: result.CodeImagePull, Reason: "ErrImagePull",
				Message: `container "app" of pod app-1: rpc error: code = NotFound desc = failed to pull and unpack image "registry.example/app:1": failed to resolve reference "registry.example/app:1": registry.example/app:1: not found`,
				Pod:     "app-1", Container: "app",
			}},
		},
		{
			name: "pod back-off after an unauthorized pull fails at once",
			file: "pod-pull-unauthorized-backoff.yaml",
			want: Outcome{Failure: &result.Failure{
				Code: result.CodeImagePull, Reason: "ImagePullBackOff",
				Message: `container "app" of pod app-1: Back-off pulling image "registry.example/app:1": ErrImagePull: failed to authorize: failed to fetch anonymous token: unexpected status from GET request to https://registry.example/token: 401 Unauthorized`,
				Pod:     "app-1", Container: "app",
			}},
		},
		{
			name: "pod back-off that says no why, within the grace period",
			file: "pod-pull-bare-backoff-30s.yaml",
			want: Outcome{Recheck: now.Add(90 * time.Second),
				Note: `container "app" of pod app-1: ImagePullBackOff since 2025-06-01T11:59:30Z, fails at 2025-06-01T12:01:30Z: Back-off pulling image "registry.example/app:1"`},
		},
		{
			name: "pod back-off that says no why, past the grace period",
			file: "pod-pull-bare-backoff-30s.yaml",
			opts: Options{RetryGrace: 20 * time.Second},
			want: Outcome{Failure: &result.Failure{
				Code: result.CodeImagePull, Reason: "ImagePullBackOff",
				Message: `container "app" of pod app-1: still failing to pull after 30s: Back-off pulling image "registry.example/app:1"`,
				Pod:     "app-1", Container: "app",
			}},
		},
		{
			name: "pod registry timeout within the grace period",
			file: "pod-pull-timeout-30s.yaml",
			want: Outcome{Recheck: now.Add(90 * time.Second),
				Note: `container "app" of pod app-1: ErrImagePull since 2025-06-01T11:59:30Z, fails at 2025-06-01T12:01:30Z: rpc error: code = Unknown desc = failed to pull and unpack image "registry.example/app:1": failed to resolve reference "registry.example/app:1": failed to do request: Head "https://registry.example/v2/app/manifests/1": dial tcp 10.0.0.1:443: i/o timeout`},
		},
		{
			name: "pod registry rate limit past the grace period",
			file: "pod-pull-rate-limited-3m.yaml",
			want: Outcome{Failure: &result.Failure{
				Code: result.CodeImagePull, Reason: "ImagePullBackOff",
				Message: `container "app" of pod app-1: still failing to pull after 3m0s: Back-off pulling image "registry.example/app:1": ErrImagePull: failed to copy: httpReadSeeker: failed open: unexpected status code https://registry.example/v2/app/manifests/1: 429 Too Many Requests - Server message: toomanyrequests: You have reached your pull rate limit`,
				Pod:     "app-1", Container: "app",
			}},
		},
		{
			name: "pod registry unavailable within a longer grace period",
			file: "pod-registry-unavailable-60s.yaml",
			opts: Options{RetryGrace: 5 * time.Minute},
			want: Outcome{Recheck: now.Add(4 * time.Minute),
				Note: `container "app" of pod app-1: RegistryUnavailable since 2025-06-01T11:59:00Z, fails at 2025-06-01T12:04:00Z: registry is unavailable`},
		},
		{name: "pod terminating ignored", file: "pod-terminating.yaml"},
		{name: "pod crash loop below the threshold", file: "pod-crash-loop-2.yaml"},
		{
			name: "pod crash loop at the threshold",
			file: "pod-crash-loop-3.yaml",
			want: Outcome{Failure: &result.Failure{
				Code: result.CodeCrashLoop, Reason: "CrashLoopBackOff",
				Message: `container "tool" of pod tool: restartCount 3, last exit code 1 (Error): back-off 40s restarting failed container=tool pod=tool_shop(7e1a)`,
				Pod:     "tool", Container: "tool", RestartCount: 3,
			}},
		},
		{name: "pod crash loop below a raised threshold", file: "pod-crash-loop-3.yaml", opts: Options{CrashRestarts: 4}},
		{
			name: "pod running again after crashes",
			file: "pod-crash-recovered.yaml",
			want: Outcome{Recheck: now.Add(115 * time.Second)},
		},
		{
			name: "pod run container error",
			file: "pod-run-container-error.yaml",
			want: Outcome{Failure: &result.Failure{
				Code: result.CodeCrashLoop, Reason: "RunContainerError",
				Message: `container "tool" of pod tool: restartCount 3, last exit code 128 (StartError): exec: "/bin/tol": stat /bin/tol: no such file or directory`,
				Pod:     "tool", Container: "tool", RestartCount: 3,
			}},
		},
		{name: "pod OOM killed once", file: "pod-oom-once.yaml"},
		{
			name: "pod OOM killed at the threshold",
			file: "pod-oom.yaml",
			want: Outcome{Failure: &result.Failure{
				Code: result.CodeOOM, Reason: "OOMKilled",
				Message: `container "tool" of pod tool: restartCount 3, last exit code 137 (OOMKilled), memory limit 64Mi: back-off 40s restarting failed container=tool`,
				Pod:     "tool", Container: "tool", RestartCount: 3,
			}},
		},
		{
			name: "pod OOM killed with restartPolicy Never",
			file: "pod-oom-never.yaml",
			want: Outcome{Failure: &result.Failure{
				Code: result.CodeOOM, Reason: "OOMKilled",
				Message: `container "tool" of pod tool: exit code 137 (OOMKilled), memory limit 64Mi, not restarted (restartPolicy Never)`,
				Pod:     "tool", Container: "tool",
			}},
		},
		{
			name: "pod exited with restartPolicy Never",
			file: "pod-error-never.yaml",
			want: Outcome{Failure: &result.Failure{
				Code: result.CodeCrashLoop, Reason: "Error",
				Message: `container "tool" of pod tool: exit code 2 (Error), not restarted (restartPolicy Never)`,
				Pod:     "tool", Container: "tool",
			}},
		},
		{
			name: "pod sidecar restarted despite restartPolicy Never",
			file: "pod-sidecar-never.yaml",
		},
		{
			name: "pod init container image pull",
			file: "pod-init-image-pull.yaml",
			want: Outcome{Failure: &result.Failure{
				Code: result.CodeImagePull, Reason: "ErrImagePull",
				Message: `init container "migrate" of pod tool: rpc error: code = NotFound desc = failed to pull and unpack image "docker.io/library/migrate:nope": not found`,
				Pod:     "tool", Container: "init:migrate",
			}},
		},
		{
			name: "pod init container crash loop",
			file: "pod-init-crash-loop.yaml",
			want: Outcome{Failure: &result.Failure{
				Code: result.CodeCrashLoop, Reason: "CrashLoopBackOff",
				Message: `init container "migrate" of pod tool: restartCount 3, last exit code 1 (Error): back-off 40s restarting failed container=migrate`,
				Pod:     "tool", Container: "init:migrate", RestartCount: 3,
			}},
		},

		// Pod: the grace periods
		{
			name: "pod unschedulable for 119s, a grace of 2m",
			file: "pod-unschedulable-119s.yaml",
			opts: Options{UnschedulableGrace: 2 * time.Minute},
			want: Outcome{Recheck: now.Add(time.Second)},
		},
		{
			name: "pod unschedulable for 120s, a grace of 2m",
			file: "pod-unschedulable-120s.yaml",
			opts: Options{UnschedulableGrace: 2 * time.Minute},
			want: Outcome{Failure: &result.Failure{
				Code: result.CodeUnschedulable, Reason: "Unschedulable",
				Message: `pod tool: not scheduled for 2m0s: 0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector.`,
				Pod:     "tool",
			}},
		},
		{
			name: "pod unschedulable for 120s with a longer grace period",
			file: "pod-unschedulable-120s.yaml",
			opts: Options{UnschedulableGrace: 5 * time.Minute},
			want: Outcome{Recheck: now.Add(3 * time.Minute)},
		},
		// A workload without a deadline of its own waits as long as a Deployment's default one:
		// a node scale-up serves them alike.
		{
			name: "bare pod unschedulable for 120s, the default grace",
			file: "pod-unschedulable-120s.yaml",
			want: Outcome{Recheck: now.Add(DefaultUnschedulableGrace - 2*time.Minute)},
		},
		{
			name: "statefulset replica unschedulable for 3m while a node is added",
			file: "statefulset-unschedulable.yaml",
			want: Outcome{Recheck: time.Date(2025, 6, 1, 12, 7, 30, 0, time.UTC)},
		},
		{
			name: "statefulset replica unschedulable past the default grace",
			file: "statefulset-unschedulable.yaml",
			at:   time.Date(2025, 6, 1, 12, 7, 30, 0, time.UTC),
			want: Outcome{Failure: &result.Failure{
				Code: result.CodeUnschedulable, Reason: "Unschedulable",
				Message: `pod db-2: not scheduled for 10m30s: 0/3 nodes are available: 3 Insufficient cpu.`,
				Pod:     "db-2",
			}},
		},
		// A workload's replica: its own deadline (a Deployment's progressDeadlineSeconds, and
		// the margin) is the default, as a node scale-up may take minutes.
		{
			name: "deployment replica unschedulable for 3m, within its progress deadline",
			file: "deployment-unschedulable.yaml",
			want: Outcome{Recheck: time.Date(2025, 6, 1, 12, 7, 30, 0, time.UTC)},
		},
		{
			name: "deployment replica unschedulable for 3m, unschedulable-grace set",
			file: "deployment-unschedulable.yaml",
			opts: Options{UnschedulableGrace: 2 * time.Minute},
			want: Outcome{Failure: &result.Failure{
				Code: result.CodeUnschedulable, Reason: "Unschedulable",
				Message: `pod web-7d9f-bbbbb: not scheduled for 2m0s: 0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.`,
				Pod:     "web-7d9f-bbbbb",
			}},
		},
		{
			name: "pod not ready for 119s",
			file: "pod-never-ready-119s.yaml",
			want: Outcome{Recheck: now.Add(time.Second)},
		},
		{
			// Its readiness probe allows 300s + (1 + 3) × (10s + 1s), plus a margin of 30s, from
			// its start (11:58).
			name: "pod not ready within what its probes allow",
			file: "pod-never-ready-initial-delay.yaml",
			want: Outcome{Recheck: now.Add(4*time.Minute + 14*time.Second),
				Note: "pod tool running, not ready since 2025-06-01T11:58:00Z; fails at 2025-06-01T12:04:14Z"},
		},
		{
			name: "pod not ready before its readiness probe's initial delay, a grace of 2m",
			file: "pod-never-ready-initial-delay.yaml",
			opts: Options{NeverReadyGrace: 2 * time.Minute},
			want: Outcome{Recheck: now.Add(3 * time.Minute)},
		},
		{name: "pod startup probe not passed yet", file: "pod-starting.yaml"},
		{
			name: "pod readiness gate never ready",
			file: "pod-readiness-gate.yaml",
			want: Outcome{Failure: &result.Failure{
				Code: result.CodeNeverReady, Reason: "ReadinessGatesNotReady",
				Message: `pod tool: containers ready but pod not ready for 2m0s: corresponding condition of pod readiness gate "target-health.elbv2.k8s.aws/tool" does not exist.`,
				Pod:     "tool",
			}},
		},
	}

	used := make(map[string]bool)
	for _, tt := range tests {
		used[tt.file] = true
	}
	fixtures, err := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fixtures {
		if !used[filepath.Base(f)] {
			t.Errorf("fixture %s is used by no test case", f)
		}
	}

	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := load(t, tt.file)
			in.Now = now
			if !tt.at.IsZero() {
				in.Now = tt.at
			}
			got, err := Classify(in, tt.opts)
			if err != nil {
				t.Fatalf("Classify(%s) error: %v", tt.file, err)
			}
			if tt.want.Note == "" {
				got.Note = "" // the cases about notes say what they expect
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Classify(%s) mismatch (-want +got):\n%s", tt.file, diff)
			}
		})
	}
}

func TestClassifyErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		workload    *unstructured.Unstructured
		unsupported bool
	}{
		{name: "no workload"},
		{
			name: "unsupported kind",
			workload: &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": "web"},
			}},
			unsupported: true,
		},
		{
			name: "malformed workload",
			workload: &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "web"},
				"status": map[string]any{"observedGeneration": "two"},
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Classify(Input{Workload: tt.workload, Now: now}, Options{})
			if err == nil {
				t.Fatalf("Classify() = %+v, want an error", got)
			}
			if errors.Is(err, ErrUnsupported) != tt.unsupported {
				t.Errorf("Classify() error = %v, errors.Is(err, ErrUnsupported) = %t, want %t", err, !tt.unsupported, tt.unsupported)
			}
		})
	}
}

func TestSupported(t *testing.T) {
	t.Parallel()
	tests := []struct {
		group, kind string
		want        bool
	}{
		{"apps", "Deployment", true},
		{"apps", "StatefulSet", true},
		{"apps", "DaemonSet", true},
		{"apps", "ReplicaSet", true},
		{"batch", "Job", true},
		{"batch", "CronJob", true},
		{"", "Pod", true},
		{"", "Service", false},
		{"extensions", "Deployment", false},
		{"helm.toolkit.fluxcd.io", "HelmRelease", false},
	}
	for _, tt := range tests {
		if got := Supported(tt.group, tt.kind); got != tt.want {
			t.Errorf("Supported(%q, %q) = %t, want %t", tt.group, tt.kind, got, tt.want)
		}
	}
}

// TestClassifyIncomplete: a workload whose ReplicaSets and pods could not be read is
// classified on its own status: its controller's deadline still fails it, and the absence of
// its current ReplicaSet is not taken for a fact (the Deployment's ReplicaFailure may be an
// older ReplicaSet's, which the current one's own condition would tell).
func TestClassifyIncomplete(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		file       string
		incomplete bool
		want       *result.Failure
	}{
		{name: "past its progress deadline", file: "deployment-not-progressing.yaml", incomplete: true,
			want: &result.Failure{Code: result.CodeNotProgressing, Reason: "ProgressDeadlineExceeded",
				Message: `deployment web: ReplicaSet "web-7d9f" has timed out progressing.`}},
		{name: "ReplicaFailure, the ReplicaSets read: none is current yet", file: "deployment-quota.yaml",
			want: &result.Failure{Code: result.CodeQuota, Reason: "FailedCreate",
				Message: `deployment web: still refused after 2m0s: pods "web-7d9f-x2x2x" is forbidden: exceeded quota: compute, requested: limits.memory=1Gi, used: limits.memory=4Gi, limited: limits.memory=4Gi`}},
		{name: "ReplicaFailure, the ReplicaSets not read", file: "deployment-quota.yaml", incomplete: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := Input{Workload: load(t, tt.file).Workload, Now: now, Incomplete: tt.incomplete}
			got, err := Classify(in, Options{})
			if err != nil {
				t.Fatalf("Classify(%s) error: %v", tt.file, err)
			}
			if diff := cmp.Diff(tt.want, got.Failure); diff != "" {
				t.Errorf("Classify(%s, incomplete %t) failure (-want +got):\n%s", tt.file, tt.incomplete, diff)
			}
		})
	}
}
