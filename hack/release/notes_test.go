package release

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

const changelog = `# Changelog

Intro, with a [link](https://keepachangelog.com/en/1.1.0/).

## [Unreleased]

### Added

- something not released yet

## [1.5.0-rc.1] - 2026-12-10

- a pre-release

## [1.4.20] - 2026-11-20

- not 1.4.2

## [1.4.2] - 2026-12-01

### Fixed

- a fix | with a pipe

### Security

- a hardening

## [1.4.1] - 2026-11-01


- the last one, between blank lines


## [1.3.9] - 2026-10-15

- readiness as [kstatus] computes it

[kstatus]: https://github.com/kubernetes-sigs/cli-utils

## [1.3.8] - 2026-10-10

A changelog's heading, as an example:

` + "```" + `markdown
## [1.0.0] - 2026-01-01
` + "```" + `

- after the example

## [1.4.0] - 2026-10-01

[Unreleased]: https://github.com/org/app-status-action/compare/v1.4.2...HEAD
[1.4.2]: https://github.com/org/app-status-action/compare/v1.4.1...v1.4.2
`

// notes runs notes.sh as the release workflow does, on a changelog of the given text.
func notes(t *testing.T, text, tag string) (stdout, stderr string, err error) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "CHANGELOG.md")
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	cmd := exec.Command("./notes.sh", tag, file)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.String(), errOut.String(), err
}

// TestNotes: a release's notes are its section of the changelog, whole, and nothing else.
func TestNotes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		tag, want string
	}{
		{tag: "v1.4.2", want: "### Fixed\n\n- a fix | with a pipe\n\n### Security\n\n- a hardening\n"},
		{tag: "v1.5.0-rc.1", want: "- a pre-release\n"},
		{tag: "v1.4.20", want: "- not 1.4.2\n"},
		{tag: "v1.4.1", want: "- the last one, between blank lines\n"},
		{tag: "v1.3.9", want: "- readiness as [kstatus] computes it\n\n[kstatus]: https://github.com/kubernetes-sigs/cli-utils\n"},
		{tag: "v1.3.8", want: "A changelog's heading, as an example:\n\n```markdown\n## [1.0.0] - 2026-01-01\n```\n\n- after the example\n"},
	}
	for _, tt := range tests {
		t.Run(tt.tag, func(t *testing.T) {
			t.Parallel()
			got, stderr, err := notes(t, changelog, tt.tag)
			if err != nil {
				t.Fatalf("notes.sh %s: %v: %s", tt.tag, err, stderr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("notes.sh %s (-want +got):\n%s", tt.tag, diff)
			}
		})
	}
}

// TestNotesRefuses: a tag with no section, or an empty one, or no version tag at all, fails
// with a message, so the release stops before anything is published.
func TestNotesRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, text, tag, wantErr string
		wantCode                 int
	}{
		{name: "no section", text: changelog, tag: "v1.3.0", wantErr: `has no section "## [1.3.0]"`, wantCode: 1},
		{name: "empty section", text: changelog, tag: "v1.4.0", wantErr: `the section "## [1.4.0]" of`, wantCode: 1},
		{name: "only unreleased", text: "# Changelog\n\n## [Unreleased]\n\n- a\n", tag: "v1.0.0", wantErr: "has no section", wantCode: 1},
		{name: "not a version", text: changelog, tag: "main", wantErr: "is not a version tag", wantCode: 2},
		{name: "short version", text: changelog, tag: "v1", wantErr: "is not a version tag", wantCode: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, stderr, err := notes(t, tt.text, tt.tag)
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != tt.wantCode {
				t.Fatalf("notes.sh %s = %q, %v, want exit code %d", tt.tag, got, err, tt.wantCode)
			}
			if got != "" || !strings.Contains(stderr, tt.wantErr) {
				t.Errorf("notes.sh %s printed %q and said %q, want nothing and %q", tt.tag, got, stderr, tt.wantErr)
			}
		})
	}
}

// TestNotesOfTheChangelog: the repository's CHANGELOG.md is read by the script: its Unreleased
// section is the next release's notes once it is moved under a version's heading.
func TestNotesOfTheChangelog(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("..", "..", "CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	if !strings.Contains(text, "\n## [Unreleased]\n") {
		t.Fatal("CHANGELOG.md has no ## [Unreleased] section")
	}
	released := strings.Replace(text, "\n## [Unreleased]\n", "\n## [Unreleased]\n\n## [9.9.9] - 2099-01-01\n", 1)
	got, stderr, err := notes(t, released, "v9.9.9")
	if err != nil {
		t.Fatalf("notes.sh v9.9.9 on CHANGELOG.md: %v: %s", err, stderr)
	}
	if !strings.HasPrefix(got, "### ") || strings.Contains(got, "\n## ") {
		t.Errorf("notes.sh v9.9.9 on CHANGELOG.md = %q, want the section's ### groups and no other section", got)
	}
}

// TestReleaseUsesTheChangelog: the release workflow writes the tag's notes with notes.sh before
// goreleaser runs and hands them to it, and .goreleaser.yaml does not disable its changelog
// step, which is the one that reads --release-notes.
func TestReleaseUsesTheChangelog(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("..", "..", ".github", "workflows", "release.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		Jobs map[string]struct {
			Steps []struct {
				Uses string            `json:"uses"`
				Run  string            `json:"run"`
				With map[string]string `json:"with"`
			} `json:"steps"`
		} `json:"jobs"`
	}
	if err := yaml.Unmarshal(data, &wf); err != nil {
		t.Fatalf("release.yml: %v", err)
	}
	const (
		extract = `hack/release/notes.sh "$TAG" > "$RUNNER_TEMP/release-notes.md"`
		pass    = "--release-notes ${{ runner.temp }}/release-notes.md"
	)
	notesAt, releaseAt := -1, -1
	for i, s := range wf.Jobs["release"].Steps {
		if strings.Contains(s.Run, extract) {
			notesAt = i
		}
		if strings.HasPrefix(s.Uses, "goreleaser/goreleaser-action@") {
			releaseAt = i
			if !strings.Contains(s.With["args"], pass) {
				t.Errorf("release.yml: goreleaser's args = %q, want %q in them", s.With["args"], pass)
			}
		}
	}
	if notesAt < 0 || releaseAt < 0 || notesAt > releaseAt {
		t.Errorf("release.yml: the step running %q is at %d and goreleaser at %d, want the notes first", extract, notesAt, releaseAt)
	}

	data, err = os.ReadFile(filepath.Join("..", "..", ".goreleaser.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Changelog struct {
			Disable any `json:"disable"`
		} `json:"changelog"`
	}
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		t.Fatalf(".goreleaser.yaml: %v", err)
	}
	if cfg.Changelog.Disable != nil && cfg.Changelog.Disable != false && cfg.Changelog.Disable != "false" {
		t.Errorf(".goreleaser.yaml: changelog.disable = %v: goreleaser would skip the release notes file too", cfg.Changelog.Disable)
	}
}
