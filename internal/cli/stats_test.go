package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/org/app-status-action/internal/testing/fakeapi"
)

// TestStatsFile: APP_STATUS_STATS names the file the engine's counts go to, in the CLI and
// the action: how many clusters, how many passes over their trees in all and the most one
// took. A cluster that answers is judged at least once, a hung one never; a file that
// cannot be written is said on stderr, and the exit code stays the verdicts'.
func TestStatsFile(t *testing.T) {
	t.Parallel()
	const rev = "main@sha1:a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
	kubeconfig := func(b fakeapi.Behaviour) string {
		resources, objects := fakeapi.App("app", rev, 3)
		s := fakeapi.Start(fakeapi.Options{Behaviour: b, Resources: resources, Objects: objects, RetryAfter: 30})
		t.Cleanup(s.Close)
		return fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: %q}}]\nusers: [{name: u, user: {token: tok-0123456789}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\ncurrent-context: c\n", s.URL())
	}
	kubeconfigs := map[string]string{"KC_HEALTHY": kubeconfig(fakeapi.Healthy), "KC_HUNG": kubeconfig(fakeapi.Hang)}
	// counts is what the test checks of the file: its clusters, those judged, and whether
	// the passes agree (their exact count depends on the timing).
	type counts struct {
		Clusters, Judged int
		MaxWithinTotal   bool
	}
	tests := []struct {
		name     string
		clusters string
		action   bool
		timeout  string
		file     string // "" for none; "MISSING/" leads to a folder that cannot be made
		wantCode int
		want     *counts // nil: no file
		// wantStderr is what stderr says.
		wantStderr string
	}{
		{name: "a healthy cluster", clusters: "a=env:KC_HEALTHY\n", timeout: "20s", file: "stats.json",
			want: &counts{Clusters: 1, Judged: 1, MaxWithinTotal: true}},
		{name: "a healthy and a hung cluster", clusters: "a=env:KC_HEALTHY\nb=env:KC_HUNG\n", timeout: "1s", file: "stats.json",
			wantCode: 1, want: &counts{Clusters: 2, Judged: 1, MaxWithinTotal: true}},
		{name: "the action", clusters: "a=env:KC_HEALTHY\nb=env:KC_HEALTHY\n", action: true, timeout: "20s", file: "stats.json",
			want: &counts{Clusters: 2, Judged: 2, MaxWithinTotal: true}},
		{name: "none asked", clusters: "a=env:KC_HEALTHY\n", timeout: "20s"},
		{name: "a file that cannot be written", clusters: "a=env:KC_HEALTHY\n", timeout: "20s", file: "MISSING/stats.json",
			wantStderr: "app-status: no stats: APP_STATUS_STATS=DIR/MISSING/stats.json: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "MISSING"), nil, 0o600); err != nil {
				t.Fatal(err)
			}
			vars := map[string]string{}
			if tt.file != "" {
				vars[envStats] = filepath.Join(dir, tt.file)
			}
			args := []string{"verify", "--quiet", "--clusters-file", clustersFile(t, dir, tt.clusters, kubeconfigs), "--resource", "ks/app", "--timeout", tt.timeout}
			if tt.action {
				for k, v := range kubeconfigs {
					vars[k] = v
				}
				vars["INPUT_CLUSTERS"], vars["INPUT_RESOURCE"], vars["INPUT_TIMEOUT"] = tt.clusters, "ks/app", tt.timeout
				args = []string{"action"}
			}
			f := newFakeEnv(t, vars)
			env := f.env()
			env.Clock = time.Now
			if code := Run(context.Background(), args, env); code != tt.wantCode {
				t.Errorf("Run(%q) = %d, want %d\n%s", args, code, tt.wantCode, f.stderr.String())
			}
			var got *counts
			if data, err := os.ReadFile(filepath.Join(dir, tt.file)); tt.file != "" && err == nil {
				var s runStats
				if err := json.Unmarshal(data, &s); err != nil {
					t.Fatalf("%s: %v\n%s", tt.file, err, data)
				}
				got = &counts{Clusters: s.Clusters, Judged: s.Judged, MaxWithinTotal: s.MaxPasses <= s.Passes && (s.Judged == 0) == (s.MaxPasses == 0)}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", envStats, diff)
			}
			stderr := strings.ReplaceAll(f.stderr.String(), dir, "DIR")
			if tt.wantStderr != "" && !strings.Contains(stderr, tt.wantStderr) {
				t.Errorf("stderr %q, want it to say %q", stderr, tt.wantStderr)
			}
		})
	}
}
