package cli

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/org/app-status-action/internal/testing/fakeapi"
)

// TestProfiles: APP_STATUS_CPUPROFILE and APP_STATUS_MEMPROFILE give a CPU profile of the
// run and a heap profile at its end, in every mode and however the run ends: all Current, a
// failed cluster, the timeout, a cancellation, bad input. A profile that cannot be written
// is said on stderr, naming the variable, and the exit code stays the verdicts'.
//
// Not parallel, nor are its cases: a process takes one CPU profile at a time.
func TestProfiles(t *testing.T) {
	const rev = "main@sha1:a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
	// kubeconfig starts a fake API server holding the app, its Kustomization's conditions
	// replaced when given, and returns a kubeconfig for it.
	kubeconfig := func(b fakeapi.Behaviour, conditions ...any) string {
		resources, objects := fakeapi.App("app", rev, 3)
		if conditions != nil {
			objects[0]["status"].(map[string]any)["conditions"] = conditions
		}
		s := fakeapi.Start(fakeapi.Options{Behaviour: b, Resources: resources, Objects: objects, RetryAfter: 30})
		t.Cleanup(s.Close)
		return fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: %q}}]\nusers: [{name: u, user: {token: tok-0123456789}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n", s.URL())
	}
	healthy, hung := kubeconfig(fakeapi.Healthy), kubeconfig(fakeapi.Hang)
	failedKubeconfig := kubeconfig(fakeapi.Healthy, map[string]any{"type": "Ready", "status": "False", "reason": "BuildFailed",
		"message": "kustomize build failed", "observedGeneration": int64(1)})
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()

	verify := func(timeout string) []string {
		return []string{"verify", "--quiet", "--clusters-file", "CLUSTERS", "--resource", "ks/app", "--revision", "a1b2c3d4", "--timeout", timeout}
	}
	tests := []struct {
		name     string
		args     []string
		vars     map[string]string
		ctx      context.Context
		cpu, mem string // the files named ("" for none); "MISSING/" leads to a folder that cannot be made
		wantCode int
		// wantFiles are the profiles written, by variable; wantStderr what stderr says.
		wantFiles  []string
		wantStderr string
	}{
		{name: "every cluster Current", args: verify("20s"), vars: map[string]string{"KC": healthy}, cpu: "cpu.pprof", mem: "mem.pprof",
			wantCode: 0, wantFiles: []string{"cpu", "heap"}},
		{name: "a failed cluster", args: verify("20s"), vars: map[string]string{"KC": failedKubeconfig}, cpu: "cpu.pprof", mem: "mem.pprof",
			wantCode: 1, wantFiles: []string{"cpu", "heap"}},
		{name: "the timeout", args: verify("1s"), vars: map[string]string{"KC": hung}, cpu: "cpu.pprof", mem: "mem.pprof",
			wantCode: 1, wantFiles: []string{"cpu", "heap"}},
		{name: "cancelled", args: verify("20s"), vars: map[string]string{"KC": hung}, ctx: cancelled, cpu: "cpu.pprof", mem: "mem.pprof",
			wantCode: 1, wantFiles: []string{"cpu", "heap"}},
		{name: "bad input", args: []string{"verify", "--clusters-file", "CLUSTERS"}, vars: map[string]string{"KC": healthy}, cpu: "cpu.pprof", mem: "mem.pprof",
			wantCode: 2, wantFiles: []string{"cpu", "heap"}},
		{name: "the action", args: []string{"action"}, vars: map[string]string{"INPUT_CLUSTERS": "prod=env:KC", "INPUT_RESOURCE": "ks/app", "INPUT_TIMEOUT": "20s", "KC": healthy},
			cpu: "cpu.pprof", mem: "mem.pprof", wantCode: 0, wantFiles: []string{"cpu", "heap"}},
		{name: "get", args: []string{"get", "--quiet", "--clusters-file", "CLUSTERS", "--resource", "ks/app", "--timeout", "20s"}, vars: map[string]string{"KC": healthy},
			cpu: "cpu.pprof", mem: "mem.pprof", wantCode: 0, wantFiles: []string{"cpu", "heap"}},
		{name: "version", args: []string{"version"}, cpu: "cpu.pprof", mem: "mem.pprof", wantCode: 0, wantFiles: []string{"cpu", "heap"}},
		{name: "the heap alone", args: []string{"version"}, mem: "mem.pprof", wantCode: 0, wantFiles: []string{"heap"}},
		{name: "none asked", args: verify("20s"), vars: map[string]string{"KC": healthy}, wantCode: 0},
		{name: "a file that cannot be written", args: verify("20s"), vars: map[string]string{"KC": healthy}, cpu: "MISSING/cpu.pprof", mem: "mem.pprof",
			wantCode: 0, wantFiles: []string{"heap"}, wantStderr: "app-status: no CPU profile: APP_STATUS_CPUPROFILE=DIR/MISSING/cpu.pprof: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			// A file where the folder should be: the profile's folder cannot be made.
			if err := os.WriteFile(filepath.Join(dir, "MISSING"), nil, 0o600); err != nil {
				t.Fatal(err)
			}
			vars := map[string]string{}
			for k, v := range tt.vars {
				vars[k] = v
			}
			if tt.cpu != "" {
				vars[envCPUProfile] = filepath.Join(dir, tt.cpu)
			}
			if tt.mem != "" {
				vars[envMemProfile] = filepath.Join(dir, tt.mem)
			}
			args := slices.Clone(tt.args)
			if i := slices.Index(args, "CLUSTERS"); i >= 0 {
				args[i] = clustersFile(t, dir, "prod=env:KC\n", map[string]string{"KC": tt.vars["KC"]})
			}
			f := newFakeEnv(t, vars)
			env := f.env()
			env.Clock = time.Now
			ctx := tt.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			if code := Run(ctx, args, env); code != tt.wantCode {
				t.Errorf("Run(%q) = %d, want %d\n%s", args, code, tt.wantCode, f.stderr.String())
			}
			var got []string
			for _, p := range []struct{ kind, file string }{{"cpu", tt.cpu}, {"heap", tt.mem}} {
				if p.file == "" {
					continue
				}
				data, err := os.ReadFile(filepath.Join(dir, p.file))
				if err != nil {
					continue
				}
				if err := isProfile(data, p.kind); err != nil {
					t.Errorf("%s: %v", p.file, err)
				}
				got = append(got, p.kind)
			}
			if diff := cmp.Diff(tt.wantFiles, got); diff != "" {
				t.Errorf("profiles written (-want +got):\n%s\nstderr: %s", diff, f.stderr.String())
			}
			stderr := strings.ReplaceAll(f.stderr.String(), dir, "DIR")
			if tt.wantStderr != "" && !strings.Contains(stderr, tt.wantStderr) {
				t.Errorf("stderr %q, want it to say %q", stderr, tt.wantStderr)
			}
			if tt.wantStderr == "" && strings.Contains(stderr, "profile") {
				t.Errorf("stderr %q speaks of a profile, want nothing said", stderr)
			}
		})
	}
}

