package main

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// repo makes a repository whose main branch holds a good commit, then a branch with a bad
// commit merged into it with git's own merge message, and returns its folder.
func repo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	run := func(args ...string) {
		t.Helper()
		cmd := exec.CommandContext(t.Context(), "git", args...)
		cmd.Dir = dir
		cmd.Env = append(cmd.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
			"GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@example.com", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	run("init", "-q", "-b", "main")
	run("commit", "-q", "--allow-empty", "-m", "verify: park hung clusters", "-m", "They hung.")
	run("tag", "good")
	run("checkout", "-q", "-b", "topic")
	run("commit", "-q", "--allow-empty", "-m", "Reread: the hint names the CLI's --shard")
	run("tag", "bad")
	run("checkout", "-q", "main")
	run("commit", "-q", "--allow-empty", "-m", "docs: say so")
	run("merge", "-q", "--no-ff", "--no-edit", "topic")
	run("tag", "merge")
	run("commit", "-q", "--allow-empty", "-m", `Revert "verify: park hung clusters"`, "-m", "This reverts commit 0123.")
	run("tag", "revert")
	run("commit", "-q", "--allow-empty", "-m", "Merge the topic's fixes")
	run("tag", "merge-subject")
	// GitHub's merge commit of a pull request, as a CI checkout fetches it.
	run("checkout", "-q", "-b", "pr", "good")
	run("merge", "-q", "--no-ff", "-m", "Merge 0123456789abcdef0123456789abcdef01234567 into 89abcdef0123456789abcdef0123456789abcdef", "topic")
	run("tag", "github-merge")
	// A clone of depth 1: the merge commits' parents are unknown there.
	run("clone", "-q", "--depth", "1", "--branch", "main", "file://"+dir, "shallow")
	run("-C", "shallow", "fetch", "-q", "--depth", "1", "origin", "tag", "bad", "tag", "merge", "tag", "github-merge")
	return dir
}

func TestLintCommit(t *testing.T) {
	t.Parallel()
	dir := repo(t)
	tests := []struct {
		name    string
		dir     string
		rev     string
		wantOut string
		wantErr string
	}{
		{name: "good", dir: dir, rev: "good", wantOut: `"verify: park hung clusters": ok`},
		{name: "bad", dir: dir, rev: "bad", wantErr: `"Reread: the hint names the CLI's --shard" does not follow the convention`},
		{name: "merge", dir: dir, rev: "merge", wantOut: "is a merge commit: not checked"},
		{name: "single parent, a merge's subject", dir: dir, rev: "merge-subject", wantErr: `"Merge the topic's fixes" does not follow the convention`},
		{name: "git's revert", dir: dir, rev: "revert", wantOut: `"Revert \"verify: park hung clusters\"": ok`},
		{name: "GitHub's merge at a shallow clone's edge", dir: filepath.Join(dir, "shallow"), rev: "github-merge", wantOut: "at the edge of a shallow clone"},
		{name: "git's merge at a shallow clone's edge", dir: filepath.Join(dir, "shallow"), rev: "merge", wantErr: `"Merge branch 'topic'" does not follow the convention`},
		{name: "single parent, a merge's subject, shallow", dir: filepath.Join(dir, "shallow"), rev: "HEAD", wantErr: "does not follow the convention"},
		{name: "bad at a shallow clone's edge", dir: filepath.Join(dir, "shallow"), rev: "bad", wantErr: "does not follow the convention"},
		{name: "no such commit", dir: dir, rev: "nothere", wantErr: "git rev-parse"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			err := lintCommit(t.Context(), tt.dir, tt.rev, &out)
			if tt.wantErr == "" && err != nil {
				t.Fatalf("lintCommit(%s) error: %v", tt.rev, err)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("lintCommit(%s) error = %v, want one containing %q", tt.rev, err, tt.wantErr)
			}
			if !strings.Contains(out.String(), tt.wantOut) {
				t.Errorf("lintCommit(%s) printed %q, want it to contain %q", tt.rev, out.String(), tt.wantOut)
			}
		})
	}
}

// TestLintTitle: a pull request's title is checked as a commit's subject.
func TestLintTitle(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		title, wantOut, wantErr string
	}{
		{title: "verify: park hung clusters", wantOut: "ok"},
		{title: `Revert "verify: park hung clusters"`, wantOut: "ok"},
		{title: "Update ci.yml", wantErr: "does not follow the convention of a commit's subject"},
		{title: "docs: say so.", wantErr: "the summary ends with a period"},
	} {
		var out bytes.Buffer
		err := run(t.Context(), []string{"-title", tt.title}, &out)
		if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
			t.Errorf("commitlint -title %q: error %v, want %q", tt.title, err, tt.wantErr)
		}
		if !strings.Contains(out.String(), tt.wantOut) {
			t.Errorf("commitlint -title %q printed %q, want %q", tt.title, out.String(), tt.wantOut)
		}
	}
}
