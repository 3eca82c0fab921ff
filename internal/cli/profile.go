package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"

	"github.com/org/app-status-action/internal/safefile"
	"github.com/org/app-status-action/internal/sanitize"
)

// The environment variables that ask a run for pprof profiles, each naming a file
// (docs/performance.md).
const (
	envCPUProfile = "APP_STATUS_CPUPROFILE"
	envMemProfile = "APP_STATUS_MEMPROFILE"
)

// startProfiles starts the CPU profile APP_STATUS_CPUPROFILE asks for; the returned stop ends
// it and writes it, and writes the heap profile APP_STATUS_MEMPROFILE asks for. Run calls
// stop however the run ends (verdicts, a failure, the timeout, a cancellation, bad input), so
// every mode writes them. A profile that cannot be taken or written is said on stderr; the
// exit code stays the verdicts'.
func startProfiles(env Env) (stop func()) {
	cpuFile, memFile := env.Getenv(envCPUProfile), env.Getenv(envMemProfile)
	warn := func(what string, f profileFile, err error) {
		fmt.Fprintf(env.Stderr, "app-status: %s\n", sanitize.Commands(sanitize.Line(fmt.Sprintf(
			"no %s profile: %s=%s: %v (name a file in a folder this process can write, or unset it)", what, f.env, f.file, err))))
	}
	// The profile is kept in memory and written at the end (writeDiagnostic); its samples are
	// aggregated by stack, so it stays small.
	var cpu bytes.Buffer
	cpuOn := false
	if cpuFile != "" {
		if err := pprof.StartCPUProfile(&cpu); err != nil {
			warn("CPU", profileFile{envCPUProfile, cpuFile}, err)
		} else {
			cpuOn = true
		}
	}
	return func() {
		if cpuOn {
			pprof.StopCPUProfile()
			if err := writeDiagnostic(env, cpuFile, cpu.Bytes()); err != nil {
				warn("CPU", profileFile{envCPUProfile, cpuFile}, err)
			}
		}
		if memFile != "" {
			// What is live at the end, as the last collection left it (go test -memprofile
			// does the same); the profile holds every allocation since the start too
			// (-sample_index=alloc_space).
			runtime.GC()
			var heap bytes.Buffer
			err := pprof.Lookup("heap").WriteTo(&heap, 0)
			if err == nil {
				err = writeDiagnostic(env, memFile, heap.Bytes())
			}
			if err != nil {
				warn("heap", profileFile{envMemProfile, memFile}, err)
			}
		}
	}
}

// profileFile is a file a diagnostic is written to, and the variable that named it.
type profileFile struct{ env, file string }

// writeDiagnostic writes a diagnostic file byte for byte, creating its folder, as a new file of
// its own, never through a symbolic link (safefile.Create). Not with env.WriteFile, which
// breaks what would read as a runner command in a report file: in a gzipped profile, that
// corrupts it. As with env.WriteFile, an Env without one writes no file.
func writeDiagnostic(env Env, name string, data []byte) error {
	if env.WriteFile == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	return safefile.Create(name, 0o644, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}
