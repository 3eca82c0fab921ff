package kubeconfig

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A runner's environment as a container action sees it (actions/runner v2.331 and later):
// the workspace and RUNNER_TEMP mounted and rewritten to the container's paths, the job's
// folder keeping its host path.
var (
	containerVars = map[string]string{
		"GITHUB_WORKSPACE": "/github/workspace", "RUNNER_TEMP": "/github/runner_temp",
		"RUNNER_WORKSPACE": "/home/runner/work/deploy", "GITHUB_REPOSITORY": "example/deploy",
	}
	// Before v2.331 RUNNER_TEMP is not mounted, and keeps its host path.
	olderRunnerVars = map[string]string{
		"GITHUB_WORKSPACE": "/github/workspace", "RUNNER_TEMP": "/home/runner/work/_temp",
		"RUNNER_WORKSPACE": "/home/runner/work/deploy", "GITHUB_REPOSITORY": "example/deploy",
	}
	// The binary run on a host, with the runner's paths as they are.
	hostVars = map[string]string{
		"GITHUB_WORKSPACE": "/home/runner/work/deploy/deploy", "RUNNER_TEMP": "/home/runner/work/_temp",
		"RUNNER_WORKSPACE": "/home/runner/work/deploy", "GITHUB_REPOSITORY": "example/deploy",
	}
)

// with is vars with more set (or unset, with "").
func with(vars map[string]string, more ...string) map[string]string {
	out := map[string]string{}
	for k, v := range vars {
		out[k] = v
	}
	for i := 0; i+1 < len(more); i += 2 {
		out[more[i]] = more[i+1]
	}
	return out
}

// TestContainerPath: a file of KUBECONFIG is read where the runner mounts it into the action's
// container, whether the runner rewrote its path (a KUBECONFIG of one file) or not (the second
// file of a list, a relative path); a file in no mounted folder, or one that names its way out
// of one, is not.
func TestContainerPath(t *testing.T) {
	t.Parallel()
	type mapped struct {
		Path, Folder string
		OK           bool
	}
	tests := []struct {
		name string
		vars map[string]string
		path string
		want mapped
	}{
		{name: "in the workspace, rewritten by the runner", vars: containerVars, path: "/github/workspace/gha-kubeconfig-1a2b",
			want: mapped{"/github/workspace/gha-kubeconfig-1a2b", "the workspace", true}},
		{name: "in the workspace, the runner's path", vars: containerVars, path: "/home/runner/work/deploy/deploy/.kube/config",
			want: mapped{"/github/workspace/.kube/config", "the workspace", true}},
		{name: "relative: from the workspace", vars: containerVars, path: "kc/prod.yaml",
			want: mapped{"/github/workspace/kc/prod.yaml", "the workspace", true}},
		{name: "in RUNNER_TEMP, rewritten by the runner", vars: containerVars, path: "/github/runner_temp/kubeconfig_1700000000000",
			want: mapped{"/github/runner_temp/kubeconfig_1700000000000", "RUNNER_TEMP", true}},
		{name: "in RUNNER_TEMP, the runner's path", vars: containerVars, path: "/home/runner/work/_temp/kubeconfig_1700000000000",
			want: mapped{"/github/runner_temp/kubeconfig_1700000000000", "RUNNER_TEMP", true}},
		{name: "in RUNNER_TEMP of a runner that does not mount it", vars: olderRunnerVars, path: "/home/runner/work/_temp/kubeconfig_1700000000000"},
		{name: "in the runner's home", vars: containerVars, path: "/home/runner/.kube/config"},
		{name: "in the job's folder, beside the workspace", vars: containerVars, path: "/home/runner/work/deploy/kubeconfig"},
		{name: "up and out of the workspace", vars: containerVars, path: "/github/workspace/../file_commands/set_env_1"},
		{name: "relative, up and out", vars: containerVars, path: "../home/.kube/config"},
		{name: "a folder named like the workspace", vars: containerVars, path: "/github/workspace-x/kc"},
		{name: "the workspace's runner path unknown (no GITHUB_REPOSITORY)", vars: with(containerVars, "GITHUB_REPOSITORY", ""),
			path: "/home/runner/work/deploy/deploy/kc"},
		{name: "the job's folder unknown: RUNNER_TEMP by the container's path only", vars: with(containerVars, "RUNNER_WORKSPACE", ""),
			path: "/home/runner/work/_temp/kc"},
		{name: "on a host: the workspace", vars: hostVars, path: "/home/runner/work/deploy/deploy/kc",
			want: mapped{"/home/runner/work/deploy/deploy/kc", "the workspace", true}},
		{name: "on a host: RUNNER_TEMP", vars: hostVars, path: "/home/runner/work/_temp/kc",
			want: mapped{"/home/runner/work/_temp/kc", "RUNNER_TEMP", true}},
		{name: "on a host: elsewhere", vars: hostVars, path: "/home/runner/.kube/config"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			getenv := func(k string) string { return tt.vars[k] }
			path, folder, ok := containerPath(tt.path, runnerFolders(getenv, tt.vars["GITHUB_WORKSPACE"]))
			if diff := cmp.Diff(tt.want, mapped{path, folder.name, ok}); diff != "" {
				t.Errorf("containerPath(%q) (-want +got):\n%s", tt.path, diff)
			}
		})
	}
}

