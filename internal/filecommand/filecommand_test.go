package filecommand

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The fixed delimiter go-githubactions writes every output with, which a value can forge.
const publicDelimiter = "_GitHubActionsFileCommandDelimeter_"

func TestEncodeRoundTrip(t *testing.T) {
	t.Parallel()
	forged := "x\n" + publicDelimiter + "\nstatus=success\nfailed-clusters=[]\nextra<<EOF\nowned\nEOF"
	tests := []struct {
		name    string
		outputs []Output
	}{
		{"simple", []Output{{"status", "failure"}, {"ready-clusters", `["a","b"]`}}},
		{"empty value", []Output{{"message", ""}}},
		{"multi-line value", []Output{{"report", "{\n  \"a\": 1\n}"}}},
		{"forged public delimiter", []Output{{"message", forged}, {"status", "failure"}}},
		{"key=value lines in a value", []Output{{"results", "status=success\nready-clusters=[\"x\"]"}}},
		{"a value that looks like a delimiter line", []Output{{"message", "ghadelimiter_00000000-0000-4000-8000-000000000000"}}},
		{"unicode and JSON", []Output{{"results", `[{"message":"ünïcode ✅ \u2028"}]`}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var b bytes.Buffer
			if err := Encode(&b, tt.outputs, nil); err != nil {
				t.Fatalf("Encode() error: %v", err)
			}
			got, err := ParseOutputs(b.String())
			if err != nil {
				t.Fatalf("the runner would not read it: %v\n%s", err, b.String())
			}
			want := map[string]string{}
			for _, o := range tt.outputs {
				want[o.Name] = o.Value
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("outputs read back (-want +got):\n%s", diff)
			}
		})
	}
}

// TestEncodeFreshDelimiters: no two values share a delimiter, and none is the public one.
func TestEncodeFreshDelimiters(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := Encode(&b, []Output{{"a", "1"}, {"b", "2"}, {"c", "3"}}, nil); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(b.String(), "\n") {
		if _, d, ok := strings.Cut(line, "<<"); ok {
			if seen[d] || d == publicDelimiter || !strings.HasPrefix(d, "ghadelimiter_") || len(d) != len("ghadelimiter_")+36 {
				t.Errorf("delimiter %q: want a fresh ghadelimiter_<uuid>", d)
			}
			seen[d] = true
		}
	}
	if len(seen) != 3 {
		t.Errorf("saw %d delimiters, want 3:\n%s", len(seen), b.String())
	}
}

// fixedRandom returns the same bytes every time: a delimiter a value can be made to contain.
type fixedRandom struct{}

func (fixedRandom) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 0xab
	}
	return len(p), nil
}

func TestEncodeRefuses(t *testing.T) {
	t.Parallel()
	known, err := newDelimiter(fixedRandom{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		outputs []Output
		want    string
		is      error
	}{
		{"value holds its delimiter", []Output{{"ok", "1"}, {"message", "a\n" + known + "\nstatus=success"}}, "output message: the value contains its delimiter", ErrDelimiterInValue},
		{"name with <<", []Output{{"a<<b", "1"}}, `output name "a<<b"`, nil},
		{"name with =", []Output{{"a=b", "1"}}, `output name "a=b"`, nil},
		{"name with a newline", []Output{{"a\nb", "1"}}, `output name "a\nb"`, nil},
		{"empty name", []Output{{"", "1"}}, `output name ""`, nil},
		{"carriage return", []Output{{"message", "a\rb"}}, "output message: the value contains a carriage return", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var b bytes.Buffer
			err := Encode(&b, tt.outputs, fixedRandom{})
			if err == nil || !strings.Contains(err.Error(), tt.want) || (tt.is != nil && !errors.Is(err, tt.is)) {
				t.Fatalf("Encode() error = %v, want %q", err, tt.want)
			}
			if b.Len() != 0 {
				t.Errorf("Encode() wrote %q though it refused an output", b.String())
			}
		})
	}
}

func TestWriteFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out, summary := filepath.Join(dir, "output"), filepath.Join(dir, "summary")
	for _, f := range []string{out, summary} {
		if err := os.WriteFile(f, []byte("earlier=1\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := WriteOutputs(out, []Output{{"status", "success"}}); err != nil {
		t.Fatal(err)
	}
	if err := AppendSummary(summary, "## done"); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(out)
	got, err := ParseOutputs(string(data))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"earlier": "1", "status": "success"}, got); diff != "" {
		t.Errorf("outputs (-want +got):\n%s", diff)
	}
	if data, _ := os.ReadFile(summary); string(data) != "earlier=1\n## done\n" {
		t.Errorf("summary = %q, want the markdown appended with a newline", data)
	}
	if err := WriteOutputs(filepath.Join(dir, "missing", "output"), []Output{{"a", "b"}}); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("WriteOutputs(a path that is not there) = %v, want an error naming it", err)
	}
}

// FuzzEncode: whatever the values, the file reads back to exactly the outputs, or Encode
// refuses and writes nothing.
func FuzzEncode(f *testing.F) {
	f.Add("failure", `[{"cluster":"a"}]`, "a: message")
	f.Add("x\n"+publicDelimiter+"\nstatus=success", "", "\r\n")
	f.Add("ghadelimiter_", "<<EOF", "=")
	f.Fuzz(func(t *testing.T, status, results, message string) {
		outputs := []Output{{"status", status}, {"results", results}, {"message", message}}
		var b bytes.Buffer
		if err := Encode(&b, outputs, nil); err != nil {
			if b.Len() != 0 {
				t.Fatalf("Encode refused (%v) but wrote %q", err, b.String())
			}
			return
		}
		got, err := ParseOutputs(b.String())
		if err != nil {
			t.Fatalf("the runner would not read it: %v\n%q", err, b.String())
		}
		want := map[string]string{"status": status, "results": results, "message": message}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("outputs read back (-want +got):\n%s", diff)
		}
	})
}
