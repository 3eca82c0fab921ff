package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReportFilesInCICloneFollowNoLink (attacker): in a CI job whose working folder is the
// repository's clone, a report file the command line names (as GitLab's component, Tekton's
// Task and the Jenkins example do) may be a symbolic link the repository committed, here to
// its executable deploy.sh, or lie in a committed folder link, named by a relative path or by
// an absolute one in the clone ($CI_PROJECT_DIR/reports/...): it is never written through,
// the run says why, and deploy.sh is unchanged. At a user's terminal, a link is written
// through on purpose.
func TestReportFilesInCICloneFollowNoLink(t *testing.T) {
	const script = "#!/bin/sh\necho deploying\n"
	tests := []struct {
		name      string
		vars      map[string]string
		args      []string // report file flags; LINK is the committed link to deploy.sh
		wantError string   // in stderr; empty: written through the link
	}{{
		name:      "GitLab, the component's flags",
		vars:      map[string]string{"GITLAB_CI": "true"},
		args:      []string{"--dotenv-file", "app-status.env", "--junit-file", "app-status-junit.xml", "--summary-file", "LINK"},
		wantError: "write --summary-file: write app-status-summary.md: it is a symbolic link",
	}, {
		name:      "Jenkins, the example's JUnit report",
		vars:      map[string]string{"JENKINS_URL": "https://jenkins.example.com/"},
		args:      []string{"--junit-file", "LINK"},
		wantError: "write --junit-file: write app-status-summary.md: it is a symbolic link",
	}, {
		name:      "Tekton, a report workspace holding the clone",
		args:      []string{"--tekton-results", "RESULTS", "--json-file", "WS/LINK"},
		wantError: "write --json-file: write WS/app-status-summary.md: it is a symbolic link",
	}, {
		name:      "any CI",
		vars:      map[string]string{"CI": "true"},
		args:      []string{"--dotenv-file", "LINK"},
		wantError: "write --dotenv-file: write app-status-summary.md: it is a symbolic link",
	}, {
		name:      "a committed folder link",
		vars:      map[string]string{"CI": "true"},
		args:      []string{"--summary-file", "reports/deploy.sh"},
		wantError: "write --summary-file: write reports/deploy.sh: its folder reports is a symbolic link",
	}, {
		name:      "a committed folder link, by an absolute path in the clone",
		vars:      map[string]string{"GITLAB_CI": "true"},
		args:      []string{"--summary-file", "WS/reports/deploy.sh"},
		wantError: "write --summary-file: write WS/reports/deploy.sh: its folder WS/reports is a symbolic link",
	}, {
		name:      "a committed folder link, by an absolute path in the clone, JSON",
		vars:      map[string]string{"JENKINS_URL": "https://jenkins.example.com/"},
		args:      []string{"--json-file", "WS/reports/deploy.sh"},
		wantError: "write --json-file: write WS/reports/deploy.sh: its folder WS/reports is a symbolic link",
	}, {
		name: "a user's terminal",
		args: []string{"--summary-file", "LINK"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			t.Chdir(dir)
			elsewhere := t.TempDir()
			if err := os.Mkdir("results", 0o755); err != nil {
				t.Fatal(err)
			}
			for _, d := range []string{dir, elsewhere} {
				if err := os.WriteFile(filepath.Join(d, "deploy.sh"), []byte(script), 0o700); err != nil {
					t.Fatal(err)
				}
			}
			for link, target := range map[string]string{"app-status-summary.md": "deploy.sh", "reports": elsewhere} {
				if err := os.Symlink(target, link); err != nil {
					t.Fatal(err)
				}
			}
			args := []string{"verify", "--quiet"} // no --resource: bad input, reported in the files
			for _, a := range tt.args {
				args = append(args, strings.NewReplacer("LINK", "app-status-summary.md", "RESULTS", filepath.Join(dir, "results"), "WS", dir).Replace(a))
			}
			f := newFakeEnv(t, tt.vars)
			delete(f.vars, "GITHUB_ACTIONS")
			if code := Run(context.Background(), args, f.env()); code != 2 {
				t.Errorf("exit %d, want 2 (bad input)\n%s", code, f.stderr.String())
			}
			want := strings.ReplaceAll(tt.wantError, "WS", dir)
			for _, target := range []string{"deploy.sh", filepath.Join(elsewhere, "deploy.sh")} {
				data, err := os.ReadFile(target)
				if err != nil {
					t.Fatal(err)
				}
				if changed := string(data) != script; changed != (want == "" && target == "deploy.sh") {
					t.Errorf("%s changed: %t, holding %.60q\n%s", target, changed, data, f.stderr.String())
				}
			}
			if want != "" && !strings.Contains(f.stderr.String(), want) {
				t.Errorf("stderr lacks %q:\n%s", want, f.stderr.String())
			}
		})
	}
}

// TestLinkedFolder: the folders checked for a committed link are those of a relative path,
// and those below the workspace of an absolute path in one (named as given or through the
// workspace's own link); the workspace itself may be a link the CI made, and a path in no
// workspace is not looked at.
func TestLinkedFolder(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	ws := filepath.Join(root, "clone")
	for _, d := range []string{filepath.Join(ws, "real"), filepath.Join(root, "outside", "real")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		filepath.Join(ws, "reports"):              filepath.Join(root, "outside"),
		filepath.Join(root, "ws-link"):            ws,
		filepath.Join(root, "outside", "reports"): filepath.Join(root, "outside", "real"),
	} {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	workspaces := []string{filepath.Join(root, "ws-link")}
	tests := []struct {
		name, path, want string
	}{
		{"in a real folder of the workspace", filepath.Join(ws, "real", "summary.md"), ""},
		{"through a folder link of the workspace", filepath.Join(ws, "reports", "summary.md"), filepath.Join(ws, "reports")},
		{"deeper, through a folder link", filepath.Join(ws, "reports", "real", "summary.md"), filepath.Join(ws, "reports")},
		{"through the workspace's own link, then a folder link", filepath.Join(root, "ws-link", "reports", "summary.md"), filepath.Join(root, "ws-link", "reports")},
		{"the workspace's own link alone", filepath.Join(root, "ws-link", "summary.md"), ""},
		{"in no workspace", filepath.Join(root, "outside", "reports", "summary.md"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := linkedFolder(tt.path, workspaces); got != tt.want {
				t.Errorf("linkedFolder(%q) = %q, want %q", tt.path, got, tt.want)
			}
		})
	}
}
