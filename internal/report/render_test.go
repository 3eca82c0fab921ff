package report

import (
	"bytes"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// renderGFM renders markdown as GitHub does, with cmark-gfm and GitHub's extensions
// (hack/install-packages.sh installs it, pinned).
func renderGFM(t *testing.T, md string) string {
	t.Helper()
	bin, err := exec.LookPath("cmark-gfm")
	if err != nil {
		t.Fatalf("cmark-gfm is not installed: run hack/install-packages.sh (or install Debian's cmark-gfm): %v", err)
	}
	cmd := exec.Command(bin, "--unsafe", "-e", "table", "-e", "strikethrough", "-e", "autolink", "-e", "tagfilter")
	cmd.Stdin = strings.NewReader(md)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("cmark-gfm: %v: %s", err, stderr.String())
	}
	return out.String()
}

var (
	tableRE = regexp.MustCompile(`(?s)<table>.*?</table>`)
	rowRE   = regexp.MustCompile(`<tr>`)
	tagRE   = regexp.MustCompile(`<[^>]+>`)
)

// TestSummaryAsGitHubRendersIt reads the fleet summaries as a person would, rendered as
// GitHub renders them: the counts come first, the first table has a row per cluster that is
// not Current (or per group above the threshold) before any Current one, and each failure's
// message appears once.
func TestSummaryAsGitHubRendersIt(t *testing.T) {
	t.Parallel()
	const failure = "has timed out progressing"
	tests := []struct {
		name      string
		fixture   string
		firstRows int    // rows of the first table, its header included
		rollup    string // the counts, in the text before the first table
		failures  int    // clusters whose message is shown (once each)
	}{
		{name: "3 clusters", fixture: "fleet-3", firstRows: 4, rollup: "1 ❌ Failed (not-progressing) · 2 ✅ Current", failures: 1},
		{name: "50 clusters", fixture: "fleet-50", firstRows: 1 + 7 + 0, rollup: "4 ❌ Failed (not-progressing) · 3 🔌 Unreachable · 43 ✅ Current", failures: 4},
		{name: "1000 clusters", fixture: "fleet-1000", firstRows: 1 + 2, rollup: "20 ❌ Failed (not-progressing) · 100 🔌 Unreachable · 880 ✅ Current", failures: examplesPerGroup},
		{name: "several resources", fixture: "resources", firstRows: 5, rollup: "1 ❌ Failed (not-progressing) · 1 ⏸️ Suspended (flux-suspended) · 2 ✅ Current", failures: 1},
	}
	runs := map[string]fixture{}
	for _, f := range fleetFixtures() {
		runs[f.name] = f
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			md := Markdown(runs[tt.fixture].run, MarkdownOptions{})
			checkWellFormed(t, md, DefaultMaxBytes)
			html := renderGFM(t, md)
			first := tableRE.FindString(html)
			before, _, _ := strings.Cut(html, "<table>")
			text := strings.ReplaceAll(tagRE.ReplaceAllString(before, ""), "\u00a0", " ")
			if !strings.Contains(text, tt.rollup) {
				t.Errorf("before the first table: %q, want the rollup %q", text, tt.rollup)
			}
			if got := len(rowRE.FindAllString(first, -1)); got != tt.firstRows {
				t.Errorf("first table has %d rows, want %d:\n%s", got, tt.firstRows, first)
			}
			if i, j := strings.Index(first, "Failed"), strings.Index(first, "✅"); i < 0 || (j >= 0 && j < i && tt.fixture != "resources") {
				t.Errorf("the first table does not list what failed before what is Current:\n%s", first)
			}
			if got := strings.Count(html, failure); got != tt.failures {
				t.Errorf("the failure message appears %d times, want %d (once per cluster shown)", got, tt.failures)
			}
			if strings.Count(html, "<details>") != strings.Count(html, "</details>") {
				t.Errorf("unbalanced <details> in the rendered summary")
			}
		})
	}
}
