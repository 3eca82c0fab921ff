package testbed

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// controller is a Flux controller process run for one cluster.
type controller struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

// StartFlux starts a real kustomize-controller and helm-controller for the cluster, of the
// bed's Options.Controllers, and waits until both report healthy. Both accept ExternalArtifact
// sources (Flux 2.7's feature gate).
func (c *Cluster) StartFlux(ctx context.Context) error {
	for _, name := range fluxControllers {
		if err := c.startController(ctx, name, fluxControllerFlags...); err != nil {
			return err
		}
	}
	return nil
}

// StartSourceController starts the real source-controller for the cluster, serving the
// artifacts it stores over HTTP on 127.0.0.1, where kustomize-controller and helm-controller
// fetch them, and waits until it reports healthy.
func (c *Cluster) StartSourceController(ctx context.Context) error {
	dir := filepath.Join(c.bed.workdir, "sources", c.Name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("testbed: make source-controller storage: %w", err)
	}
	return c.startControllerWith(ctx, "source-controller", func() ([]string, error) {
		storage, err := freeAddr()
		if err != nil {
			return nil, err
		}
		return []string{"--storage-path=" + dir, "--storage-addr=" + storage, "--storage-adv-addr=" + storage}, nil
	})
}

// portAttempts is how many times a controller is started on fresh ports when one of the
// ports picked for it was taken before it could listen on it: freeAddr closes its listener,
// and any process on the machine may take the port before the controller binds it.
const portAttempts = 5

func (c *Cluster) startController(ctx context.Context, name string, extra ...string) error {
	return c.startControllerWith(ctx, name, func() ([]string, error) { return extra, nil })
}

// startControllerWith starts the controller with the flags that extra gives, asked again at
// every attempt, and starts it again on fresh ports while it exits because a port was taken.
func (c *Cluster) startControllerWith(ctx context.Context, name string, extra func() ([]string, error)) error {
	return onFreshPorts(func() error {
		flags, err := extra()
		if err != nil {
			return err
		}
		return c.startControllerOnce(ctx, name, flags)
	})
}

// onFreshPorts runs start again while it fails because a port it picked was taken.
func onFreshPorts(start func() error) error {
	for attempt := 1; ; attempt++ {
		err := start()
		if err == nil || !errors.Is(err, errPortTaken) || attempt == portAttempts {
			return err
		}
	}
}

// errPortTaken is the error of a controller that exited because an address it was given
// was already in use.
var errPortTaken = errors.New("a port it was given was taken")

func (c *Cluster) startControllerOnce(ctx context.Context, name string, extra []string) error {
	metrics, err := freeAddr()
	if err != nil {
		return err
	}
	health, err := freeAddr()
	if err != nil {
		return err
	}
	args := append([]string{
		"--metrics-addr=" + metrics,
		"--health-addr=" + health,
		"--enable-leader-election=false",
		"--watch-all-namespaces=true",
		"--requeue-dependency=5s",
		"--concurrent=8",
		"--log-level=info",
	}, extra...)
	return c.launch(ctx, name, c.bed.Bins.Path(c.bed.controllers.binary(name)), args, "http://"+health+"/readyz")
}

// launch runs a controller process for the cluster and waits until ready answers 200.
func (c *Cluster) launch(ctx context.Context, name, binary string, args []string, ready string) error {
	logPath := filepath.Join(c.bed.workdir, fmt.Sprintf("%s.%s.log", c.Name, name))
	logFile, err := os.Create(logPath)
	if err != nil {
		return fmt.Errorf("testbed: create %s log: %w", name, err)
	}
	cmd := exec.Command(binary, args...)
	// A temporary folder of its own: kustomize-controller deletes every /tmp/kustomization-*
	// folder when it starts (its "stale" ones), which would pull the build folders away from
	// the controllers of every other cluster on this machine in the middle of a build.
	tmp := filepath.Join(c.bed.workdir, "tmp", c.Name+"."+name)
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return fmt.Errorf("testbed: make %s temporary folder: %w", name, err)
	}
	cmd.Env = append(os.Environ(), "KUBECONFIG="+c.KubeconfigPath, "RUNTIME_NAMESPACE=flux-system", "TMPDIR="+tmp)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	// The controller dies with the test binary, whatever way the test binary ends.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		_ = logFile.Close()
		return fmt.Errorf("testbed: start %s for %s: %w", name, c.Name, err)
	}
	ctl := &controller{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		_ = logFile.Close()
		close(ctl.done)
	}()
	c.mu.Lock()
	c.controllers = append(c.controllers, ctl)
	c.mu.Unlock()

	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		select {
		case <-ctl.done:
			return false, fmt.Errorf("exited")
		default:
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ready, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false, nil
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		logs, _ := os.ReadFile(logPath)
		if exited(ctl) && strings.Contains(string(logs), "address already in use") {
			c.forget(ctl)
			err = fmt.Errorf("%w: %w", errPortTaken, err)
		}
		return fmt.Errorf("testbed: %s for %s not healthy: %w\n%s", name, c.Name, err, tail(string(logs), 30))
	}
	return nil
}

// exited says whether the controller's process has ended.
func exited(ctl *controller) bool {
	select {
	case <-ctl.done:
		return true
	default:
		return false
	}
}

// forget drops an exited controller from the cluster's list, so that the controller started
// in its place is the one ControllerLog reads.
func (c *Cluster) forget(ctl *controller) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, other := range c.controllers {
		if other == ctl {
			c.controllers = append(c.controllers[:i], c.controllers[i+1:]...)
			return
		}
	}
}

// ControllerLog returns the log of the named Flux controller of the cluster, for test failures.
func (c *Cluster) ControllerLog(name string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, ctl := range c.controllers {
		if ctl.name == name {
			data, _ := os.ReadFile(ctl.log)
			return string(data)
		}
	}
	return ""
}

// stopControllers stops the cluster's Flux controllers and waits for them to exit.
func (c *Cluster) stopControllers() {
	c.mu.Lock()
	ctls := c.controllers
	c.controllers = nil
	c.mu.Unlock()
	for _, ctl := range ctls {
		_ = ctl.cmd.Process.Signal(syscall.SIGTERM)
	}
	for _, ctl := range ctls {
		select {
		case <-ctl.done:
		case <-time.After(5 * time.Second):
			_ = ctl.cmd.Process.Kill()
			<-ctl.done
		}
	}
}

// freeAddr returns a free 127.0.0.1 address.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("testbed: find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().String(), nil
}