// TestLoadRunnerKubeconfig: given no clusters, the action reads the KUBECONFIG an earlier step
// exported when the runner mounts it into its container, as a repository's kubeconfig (it may
// refer only to files in its own folder); otherwise the error names the file, why the action
// cannot read it, and the setup action of this action's repository and release to use instead.
func TestLoadRunnerKubeconfig(t *testing.T) {
	t.Parallel()
	ab := yamlOf(t, newConfig("a", "b"))
	outsideCA := newConfig("a")
	outsideCA.Clusters["a"].CertificateAuthorityData = nil
	outsideCA.Clusters["a"].CertificateAuthority = "/etc/kubernetes/ca.crt"
	const cannotRead = `no clusters, and KUBECONFIG names %q, a file on the runner that this container action cannot read: the runner mounts only %s into it; ` +
		`run the CLI on the runner instead (uses: %s, then run: app-status verify ...), write the kubeconfig into the workspace, ` +
		`or set the clusters input (one name=source per line, e.g. prod=env:PROD_KUBECONFIG) or the kubeconfig input`
	const both = "the workspace (/github/workspace) and RUNNER_TEMP (/github/runner_temp)"
	tests := []struct {
		name    string
		vars    map[string]string
		files   map[string]string
		want    []summary
		wantErr string
		// wantInvalid is in the Invalid message of every invalid cluster.
		wantInvalid string
	}{{
		name:  "in the workspace (get-gke-credentials)",
		vars:  with(containerVars, "KUBECONFIG", "/github/workspace/gha-kubeconfig-1a2b"),
		files: map[string]string{"/github/workspace/gha-kubeconfig-1a2b": ab},
		want:  []summary{ok("a", "context:a", "a"), ok("b", "context:b", "b")},
	}, {
		name:  "in RUNNER_TEMP (azure/k8s-set-context)",
		vars:  with(containerVars, "KUBECONFIG", "/github/runner_temp/kubeconfig_1700000000000"),
		files: map[string]string{"/github/runner_temp/kubeconfig_1700000000000": ab},
		want:  []summary{ok("a", "context:a", "a"), ok("b", "context:b", "b")},
	}, {
		name:  "relative, from the workspace, and an empty element",
		vars:  with(containerVars, "KUBECONFIG", ":kc/all.yaml:"),
		files: map[string]string{"/github/workspace/kc/all.yaml": ab},
		want:  []summary{ok("a", "context:a", "a"), ok("b", "context:b", "b")},
	}, {
		name:        "a repository's rules: no file outside its folder",
		vars:        with(containerVars, "KUBECONFIG", "/github/workspace/kc.yaml"),
		files:       map[string]string{"/github/workspace/kc.yaml": yamlOf(t, outsideCA), "/etc/kubernetes/ca.crt": fakeCA},
		want:        []summary{{Name: "a", Source: "context:a", Context: "a", Invalid: true}},
		wantInvalid: "a kubeconfig from the repository (KUBECONFIG \"/github/workspace/kc.yaml\") may refer only to files in its own folder",
	}, {
		name:    "in the runner's home (aws eks update-kubeconfig)",
		vars:    with(containerVars, "KUBECONFIG", "/home/runner/.kube/config", "GITHUB_ACTION_REPOSITORY", "org/app-status-action", "GITHUB_ACTION_REF", "v1.4.2"),
		wantErr: fmt.Sprintf(cannotRead, "/home/runner/.kube/config", both, "org/app-status-action/setup@v1.4.2"),
	}, {
		name:    "in RUNNER_TEMP of a runner that does not mount it",
		vars:    with(olderRunnerVars, "KUBECONFIG", "/home/runner/work/_temp/kubeconfig_1700000000000", "GITHUB_ACTION_REPOSITORY", "org/app-status-action", "GITHUB_ACTION_REF", "v1"),
		wantErr: fmt.Sprintf(cannotRead, "/home/runner/work/_temp/kubeconfig_1700000000000", "the workspace (/github/workspace); runners before v2.331 do not mount RUNNER_TEMP", "org/app-status-action/setup@v1"),
	}, {
		name:    "the action used at a branch, from a repository that is not known",
		vars:    with(containerVars, "KUBECONFIG", "/home/runner/.kube/config", "GITHUB_ACTION_REF", "main"),
		wantErr: fmt.Sprintf(cannotRead, "/home/runner/.kube/config", both, "<owner>/app-status-action/setup@v1"),
	}, {
		name:    "the second file of a list outside",
		vars:    with(containerVars, "KUBECONFIG", "/github/workspace/kc.yaml:/home/runner/.kube/config"),
		files:   map[string]string{"/github/workspace/kc.yaml": ab},
		wantErr: fmt.Sprintf(cannotRead, "/home/runner/.kube/config", both, "<owner>/app-status-action/setup@v1"),
	}, {
		name: "several files",
		vars: with(containerVars, "KUBECONFIG", "/github/workspace/kc.yaml:/home/runner/work/_temp/kubeconfig_1"),
		wantErr: `no clusters, and KUBECONFIG names 2 files ("/github/workspace/kc.yaml", "/home/runner/work/_temp/kubeconfig_1"): the action reads one kubeconfig; ` +
			`export one file, or name a cluster per file in the clusters input (NAME1=file:kc.yaml, NAME2=file:/github/runner_temp/kubeconfig_1)`,
	}, {
		name:    "not written",
		vars:    with(containerVars, "KUBECONFIG", "/home/runner/work/deploy/deploy/kc.yaml"),
		wantErr: `no clusters, and KUBECONFIG "/home/runner/work/deploy/deploy/kc.yaml" (/github/workspace/kc.yaml here) does not exist: did the step that exported it write it there?`,
	}, {
		name:    "not a kubeconfig",
		vars:    with(containerVars, "KUBECONFIG", "/github/workspace/kc.yaml"),
		files:   map[string]string{"/github/workspace/kc.yaml": "not base64 and not yaml"},
		wantErr: `KUBECONFIG "/github/workspace/kc.yaml": not a kubeconfig (neither YAML nor base64 of one)`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := fakeEnv{vars: tt.vars, files: tt.files}.env()
			env.Workspace, env.CI = tt.vars["GITHUB_WORKSPACE"], true
			got, _, err := Load(Input{}, env)
			if diff := cmp.Diff(tt.wantErr, errString(err)); diff != "" {
				t.Errorf("Load() error (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want, summarize(got)); diff != "" {
				t.Errorf("Load() clusters (-want +got):\n%s", diff)
			}
			for _, c := range got {
				if c.Invalid != "" && !strings.Contains(c.Invalid, tt.wantInvalid) {
					t.Errorf("cluster %s: %s\nwant %q", c.Name, c.Invalid, tt.wantInvalid)
				}
			}
		})
	}
}

