package testbed

import (
	"fmt"
	"io"
	"os/exec"
	"sync"
	"syscall"
)

// guardScript deletes the registered clusters once its standard input closes without a "done"
// line: that is, when the test binary died (a failed, panicking or timed-out test) before it
// could tear the clusters down itself. kwokctl starts the cluster's processes in sessions of
// their own, so nothing else would stop them.
const guardScript = `
workdir=$1; kwokctl=$2; names=()
while IFS= read -r line; do
  case "$line" in
    done) exit 0 ;;
    cluster\ *) names+=("${line#cluster }") ;;
  esac
done
for n in "${names[@]}"; do
  KWOK_WORKDIR="$workdir" "$kwokctl" delete cluster --name "$n" >/dev/null 2>&1
done
`

// guard is a watchdog process that outlives the test binary just long enough to delete the
// clusters it was told about.
type guard struct {
	mu    sync.Mutex
	stdin io.WriteCloser
	cmd   *exec.Cmd
}

// startGuard starts the watchdog for clusters created under workdir.
func startGuard(workdir, kwokctl string) (*guard, error) {
	cmd := exec.Command("bash", "-c", guardScript, "guard", workdir, kwokctl)
	// A session of its own: signals sent to the test binary's process group leave it alive.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("start cluster guard: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start cluster guard: %w", err)
	}
	return &guard{stdin: stdin, cmd: cmd}, nil
}

// register tells the guard about a cluster, before it is created.
func (g *guard) register(name string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, err := fmt.Fprintf(g.stdin, "cluster %s\n", name); err != nil {
		return fmt.Errorf("register cluster %s with the guard: %w", name, err)
	}
	return nil
}

// release ends the guard without it deleting anything: the clusters are already gone.
func (g *guard) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	_, _ = io.WriteString(g.stdin, "done\n")
	_ = g.stdin.Close()
	_ = g.cmd.Wait()
}
