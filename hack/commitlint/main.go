// Command commitlint checks a commit's message against the project's convention: a subject
// `area: imperative summary` of at most 72 characters, the area in lowercase letters, digits
// and /._- (a package, a folder or a topic: verify, internal/flux, ci, docs), no period at its
// end, and a blank second line when there is a body; git's own `Revert "SUBJECT"` passes.
// Merge commits (two parents) are not checked. make lint runs it on the latest commit, CI's
// unit job on a pull request's title too:
//
//	go -C hack run ./commitlint            # HEAD
//	go -C hack run ./commitlint -rev HEAD~3
//	go -C hack run ./commitlint -title "$PR_TITLE"
//
// In a shallow clone the parents of the oldest fetched commit are unknown, so a merge commit
// there is told by its subject: only GitHub's own form for a pull request's merge commit,
// `Merge <sha> into <sha>`, passes unchecked (a CI checkout of depth 1 of that commit; the
// unit job checks the pull request's own head commit). Any other single-parent commit whose
// subject starts with "Merge " is checked as any commit.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "commitlint: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("commitlint", flag.ContinueOnError)
	rev := fs.String("rev", "HEAD", "the commit to check")
	dir := fs.String("C", ".", "the repository (any folder in it)")
	title := fs.String("title", "", "check this pull request title (as a subject) instead of a commit")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	if *title != "" {
		return lintTitle(*title, out)
	}
	return lintCommit(ctx, *dir, *rev, out)
}

// lintTitle checks a pull request's title by the rules of a commit's subject: a repository
// that squashes makes it the commit's subject.
func lintTitle(title string, out io.Writer) error {
	if strings.ContainsAny(title, "\r\n") {
		return errors.New("the pull request's title holds a line break")
	}
	if problems := check(title); len(problems) > 0 {
		return fmt.Errorf("the pull request's title %q does not follow the convention of a commit's subject (`area: imperative summary`, at most %d characters):\n  %s",
			title, maxSubject, strings.Join(problems, "\n  "))
	}
	fmt.Fprintf(out, "commitlint: the pull request's title %q: ok\n", title)
	return nil
}

// githubMerge is the subject of the merge commit GitHub makes for a pull request's checks.
var githubMerge = regexp.MustCompile(`^Merge [0-9a-f]{40} into [0-9a-f]{40}$`)

// lintCommit checks the message of commit rev of the repository at dir and says on out what it
// checked.
func lintCommit(ctx context.Context, dir, rev string, out io.Writer) error {
	sha, err := git(ctx, dir, "rev-parse", "--verify", "--end-of-options", rev+"^{commit}")
	if err != nil {
		return err
	}
	sha = strings.TrimSpace(sha)
	parents, err := git(ctx, dir, "log", "-1", "--format=%P", sha)
	if err != nil {
		return err
	}
	msg, err := git(ctx, dir, "log", "-1", "--format=%B", sha)
	if err != nil {
		return err
	}
	subject, _, _ := strings.Cut(msg, "\n")
	short := sha[:min(len(sha), 12)]
	if len(strings.Fields(parents)) > 1 {
		fmt.Fprintf(out, "commitlint: %s is a merge commit: not checked\n", short)
		return nil
	}
	edge, err := shallowEdge(ctx, dir, sha)
	if err != nil {
		return err
	}
	if edge && githubMerge.MatchString(strings.TrimSpace(subject)) {
		fmt.Fprintf(out, "commitlint: %s is at the edge of a shallow clone and its subject is GitHub's merge's (%q): not checked\n", short, subject)
		return nil
	}
	if problems := check(msg); len(problems) > 0 {
		return fmt.Errorf("commit %s %q does not follow the convention (`area: imperative summary`, at most %d characters, a blank line, then the body):\n  %s",
			short, subject, maxSubject, strings.Join(problems, "\n  "))
	}
	fmt.Fprintf(out, "commitlint: %s %q: ok\n", short, subject)
	return nil
}

// shallowEdge reports whether sha is one of the oldest commits of a shallow clone, whose
// parents git does not know.
func shallowEdge(ctx context.Context, dir, sha string) (bool, error) {
	path, err := git(ctx, dir, "rev-parse", "--git-path", "shallow")
	if err != nil {
		return false, err
	}
	path = strings.TrimSpace(path)
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read the shallow clone's list: %w", err)
	}
	for line := range strings.Lines(string(data)) {
		if strings.TrimSpace(line) == sha {
			return true, nil
		}
	}
	return false, nil
}

// git runs git in dir and returns its standard output.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}
