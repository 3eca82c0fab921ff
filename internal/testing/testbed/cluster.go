package testbed

import (
	"bytes"
	"context"
	"embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

//go:embed stages*.yaml
var stageFiles embed.FS

// stageManifests returns every Stage (and ClusterLogs) the test bed gives kwok, in a stable order,
// with the log folder placeholder replaced by logDir.
func stageManifests(logDir string) []byte {
	entries, _ := stageFiles.ReadDir(".")
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	var buf bytes.Buffer
	for _, n := range names {
		data, _ := stageFiles.ReadFile(n)
		buf.WriteString("---\n")
		buf.Write(data)
		buf.WriteString("\n")
	}
	return bytes.ReplaceAll(buf.Bytes(), []byte(logDirPlaceholder), []byte(logDir))
}

// Cluster is one running test cluster.
type Cluster struct {
	// Name is the kwokctl cluster name; the kubeconfig's context is "kwok-<Name>".
	Name string
	// KubeconfigPath is a file holding an admin kubeconfig; Kubeconfig is the same bytes.
	KubeconfigPath string
	Kubeconfig     []byte
	Config         *rest.Config
	Kube           kubernetes.Interface
	Dynamic        dynamic.Interface

	bed         *Bed
	mu          sync.Mutex
	controllers []*controller
}

// Context is the kubeconfig context of the cluster.
func (c *Cluster) Context() string { return "kwok-" + c.Name }

// createCluster runs kwokctl create cluster, holding the creation lock.
func (b *Bed) createCluster(ctx context.Context, name string, opts Options) (*Cluster, error) {
	if err := b.guard.register(name); err != nil {
		return nil, err
	}
	unlock, err := creationLock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	start := time.Now()
	args := []string{
		"create", "cluster", "--name", name, "--runtime", "binary",
		"--etcd-binary", b.Bins.Path("etcd"),
		"--kube-apiserver-binary", b.Bins.Path("kube-apiserver"),
		"--kube-controller-manager-binary", b.Bins.Path("kube-controller-manager"),
		"--kube-scheduler-binary", b.Bins.Path("kube-scheduler"),
		"--kwok-controller-binary", b.Bins.Path("kwok"),
		"--kubeconfig", filepath.Join(b.workdir, name+".kwokctl.kubeconfig"),
		"--config", b.stages,
		// The failure stages create a kwok Logs object per failing pod (ClusterLogs cannot
		// select pods by annotation), so kwok must watch Logs objects in the cluster.
		"--enable-crds", "Logs",
		"--kube-authorization",
		"--disable-qps-limits",
		"--wait", "2m",
	}
	args = append(args, opts.createArgs()...)
	if len(opts.AuthenticationConfig) > 0 {
		path := filepath.Join(b.workdir, name+".authentication-config.yaml")
		if err := os.WriteFile(path, opts.AuthenticationConfig, 0o600); err != nil {
			return nil, fmt.Errorf("testbed: write the authentication config of %s: %w", name, err)
		}
		args = append(args, "--extra-args", "kube-apiserver=authentication-config="+path)
	}
	if out, err := b.kwokctl(ctx, args...); err != nil {
		return nil, fmt.Errorf("testbed: create cluster %s: %w\n%s", name, err, tail(out, 30))
	}
	kubeconfig, err := b.kwokctl(ctx, "get", "kubeconfig", "--name", name)
	if err != nil {
		return nil, fmt.Errorf("testbed: get kubeconfig of %s: %w\n%s", name, err, tail(kubeconfig, 10))
	}
	c := &Cluster{Name: name, bed: b, Kubeconfig: []byte(kubeconfig)}
	c.KubeconfigPath = filepath.Join(b.workdir, name+".kubeconfig")
	if err := os.WriteFile(c.KubeconfigPath, c.Kubeconfig, 0o600); err != nil {
		return nil, fmt.Errorf("testbed: write kubeconfig of %s: %w", name, err)
	}
	if c.Config, err = clientcmd.RESTConfigFromKubeConfig(c.Kubeconfig); err != nil {
		return nil, fmt.Errorf("testbed: kubeconfig of %s: %w", name, err)
	}
	c.Config.QPS, c.Config.Burst = 200, 400
	if c.Kube, err = kubernetes.NewForConfig(c.Config); err != nil {
		return nil, fmt.Errorf("testbed: client for %s: %w", name, err)
	}
	if c.Dynamic, err = dynamic.NewForConfig(c.Config); err != nil {
		return nil, fmt.Errorf("testbed: dynamic client for %s: %w", name, err)
	}
	b.log("testbed: cluster %s created in %s", name, time.Since(start).Round(time.Millisecond))
	return c, nil
}

// kwokctl runs kwokctl with the bed's work folder and returns its combined output.
func (b *Bed) kwokctl(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, b.Bins.Path("kwokctl"), args...)
	cmd.Env = append(os.Environ(), "KWOK_WORKDIR="+b.kwokWorkdir())
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	return out.String(), err
}

