// Command app-status verifies that a Flux app is rolled out on many Kubernetes clusters at
// once. It runs as a GitHub container Action (`app-status action`) and as a CLI
// (`app-status verify`, `app-status get`).
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/org/app-status-action/internal/cli"
)

func main() {
	// SIGTERM is what the runner sends when a job is cancelled: the verdicts so far are still
	// reported before the process exits.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, os.Args[1:], cli.OSEnv())
	stop()
	os.Exit(code)
}
