package cli

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCLIFlagsDocumented: every flag of `app-status verify` is in docs/cli.md's flag table
// (`--name`, or `-x` for a one-letter flag).
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
	newFlagSet("verify", &o).VisitAll(func(f *flag.Flag) {
		name := "`--" + f.Name
		if len(f.Name) == 1 {
			name = "-" + f.Name
		}
		if !strings.Contains(table.String(), name) {
			t.Errorf("docs/cli.md's flag table has no row naming %s", strings.TrimPrefix(name, "`"))
		}
	})
}
