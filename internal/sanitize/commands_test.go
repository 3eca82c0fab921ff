package sanitize

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/org/app-status-action/internal/testing/runnertest"
)

var hostileLines = runnertest.Hostile

// TestCommandsNeutralisesEveryForm: no hostile line stays a command for the runners, and a
// line with no command is left as it is.
func TestCommandsNeutralisesEveryForm(t *testing.T) {
	t.Parallel()
	for _, line := range hostileLines {
		if len(runnertest.Commands(line)) == 0 {
			t.Errorf("%q is no command to the runner: the test's line is wrong", line)
		}
		got := Commands(line)
		if cmds := runnertest.Commands(got); len(cmds) > 0 {
			t.Errorf("Commands(%q) = %q: still a command %+v", line, got, cmds)
		}
		if again := Commands(got); again != got {
			t.Errorf("Commands(Commands(%q)) = %q, want %q", line, again, got)
		}
	}
	for _, line := range []string{"", "plain text", "a: b :: c", "issue #12 and ## heading", "[   0.1s] ✔ prod: Current", "##", "time 12:30::45"} {
		if got := Commands(line); got != line {
			t.Errorf("Commands(%q) = %q, want it unchanged", line, got)
		}
	}
	if got, want := Commands("denied ##[stop-commands]tok"), "denied ## [stop-commands]tok"; got != want {
		t.Errorf("Commands() = %q, want %q", got, want)
	}
	if got, want := Commands("  ::add-mask::x"), "  : :add-mask::x"; got != want {
		t.Errorf("Commands() = %q, want %q", got, want)
	}
}

// TestCommandsWriter: complete lines are cleaned as they come, a line split over several
// writes is cleaned whole, and Flush writes the rest.
func TestCommandsWriter(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	w := NewCommandsWriter(&out)
	for _, part := range []string{"ok line\n  ::add", "-mask::x\nlog ##", "[warning]y\nlast ##[debug]z"} {
		if _, err := w.Write([]byte(part)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	want := "ok line\n  : :add-mask::x\nlog ## [warning]y\nlast ## [debug]z"
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("written (-want +got):\n%s", diff)
	}
	if cmds := runnertest.Commands(out.String()); len(cmds) > 0 {
		t.Errorf("commands left: %+v", cmds)
	}
}

func FuzzCommands(f *testing.F) {
	for _, s := range hostileLines {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := CommandsText(s)
		if cmds := runnertest.Commands(got); len(cmds) > 0 {
			t.Fatalf("CommandsText(%q) = %q: commands %+v", s, got, cmds)
		}
		if again := CommandsText(got); again != got {
			t.Fatalf("not idempotent: %q then %q", got, again)
		}
		if Commands(s) != s && !strings.Contains(s, "\n") && !mayHoldCommand([]byte(s)) {
			t.Fatalf("mayHoldCommand(%q) = false, but Commands changes it", s)
		}
		if strings.ReplaceAll(got, " ", "") != strings.ReplaceAll(s, " ", "") {
			t.Fatalf("CommandsText(%q) = %q: more than spaces changed", s, got)
		}
		// A CommandsWriter given s in pieces, of any size, writes what CommandsText gives.
		for _, size := range []int{1, 3, 1 + len(s)%7, 64} {
			var out bytes.Buffer
			w := NewCommandsWriter(&out)
			for rest := s; rest != ""; {
				n := min(size, len(rest))
				if _, err := w.Write([]byte(rest[:n])); err != nil {
					t.Fatal(err)
				}
				rest = rest[n:]
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			if out.String() != got {
				t.Fatalf("CommandsWriter, %d bytes a write: %q, CommandsText gives %q", size, out.String(), got)
			}
		}
	})
}

// TestCommandsJSON: in a JSON document, commands in strings are broken by escaping, so the
// document decodes to the very same values.
func TestCommandsJSON(t *testing.T) {
	t.Parallel()
	values := map[string]any{"message": hostileLines, "nested": map[string]string{"k": "##[add-mask]x", "::": "::error::y"}}
	for _, indent := range []string{"", "  "} {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", indent)
		if err := enc.Encode(values); err != nil {
			t.Fatal(err)
		}
		got := CommandsJSONText(buf.String())
		if cmds := runnertest.Commands(got); len(cmds) > 0 {
			t.Errorf("indent %q: commands left: %+v", indent, cmds)
		}
		var decoded map[string]any
		if err := json.Unmarshal([]byte(got), &decoded); err != nil {
			t.Fatalf("indent %q: %v\n%s", indent, err, got)
		}
		var want map[string]any
		_ = json.Unmarshal(buf.Bytes(), &want)
		if diff := cmp.Diff(want, decoded); diff != "" {
			t.Errorf("indent %q: decoded (-want +got):\n%s", indent, diff)
		}
	}
}

// TestMayHoldCommand: the quick look never passes over a line Commands would change.
func TestMayHoldCommand(t *testing.T) {
	t.Parallel()
	for _, line := range append(slices.Clone(hostileLines), "  : :x", "\x00::x", "\t::x") {
		if Commands(line) != line && !mayHoldCommand([]byte(line)) {
			t.Errorf("mayHoldCommand(%q) = false, but Commands changes it", line)
		}
	}
}

// BenchmarkJSONCommandsWriter: a report's worth of indented JSON lines through the cleaning
// every printed byte goes through (go test ./internal/sanitize -run '^$' -bench JSONCommandsWriter).
func BenchmarkJSONCommandsWriter(b *testing.B) {
	var doc strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&doc, "        {\n          \"id\": \"Deployment/app/web-%05d\",\n          \"status\": \"Current\",\n          \"message\": \"Deployment is available. Replicas: 1\"\n        },\n", i)
	}
	data := []byte(doc.String())
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		w := NewJSONCommandsWriter(io.Discard)
		for chunk := range slices.Chunk(data, 64<<10) {
			_, _ = w.Write(chunk)
		}
		_ = w.Flush()
	}
}
