package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"
)

// tool is one peer's process in a timed run: when it started and exited, and when it printed
// each cluster's verdict.
type tool struct {
	Name    string
	Start   time.Time
	Exit    time.Time
	Err     error
	Verdict map[string]time.Time // cluster -> when its verdict line was read
	Said    map[string]string    // cluster -> the verdict it printed

	cmd    *exec.Cmd
	done   chan struct{}
	mu     sync.Mutex
	output bytes.Buffer // everything it printed, for failures
}

// verdictLine reads one output line; ok when it is a cluster's verdict.
type verdictLine func(line string) (cluster, verdict string, ok bool)

// startTool runs cmd, timestamping every verdict line of its stdout (or stderr, fromStderr) as
// it is read, and the exit.
func startTool(name string, cmd *exec.Cmd, fromStderr bool, parse verdictLine) (*tool, error) {
	t := &tool{Name: name, cmd: cmd, done: make(chan struct{}), Verdict: map[string]time.Time{}, Said: map[string]string{}}
	pr, pw := io.Pipe()
	other := &lockedWriter{mu: &t.mu, w: &t.output}
	if fromStderr {
		cmd.Stderr, cmd.Stdout = pw, other
	} else {
		cmd.Stdout, cmd.Stderr = pw, other
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	t.Start = time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	reading := make(chan struct{})
	go func() {
		defer close(reading)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 4<<20)
		for sc.Scan() {
			now := time.Now()
			line := sc.Text()
			t.mu.Lock()
			if c, v, ok := parse(line); ok {
				if _, seen := t.Verdict[c]; !seen {
					t.Verdict[c], t.Said[c] = now, v
				}
			}
			fmt.Fprintln(&t.output, line)
			t.mu.Unlock()
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	go func() {
		err := cmd.Wait()
		t.Exit = time.Now()
		_ = pw.Close()
		<-reading
		t.Err = err
		close(t.done)
	}()
	return t, nil
}

// wait waits for the tool to exit; when ctx ends first it kills the tool's process group.
func (t *tool) wait(ctx context.Context) error {
	select {
	case <-t.done:
		return nil
	case <-ctx.Done():
		_ = syscall.Kill(-t.cmd.Process.Pid, syscall.SIGKILL)
		<-t.done
		return fmt.Errorf("%s did not finish: %w\n%s", t.Name, ctx.Err(), t.tail())
	}
}

// kill stops the tool's process group now.
func (t *tool) kill() {
	if t.cmd.Process != nil {
		_ = syscall.Kill(-t.cmd.Process.Pid, syscall.SIGKILL)
	}
}

func (t *tool) tail() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	lines := strings.Split(strings.TrimRight(t.output.String(), "\n"), "\n")
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	return strings.Join(lines, "\n")
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// appStatusLine reads app-status's progress (stderr): "[   1.2s] ✔ cluster: message" is a
// cluster's verdict, "…" marks a change on the way.
func appStatusLine(line string) (string, string, bool) {
	_, rest, ok := strings.Cut(line, "] ")
	if !ok {
		return "", "", false
	}
	mark, rest, ok := strings.Cut(rest, " ")
	if !ok || mark == "…" {
		return "", "", false
	}
	cluster, msg, ok := strings.Cut(rest, ": ")
	if !ok {
		return "", "", false
	}
	verdict := "Current"
	if mark != "✔" {
		verdict = "not Current: " + msg
	}
	return cluster, verdict, true
}

// peerLine reads the peers' "verdict <cluster> <verdict>" lines.
func peerLine(line string) (string, string, bool) {
	f := strings.Fields(line)
	if len(f) < 3 || f[0] != "verdict" {
		return "", "", false
	}
	return f[1], strings.Join(f[2:], " "), true
}

// clusterRef is a cluster as the tools are given it.
type clusterRef struct{ Name, Kubeconfig string }

// writeClustersFile writes app-status's --clusters-file for the clusters.
func writeClustersFile(path string, clusters []clusterRef) error {
	var b strings.Builder
	for _, c := range clusters {
		fmt.Fprintf(&b, "%s=file:%s\n", c.Name, c.Kubeconfig)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		return fmt.Errorf("write clusters file: %w", err)
	}
	return nil
}

// kubectlLoop is the script a user would write: for each cluster in turn, wait for the
// Kustomization to apply the revision and be Ready, then `kubectl rollout status` each
// Deployment. It prints one verdict line per cluster.
func kubectlLoop(clusters []clusterRef, app fluxApp, revision string, timeout time.Duration) string {
	var pairs []string
	for _, c := range clusters {
		pairs = append(pairs, shellQuote(c.Name+"="+c.Kubeconfig))
	}
	return fmt.Sprintf(`rev=%[1]s
for pair in %[2]s; do
  name=${pair%%%%=*}; kc=${pair#*=}; ok=Current
  kubectl --kubeconfig "$kc" -n flux-system wait kustomization/%[3]s --for=jsonpath='{.status.lastAppliedRevision}'="$rev" --timeout=%[4]s >/dev/null || ok=Failed
  kubectl --kubeconfig "$kc" -n flux-system wait kustomization/%[3]s --for=condition=Ready --timeout=%[4]s >/dev/null || ok=Failed
  for d in %[5]s; do
    kubectl --kubeconfig "$kc" -n %[3]s rollout status "deployment/$d" --timeout=%[4]s >/dev/null || ok=Failed
  done
  echo "verdict $name $ok"
done
`, shellQuote(revision), strings.Join(pairs, " "), app.Name, timeout, strings.Join(app.deploymentNames(), " "))
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// peers starts the three tools on the same expectation: app-status verify, the kubectl loop and
// the kstatus poller. kubectlCache is a fresh discovery cache folder, as on a CI runner.
func (e *env) startPeers(app fluxApp, revision, commit string, timeout time.Duration, kubectlCache string) ([]*tool, error) {
	var tools []*tool
	stop := func() {
		for _, t := range tools {
			t.kill()
		}
	}
	as := exec.Command(e.appStatus, "verify", "--clusters-file", e.clustersFile, "--resource", "kustomization/"+app.Name,
		"--revision", commit, "--timeout", timeout.String(), "--max-parallel", fmt.Sprint(len(e.clusters)), "-o", "json")
	t, err := startTool(toolAppStatus, as, true, appStatusLine)
	if err != nil {
		return nil, err
	}
	tools = append(tools, t)
	if e.peer != "" {
		peer := exec.Command(e.peer, as.Args[1:]...)
		if t, err = startTool(e.peerName, peer, true, appStatusLine); err != nil {
			stop()
			return nil, err
		}
		tools = append(tools, t)
	}

	loop := exec.Command("bash", "-c", kubectlLoop(e.clusters, app, revision, timeout))
	loop.Env = append(os.Environ(), "PATH="+e.bins.Dir+":"+os.Getenv("PATH"), "KUBECACHEDIR="+kubectlCache)
	if t, err = startTool("kubectl loop", loop, false, peerLine); err != nil {
		stop()
		return nil, err
	}
	tools = append(tools, t)

	args := []string{"poller", "--kustomization", app.Name, "--revision", revision, "--interval", "2s", "--timeout", timeout.String()}
	for _, c := range e.clusters {
		args = append(args, "--cluster", c.Name+"="+c.Kubeconfig)
	}
	if t, err = startTool("kstatus poller", exec.Command(e.self, args...), false, peerLine); err != nil {
		stop()
		return nil, err
	}
	return append(tools, t), nil
}
