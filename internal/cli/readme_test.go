package cli

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	yaml "go.yaml.in/yaml/v3"
)

var update = flag.Bool("update", false, "rewrite the README's input and output rows from action.yml")

// maxDescription bounds an action.yml description: one line the Marketplace shows in full, the
// details living in docs/.
const maxDescription = 160

// actionEntry is an input or output of action.yml, in the file's order.
type actionEntry struct {
	name, description, def string
	required               bool
}

// actionEntries returns the inputs or outputs of action.yml in the order the file lists them
// (sigs.k8s.io/yaml goes through JSON and loses it).
func actionEntries(t *testing.T, data []byte, section string) []actionEntry {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		t.Fatal("action.yml is not a mapping")
	}
	top := doc.Content[0].Content
	for i := 0; i+1 < len(top); i += 2 {
		if top[i].Value != section {
			continue
		}
		var out []actionEntry
		m := top[i+1].Content
		for j := 0; j+1 < len(m); j += 2 {
			e := actionEntry{name: m[j].Value}
			var fields struct {
				Description string `yaml:"description"`
				Default     string `yaml:"default"`
				Required    bool   `yaml:"required"`
			}
			if err := m[j+1].Decode(&fields); err != nil {
				t.Fatalf("action.yml %s.%s: %v", section, e.name, err)
			}
			e.description, e.def, e.required = fields.Description, fields.Default, fields.Required
			out = append(out, e)
		}
		return out
	}
	t.Fatalf("action.yml has no %s", section)
	return nil
}

// cell makes text one markdown table cell: a `|` would end the cell, even inside backticks.
func cell(s string) string {
	return strings.ReplaceAll(s, "|", `\|`)
}

// inputRows renders the inputs as the README's table, one line each.
func inputRows(inputs []actionEntry) string {
	var b strings.Builder
	b.WriteString("| input | default | description |\n|---|---|---|\n")
	for _, in := range inputs {
		def := ""
		switch {
		case in.required:
			def = "*(required)*"
		case in.def != "":
			def = "`" + cell(in.def) + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", in.name, def, cell(in.description))
	}
	return b.String()
}

// outputRows renders the outputs as the README's table, one line each.
func outputRows(outputs []actionEntry) string {
	var b strings.Builder
	b.WriteString("| output | description |\n|---|---|\n")
	for _, out := range outputs {
		fmt.Fprintf(&b, "| `%s` | %s |\n", out.name, cell(out.description))
	}
	return b.String()
}

// between replaces what lies between the lines <!-- name:start --> and <!-- name:end -->.
func between(doc []byte, name, body string) ([]byte, error) {
	start, end := []byte("<!-- "+name+":start -->\n"), []byte("<!-- "+name+":end -->")
	i := bytes.Index(doc, start)
	j := bytes.Index(doc, end)
	if i < 0 || j < i {
		return nil, fmt.Errorf("README.md has no %q ... %q markers", start, end)
	}
	i += len(start)
	out := append([]byte{}, doc[:i]...)
	out = append(out, body...)
	return append(out, doc[j:]...), nil
}

// TestReadmeInputs: the README's input and output tables are what action.yml says, one row
// each; `go test ./internal/cli -run TestReadmeInputs -update` rewrites them.
func TestReadmeInputs(t *testing.T) {
	root := filepath.Join("..", "..")
	action, err := os.ReadFile(filepath.Join(root, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	readmePath := filepath.Join(root, "README.md")
	readme, err := os.ReadFile(readmePath)
	if err != nil {
		t.Fatal(err)
	}
	inputs, outputs := actionEntries(t, action, "inputs"), actionEntries(t, action, "outputs")
	for _, e := range append(append([]actionEntry{}, inputs...), outputs...) {
		if strings.Contains(e.description, "\n") || len([]rune(e.description)) > maxDescription || e.description == "" {
			t.Errorf("action.yml %s: the description must be one line of at most %d characters, details in docs/: %q", e.name, maxDescription, e.description)
		}
	}
	want, err := between(readme, "inputs", inputRows(inputs))
	if err != nil {
		t.Fatal(err)
	}
	if want, err = between(want, "outputs", outputRows(outputs)); err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(readmePath, want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if diff := cmp.Diff(string(want), string(readme)); diff != "" {
		t.Errorf("README.md's input or output rows differ from action.yml; run go test ./internal/cli -run TestReadmeInputs -update (-want +got):\n%s", diff)
	}
}

func TestCell(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{in: "plain", want: "plain"},
		{in: "`text|json`", want: "`text\\|json`"},
		{in: "a | b | c", want: `a \| b \| c`},
	}
	for _, tt := range tests {
		if got := cell(tt.in); got != tt.want {
			t.Errorf("cell(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestInputRows(t *testing.T) {
	t.Parallel()
	got := inputRows([]actionEntry{
		{name: "resource", description: "The objects.", required: true},
		{name: "timeout", description: "How long, `10m` or `1h`.", def: "10m"},
		{name: "out", description: "`text|json`"},
	})
	want := "| input | default | description |\n|---|---|---|\n" +
		"| `resource` | *(required)* | The objects. |\n" +
		"| `timeout` | `10m` | How long, `10m` or `1h`. |\n" +
		"| `out` |  | `text\\|json` |\n"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("inputRows (-want +got):\n%s", diff)
	}
}
