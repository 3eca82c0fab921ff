package cli

import (
	"github.com/spf13/pflag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestCLIFlagsDocumented: every flag of `app-status verify` and `app-status merge` is in
// docs/cli.md's flag table (`--name`, or `-x/--name` for one with a shorthand).
func TestCLIFlagsDocumented(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "cli.md"))
	if err != nil {
		t.Fatal(err)
	}
	var table strings.Builder
	for line := range strings.Lines(string(data)) {
		if strings.HasPrefix(line, "| `-") {
			table.WriteString(line)
		}
	}
	var o cliOptions
	var m mergeOptions
	for command, fs := range map[string]*pflag.FlagSet{"verify": newFlagSet("verify", &o), "merge": newMergeFlagSet(&m)} {
		fs.VisitAll(func(f *pflag.Flag) {
			name := "`--" + f.Name
			if f.Shorthand != "" {
				name = "`-" + f.Shorthand + "/--" + f.Name
			}
			if !strings.Contains(table.String(), name) {
				t.Errorf("docs/cli.md's flag table has no row naming %s's %s", command, strings.TrimPrefix(name, "`"))
			}
		})
	}
}

// repoPath is a path in the repository that a template or action.yml names in its text.
var repoPath = regexp.MustCompile(`\b(?:deploy|hack|docs|templates)/[A-Za-z0-9_./-]*[A-Za-z0-9_-]\.(?:yaml|yml|md|sh)\b`)

// TestNamedPathsExist: every file of the repository that action.yml or the GitLab component
// names in its descriptions exists.
func TestNamedPathsExist(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	for _, name := range []string{"action.yml", filepath.Join("templates", "app-status.yml")} {
		data, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range repoPath.FindAllString(string(data), -1) {
			if _, err := os.Stat(filepath.Join(root, path)); err != nil {
				t.Errorf("%s names %s: %v", name, path, err)
			}
		}
	}
}
