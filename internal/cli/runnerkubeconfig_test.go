package cli

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/org/app-status-action/internal/filecommand"
	"github.com/org/app-status-action/internal/testing/fakeapi"
)

// TestActionReadsExportedKubeconfig: given no clusters, the action verifies every context of
// the KUBECONFIG an earlier step exported into the workspace, a folder the runner mounts into
// its container; one elsewhere on the runner is bad input whose error names the file, says
// that the action cannot read it, and gives the setup action to use instead.
func TestActionReadsExportedKubeconfig(t *testing.T) {
	t.Parallel()
	const rev = "main@sha1:a1b2c3d4e5f60718293a4b5c6d7e8f9012345678"
	resources, objects := fakeapi.App("app", rev, 3)
	api := fakeapi.Start(fakeapi.Options{Resources: resources, Objects: objects, TLS: &tls.Config{MinVersion: tls.VersionTLS12}})
	t.Cleanup(api.Close)
	kubeconfig := fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: %q, insecure-skip-tls-verify: true}}]\n"+
		"users: [{name: u, user: {token: exported-token-0123456789}}]\n"+
		"contexts: [{name: prod, context: {cluster: c, user: u}}]\ncurrent-context: prod\n", api.URL())
	elsewhere := filepath.Join(t.TempDir(), "kubeconfig_1700000000000")
	if err := os.WriteFile(elsewhere, []byte(kubeconfig), 0o600); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name        string
		kubeconfig  string // relative: in the workspace
		wantCode    int
		wantResults []string // cluster=verdict
		wantError   string   // in the step's error annotation
	}{
		{name: "in the workspace", kubeconfig: "gha-kubeconfig-1a2b", wantCode: 0, wantResults: []string{"prod=Current"}},
		{name: "elsewhere on the runner", kubeconfig: elsewhere, wantCode: 1,
			wantError: fmt.Sprintf("::error title=app-status bad input::no clusters, and KUBECONFIG names %q, a file on the runner that this container action cannot read", elsewhere)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFakeEnv(t, map[string]string{"INPUT_RESOURCE": "ks/app", "INPUT_REVISION": "a1b2c3d4", "INPUT_TIMEOUT": "20s",
				"GITHUB_ACTION_REPOSITORY": "org/app-status-action", "GITHUB_ACTION_REF": "v1"})
			path := tt.kubeconfig
			if !filepath.IsAbs(path) {
				path = filepath.Join(f.vars["GITHUB_WORKSPACE"], path)
				if err := os.WriteFile(path, []byte(kubeconfig), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			f.vars["KUBECONFIG"] = path
			code := Run(context.Background(), []string{"action"}, f.env())
			log := f.stdout.String()
			if code != tt.wantCode {
				t.Errorf("Run() = %d, want %d\n%s", code, tt.wantCode, log)
			}
			if tt.wantError != "" && !strings.Contains(log, tt.wantError) {
				t.Errorf("the log lacks %q:\n%s", tt.wantError, log)
			}
			if tt.wantError != "" && !strings.Contains(log, "uses: org/app-status-action/setup@v1, then run: app-status verify") {
				t.Errorf("the error does not name the setup action:\n%s", log)
			}
			outputs, err := filecommand.ParseOutputs(f.file(t, f.output))
			if err != nil {
				t.Fatalf("the outputs: %v\n%s", err, log)
			}
			var results []struct{ Cluster, Verdict string }
			if err := json.Unmarshal([]byte(outputs["results"]), &results); err != nil {
				t.Fatalf("the results output: %v\n%s", err, log)
			}
			var got []string
			for _, r := range results {
				got = append(got, r.Cluster+"="+r.Verdict)
			}
			if diff := cmp.Diff(tt.wantResults, got); diff != "" {
				t.Errorf("results (-want +got):\n%s\n%s", diff, log)
			}
		})
	}
}