// setUp gives a created cluster its nodes, namespaces, Flux CRDs and, when asked, controllers.
func (c *Cluster) setUp(ctx context.Context, opts Options) error {
	if err := c.applyCRDs(ctx); err != nil {
		return err
	}
	if err := c.EnsureNamespace(ctx, "flux-system"); err != nil {
		return err
	}
	for i := range opts.nodes() {
		if err := c.AddNode(ctx, fmt.Sprintf("node-%d", i+1), nil); err != nil {
			return err
		}
	}
	if opts.Flux {
		if err := c.StartFlux(ctx); err != nil {
			return err
		}
	}
	if opts.RealSources {
		if err := c.StartSourceController(ctx); err != nil {
			return err
		}
	}
	if opts.ControllerDeployments {
		if err := c.deployControllers(ctx, opts); err != nil {
			return err
		}
	}
	if opts.Flagger {
		if err := c.StartFlagger(ctx, "10s"); err != nil {
			return err
		}
	}
	return nil
}

// EnsureNamespace creates a namespace unless it exists.
func (c *Cluster) EnsureNamespace(ctx context.Context, name string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := c.Kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("testbed: create namespace %s in %s: %w", name, c.Name, err)
	}
	return nil
}

// AddNode adds a simulated node that kwok manages. Capacity overrides the default
// (16 CPUs, 64Gi, 110 pods) when given.
func (c *Cluster) AddNode(ctx context.Context, name string, capacity corev1.ResourceList) error {
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Annotations: map[string]string{"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"},
			Labels:      map[string]string{"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "type": "kwok"},
		},
		Status: corev1.NodeStatus{Capacity: capacity, Allocatable: capacity},
	}
	if _, err := c.Kube.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("testbed: add node %s to %s: %w", name, c.Name, err)
	}
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		n, err := c.Kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		for _, cond := range n.Status.Conditions {
			if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
}

// APIServerLog returns what the cluster's kube-apiserver has logged so far: its errors, such as
// why it could not authenticate a request (the client only hears 401).
func (c *Cluster) APIServerLog() (string, error) {
	data, err := os.ReadFile(filepath.Join(c.bed.kwokWorkdir(), "clusters", c.Name, "logs", "kube-apiserver.log"))
	if err != nil {
		return "", fmt.Errorf("testbed: the API server's log of %s: %w", c.Name, err)
	}
	return string(data), nil
}

// Stop stops the cluster's processes (the API server becomes unreachable) without deleting it.
func (c *Cluster) Stop(ctx context.Context) error {
	c.stopControllers()
	if out, err := c.bed.kwokctl(ctx, "stop", "cluster", "--name", c.Name); err != nil {
		return fmt.Errorf("testbed: stop cluster %s: %w\n%s", c.Name, err, tail(out, 10))
	}
	return nil
}

// Start starts a stopped cluster's processes again and waits until its API server answers; its
// data (etcd's) is the same. The Flux controllers are not started again: call StartFlux.
func (c *Cluster) Start(ctx context.Context) error {
	started := time.Now()
	if out, err := c.bed.kwokctl(ctx, "start", "cluster", "--name", c.Name); err != nil {
		return fmt.Errorf("testbed: start cluster %s: %w\n%s", c.Name, err, tail(out, 10))
	}
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		body, err := c.Kube.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return err == nil && string(body) == "ok", nil
	}); err != nil {
		return fmt.Errorf("testbed: cluster %s: API server not ready after start: %w", c.Name, err)
	}
	// The nodes are back once kwok has renewed them: Ready, and neither tainted unreachable nor
	// not-ready by the node lifecycle controller, which would hold or evict new pods.
	var last string
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		nodes, err := c.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			last = err.Error()
			return false, nil
		}
		for _, n := range nodes.Items {
			for _, t := range n.Spec.Taints {
				if t.Key == corev1.TaintNodeUnreachable || t.Key == corev1.TaintNodeNotReady {
					last = fmt.Sprintf("node %s tainted %s", n.Name, t.Key)
					return false, nil
				}
			}
			ready := false
			for _, cond := range n.Status.Conditions {
				ready = ready || (cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue)
			}
			if !ready {
				last = fmt.Sprintf("node %s not Ready", n.Name)
				return false, nil
			}
		}
		return len(nodes.Items) > 0, nil
	}); err != nil {
		return fmt.Errorf("testbed: cluster %s: nodes not back after start: %w (%s)", c.Name, err, last)
	}
	// The controller-manager and the scheduler act once they lead again: until the lease the
	// stopped processes held expires, nothing rolls out.
	if err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		for _, name := range []string{"kube-controller-manager", "kube-scheduler"} {
			lease, err := c.Kube.CoordinationV1().Leases("kube-system").Get(ctx, name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				continue // not leader-elected
			}
			if err != nil {
				last = err.Error()
				return false, nil
			}
			if lease.Spec.AcquireTime == nil || lease.Spec.AcquireTime.Time.Before(started.Add(-time.Second)) {
				last = fmt.Sprintf("%s has not led since the start", name)
				return false, nil
			}
		}
		return true, nil
	}); err != nil {
		return fmt.Errorf("testbed: cluster %s: controllers not leading after start: %w (%s)", c.Name, err, last)
	}
	return nil
}

// delete removes the cluster and its processes.
func (c *Cluster) delete() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if out, err := c.bed.kwokctl(ctx, "delete", "cluster", "--name", c.Name); err != nil {
		c.bed.log("testbed: delete cluster %s: %v: %s", c.Name, err, strings.TrimSpace(out))
	}
}
