package report

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/org/app-status-action/internal/result"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// TestGolden renders every fixture in every format and compares it with
// testdata/<fixture>.golden.<ext>. Run `go test ./internal/report -update` to rewrite them,
// then read the diff.
func TestGolden(t *testing.T) {
	t.Parallel()
	renderers := []struct {
		ext    string
		render func(result.Run) ([]byte, error)
	}{
		{ext: "md", render: func(r result.Run) ([]byte, error) { return []byte(Markdown(r, MarkdownOptions{})), nil }},
		{ext: "txt", render: func(r result.Run) ([]byte, error) {
			var b bytes.Buffer
			err := Text(&b, r)
			return b.Bytes(), err
		}},
		{ext: "json", render: JSON},
		{ext: "junit.xml", render: func(r result.Run) ([]byte, error) {
			var b bytes.Buffer
			err := JUnit(&b, r)
			return b.Bytes(), err
		}},
		{ext: "comment.md", render: func(r result.Run) ([]byte, error) {
			return []byte(Comment(r, CommentOptions{
				Marker: CommentMarker("deploy", "", r.Resources), RunURL: "https://github.com/org/app/actions/runs/7/attempts/1",
				Now: time.Date(2026, 11, 24, 9, 30, 0, 0, time.UTC),
			})), nil
		}},
	}
	for _, f := range fixtures() {
		for _, r := range renderers {
			name := f.name + ".golden." + r.ext
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				got, err := r.render(f.run)
				if err != nil {
					t.Fatalf("render %s: %v", name, err)
				}
				checkGolden(t, filepath.Join("testdata", name), got)
			})
		}
	}
}

// checkGolden compares got with the golden file at path, or rewrites it under -update.
func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatalf("update golden file: %v", err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run with -update to create it): %v", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", path, diff)
	}
}
