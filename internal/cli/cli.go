// Package cli is the program behind cmd/app-status: it turns the command line, or a GitHub
// Action's inputs, into one verification request, runs it, and writes the verdicts where
// each mode wants them. Both modes build the same request and call the same engine, so their
// verdicts are identical.
package cli

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	"github.com/org/app-status-action/internal/safefile"
	"github.com/org/app-status-action/internal/verify"
)

// Version is stamped at build time with -ldflags "-X .../internal/cli.Version=v1.2.3"; left
// unset ("dev"), the program reports the version its build info holds (programVersion).
var Version = "dev"

// programVersion is the version the program reports (app-status version, a report's
// version): Version when stamped at link time, else the main module's version in the build
// info, which `go install github.com/org/app-status-action/cmd/app-status@v1.2.3` records
// (a pseudo-version at a commit), else "dev" (a build of a working tree says "(devel)").
func programVersion() string { return versionOf(Version, debug.ReadBuildInfo) }

func versionOf(stamped string, readBuildInfo func() (*debug.BuildInfo, bool)) string {
	if stamped != "" && stamped != "dev" {
		return stamped
	}
	if info, ok := readBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	return "dev"
}

// Env is the process's outside world, injected so tests can run every mode in-process.
type Env struct {
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	ReadFile       func(string) ([]byte, error)
	// WriteFile writes a file, creating its folder; nil writes no file. The report file,
	// hundreds of megabytes for a large fleet, is streamed to disk (writeReportJSON) when
	// WriteFile is set, not given to it.
	WriteFile func(name string, data []byte) error
	Clock     func() time.Time
	// heartbeat is how often a waiting run's progress looks for a silent log (zero:
	// heartbeatTick); tests shorten it.
	heartbeat time.Duration
}

// OSEnv is the real environment.
func OSEnv() Env {
	return Env{Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, ReadFile: safefile.Read, WriteFile: writeFile, Clock: time.Now}
}

// writeFile writes data to name, a file whose path the program chose (the action's
// junit-file), readable by the job's later steps, creating its folder: as a new file of its
// own, never through a link (safefile.Create).
func writeFile(name string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	return writeWhole(safefile.Create, name, data)
}

// Run runs the program and returns its exit code: 0 when every cluster is Current, 1 when
// not, 2 for bad usage. The profiles APP_STATUS_CPUPROFILE and APP_STATUS_MEMPROFILE ask
// for are written before it returns, in every mode and however the run ends.
func Run(ctx context.Context, args []string, env Env) int {
	verify.DiscardClientLogs()
	stop := startProfiles(env)
	defer stop()
	return run(ctx, args, env)
}