// TestLoadRunnerKubeconfigLinks: a KUBECONFIG in the workspace that links out of it (a pull
// request may commit the link) is not read.
func TestLoadRunnerKubeconfigLinks(t *testing.T) {
	t.Parallel()
	workspace, elsewhere := t.TempDir(), t.TempDir()
	outside := filepath.Join(elsewhere, "config")
	if err := os.WriteFile(outside, []byte(yamlOf(t, newConfig("a"))), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(workspace, "kc.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(workspace, "real.yaml"), []byte(yamlOf(t, newConfig("b"))), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("real.yaml", filepath.Join(workspace, "inside.yaml")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		kubeconfig string
		want       []summary
		wantErr    string
	}{
		{kubeconfig: filepath.Join(workspace, "inside.yaml"), want: []summary{ok("b", "context:b", "b")}},
		{kubeconfig: filepath.Join(workspace, "kc.yaml"), wantErr: fmt.Sprintf(`no clusters, and KUBECONFIG %q is not read: it links to a file outside the workspace (%s); write the kubeconfig itself there`,
			filepath.Join(workspace, "kc.yaml"), workspace)},
	}
	for _, tt := range tests {
		env := Env{Getenv: func(k string) string { return map[string]string{"KUBECONFIG": tt.kubeconfig}[k] }, ReadFile: os.ReadFile, Workspace: workspace, CI: true}
		got, _, err := Load(Input{}, env)
		if diff := cmp.Diff(tt.wantErr, errString(err)); diff != "" {
			t.Errorf("KUBECONFIG=%s: Load() error (-want +got):\n%s", tt.kubeconfig, diff)
		}
		if diff := cmp.Diff(tt.want, summarize(got)); diff != "" {
			t.Errorf("KUBECONFIG=%s: Load() clusters (-want +got):\n%s", tt.kubeconfig, diff)
		}
	}
}