// isProfile checks that data is a gzipped pprof profile of the kind (cpu or heap), by the
// sample types it declares (the strings of its protobuf).
func isProfile(data []byte, kind string) error {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("not a pprof profile (gzipped protobuf): %w", err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return fmt.Errorf("not a pprof profile (gzipped protobuf): %w", err)
	}
	want := map[string][]string{"cpu": {"samples", "cpu", "nanoseconds"}, "heap": {"alloc_space", "inuse_space", "bytes"}}[kind]
	for _, w := range want {
		if !bytes.Contains(raw, []byte(w)) {
			return fmt.Errorf("not a %s profile: no sample type %q", kind, w)
		}
	}
	return nil
}

// TestWriteDiagnosticByteForByte: a profile is binary, so it is written as it is: bytes that
// would read as a runner command in a report file (a line starting "::", "##[") are kept, not
// broken as the report files' cleaning breaks them, which corrupted gzipped profiles.
func TestWriteDiagnosticByteForByte(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		data []byte
	}{
		{name: "a runner command at a line start", data: []byte("\x1f\x8b\x08\x00\n::warning::x\n\x00\xff")},
		{name: "a logging command anywhere", data: []byte("\x00##[group]\xfe\n##vso[task.setvariable]\r\n")},
		{name: "empty", data: []byte{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "sub", "cpu.pprof")
			f := newFakeEnv(t, nil)
			if err := writeDiagnostic(f.env(), path, tt.data); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.data, got); diff != "" {
				t.Errorf("file (-want +got):\n%s", diff)
			}
		})
	}
}
