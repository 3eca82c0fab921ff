// Command imagestart measures how long the action's image takes from `podman run` to its first
// API request: a listener on 127.0.0.1 poses as the API server of a cluster whose kubeconfig
// is a file in a workspace mounted the way the runner mounts it, and notes when the first
// request arrives. With --binary it times the bare binary the same way, so the container's own
// cost shows. A run ends once the first request has arrived: the listener answers 404, and the
// action gives its verdict and exits.
//
//	make image && go -C hack run ./imagestart --image app-status-action:dev --binary $PWD/bin/app-status
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:])
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "imagestart: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("imagestart", flag.ContinueOnError)
	image := fs.String("image", "app-status-action:dev", "the image to run (make image builds it)")
	binary := fs.String("binary", "", "also time this app-status binary, run directly")
	runs := fs.Int("runs", 10, "runs of each")
	podman := fs.String("podman", "podman.sh", "hack/podman.sh, which holds the podman flags")
	if err := fs.Parse(args); err != nil {
		return err
	}
	podmanPath, err := filepath.Abs(*podman)
	if err != nil {
		return err
	}
	api, err := startAPIServer()
	if err != nil {
		return err
	}
	defer api.close()

	workspace, err := os.MkdirTemp("", "imagestart-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(workspace)
	if err := os.WriteFile(filepath.Join(workspace, "fake.kubeconfig"), []byte(api.kubeconfig()), 0o600); err != nil {
		return err
	}
	inputs := []string{"INPUT_CLUSTERS=fake=file:fake.kubeconfig", "INPUT_RESOURCE=kustomization/app", "INPUT_TIMEOUT=10s", "GITHUB_ACTIONS=true"}

	var container, bare []time.Duration
	for i := range *runs {
		podmanArgs := []string{"run", "--rm", "--workdir", "/github/workspace", "-v", workspace + ":/github/workspace", "-e", "GITHUB_WORKSPACE=/github/workspace"}
		for _, in := range inputs {
			podmanArgs = append(podmanArgs, "-e", in)
		}
		cmd := exec.CommandContext(ctx, podmanPath, append(podmanArgs, *image, "action")...) //nolint:gosec // G204: the podman script named by the flag
		d, err := api.timeFirstRequest(ctx, cmd)
		if err != nil {
			return fmt.Errorf("container run %d: %w", i+1, err)
		}
		container = append(container, d)
		if *binary == "" {
			continue
		}
		cmd = exec.CommandContext(ctx, *binary, "action") //nolint:gosec // G204: the binary named by the flag
		cmd.Dir = workspace
		cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "GITHUB_WORKSPACE=" + workspace}, inputs...)
		d, err = api.timeFirstRequest(ctx, cmd)
		if err != nil {
			return fmt.Errorf("binary run %d: %w", i+1, err)
		}
		bare = append(bare, d)
	}
	fmt.Printf("podman run %s to the first API request, %d runs: %s\n", *image, *runs, summarize(container))
	if len(bare) > 0 {
		fmt.Printf("the binary alone, exec to the first API request, %d runs: %s\n", *runs, summarize(bare))
	}
	return nil
}

// apiServer is a stand-in API server that notes when a request arrives.
type apiServer struct {
	listener net.Listener
	server   *http.Server
	requests chan time.Time
}

func startAPIServer() (*apiServer, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	a := &apiServer{listener: l, requests: make(chan time.Time, 1)}
	a.server = &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		select {
		case a.requests <- time.Now():
		default:
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","reason":"NotFound","code":404}`)
	})}
	go func() { _ = a.server.Serve(l) }()
	return a, nil
}

func (a *apiServer) close() { _ = a.server.Close() }

func (a *apiServer) kubeconfig() string {
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- {name: fake, cluster: {server: "http://%s"}}
users:
- {name: fake, user: {token: imagestart}}
contexts:
- {name: fake, context: {cluster: fake, user: fake}}
current-context: fake
`, a.listener.Addr())
}

// timeFirstRequest starts cmd and returns how long it took to make its first request, once it
// has ended.
func (a *apiServer) timeFirstRequest(ctx context.Context, cmd *exec.Cmd) (time.Duration, error) {
	select {
	case <-a.requests: // a late request of the previous run
	default:
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case at := <-a.requests:
		if err := <-done; err != nil && !isExitError(err) {
			return 0, err
		}
		return at.Sub(start), nil
	case err := <-done:
		if err == nil {
			err = errors.New("exit status 0")
		}
		return 0, fmt.Errorf("%s ended before any request: %w", cmd.Args[0], err)
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		return 0, fmt.Errorf("no request within 60s (killed: %w)", <-done)
	case <-ctx.Done():
		_ = cmd.Process.Kill()
		return 0, errors.Join(ctx.Err(), <-done)
	}
}

// isExitError says whether err is the process's non-zero exit (the action's verdict on a
// cluster that has no Kustomization), not a failure to run it.
func isExitError(err error) bool {
	var exit *exec.ExitError
	return errors.As(err, &exit)
}

func summarize(ds []time.Duration) string {
	s := slices.Clone(ds)
	slices.Sort(s)
	return fmt.Sprintf("median %s, min %s, max %s", s[len(s)/2].Round(time.Millisecond), s[0].Round(time.Millisecond), s[len(s)-1].Round(time.Millisecond))
}
