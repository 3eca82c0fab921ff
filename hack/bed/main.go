// Command bed runs the test bed by hand: `bed up` keeps clusters with Flux running for manual
// poking, `bed measure` reports start-up time and memory, `bed demo` is the first command of CONTRIBUTING.md (make demo): three clusters, a sample app
// delivered by the real kustomize-controller (one cluster gets a broken image), and
// `app-status verify` against all three with live progress and the final table.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/org/app-status-action/internal/testing/testbed"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:])
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "bed: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return errors.New("usage: bed up [--clusters N] | bed demo --app-status PATH [--summary FILE] | bed measure [--clusters N]")
	}
	switch args[0] {
	case "up":
		return up(ctx, args[1:])
	case "demo":
		return demo(ctx, args[1:])
	case "measure":
		return measure(ctx, args[1:])
	}
	return fmt.Errorf("unknown command %q: use up or demo", args[0])
}

func logf(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }

// up starts clusters with Flux and keeps them until interrupted.
func up(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("bed up", flag.ContinueOnError)
	n := fs.Int("clusters", 3, "how many clusters")
	if err := fs.Parse(args); err != nil {
		return err
	}
	bed, err := testbed.Start(ctx, testbed.Options{Clusters: *n, Flux: true, Prefix: "up", Log: logf})
	if err != nil {
		return err
	}
	defer bed.Close()
	fmt.Println("Clusters (kubeconfig files):")
	for _, c := range bed.Clusters {
		fmt.Printf("  %s  %s\n", c.Name, c.KubeconfigPath)
	}
	fmt.Printf("Work folder (controller logs): %s\n", bed.Workdir())
	fmt.Printf("Try: KUBECONFIG=%s %s get nodes\n", bed.Clusters[0].KubeconfigPath, bed.Bins.Path("kubectl"))
	fmt.Println("Press Ctrl-C to tear everything down.")
	<-ctx.Done()
	return nil
}

// demo shows the product end to end on local clusters.
func demo(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("bed demo", flag.ContinueOnError)
	appStatus := fs.String("app-status", "bin/app-status", "the app-status binary")
	summary := fs.String("summary", ".demo/summary.md", "where to write the markdown summary")
	if err := fs.Parse(args); err != nil {
		return err
	}
	root, err := testbed.RepoRoot()
	if err != nil {
		return err
	}
	names := []string{"prod-eu", "prod-us", "staging"}
	logf("==> Starting %d local clusters (etcd, kube-apiserver, controller-manager, scheduler, kwok) with Flux's kustomize-controller", len(names))
	bed, err := testbed.Start(ctx, testbed.Options{Clusters: len(names), Flux: true, Prefix: "demo", Log: logf})
	if err != nil {
		return err
	}
	defer func() {
		logf("==> Tearing the clusters down")
		bed.Close()
	}()

	commit := "5f1c0ffee0ddba11ab1e5eed0f0a1b2c3d4e5f60"
	logf("==> Publishing my-app at commit %s; the real kustomize-controller applies it on every cluster", commit[:7])
	var lines []string
	for i, c := range bed.Clusters {
		app := "web-v2"
		if names[i] == "staging" {
			app = "web-broken" // a typo in the image tag: the pods cannot pull it
		}
		k := testbed.Kustomization{Name: "my-app", TargetNamespace: "my-app"}
		if _, err := c.DeployApp(ctx, k, filepath.Join(root, "testdata", "apps", app), commit); err != nil {
			return err
		}
		lines = append(lines, fmt.Sprintf("%s=file:%s", names[i], c.KubeconfigPath))
	}
	if err := os.MkdirAll(filepath.Dir(*summary), 0o755); err != nil {
		return err
	}
	// The clusters are the demo's own lines (--cluster): in CI, a clusters file's file: lines
	// may name only files in its folder, and the test bed's kubeconfigs are elsewhere.
	var cmdline []string
	for _, line := range lines {
		cmdline = append(cmdline, "--cluster", line)
	}
	cmdline = append([]string{"verify"}, append(cmdline, "--resource", "kustomization/my-app",
		"--revision", commit[:7], "--timeout", "3m", "--summary-file", *summary)...)
	logf("==> %s %s", *appStatus, strings.Join(cmdline, " "))
	start := time.Now()
	cmd := exec.CommandContext(ctx, *appStatus, cmdline...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		logf("==> app-status exited 0 after %s: every cluster is Current", time.Since(start).Round(time.Millisecond))
	case errors.As(err, &exit):
		logf("==> app-status exited %d after %s: staging cannot pull its image, the others are Current (as intended)", exit.ExitCode(), time.Since(start).Round(time.Millisecond))
	default:
		return fmt.Errorf("run app-status: %w", err)
	}
	logf("==> The job summary GitHub would show is in %s", *summary)
	return nil
}
