package result

import (
	"bufio"
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// codeCell finds the codes in the first cell of a table row: "| `a` / `b` | ...".
var codeCell = regexp.MustCompile("`([a-z0-9-]+)`")

// docCodes returns the codes of a document's failure-code table (the table under its
// "Failure codes" heading), in the order of its rows.
func docCodes(t *testing.T, name string) []string {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var codes []string
	inSection, inTable := false, false
	s := bufio.NewScanner(f)
	for s.Scan() {
		line := s.Text()
		switch {
		case strings.HasPrefix(line, "#"):
			if inTable {
				return codes
			}
			inSection = strings.TrimSpace(strings.TrimLeft(line, "#")) == "Failure codes"
		case inSection && strings.HasPrefix(line, "|"):
			inTable = true
			first, _, _ := strings.Cut(strings.TrimPrefix(line, "|"), "|")
			for _, m := range codeCell.FindAllStringSubmatch(first, -1) {
				codes = append(codes, m[1])
			}
		case inTable:
			return codes
		}
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	if !inTable {
		t.Fatalf(`%s has no table under a "Failure codes" heading`, name)
	}
	return codes
}

// schemaCodes returns the enum of $defs.code in the JSON Schema of the results.
func schemaCodes(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile("../../schema/results.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Defs struct {
			Code struct {
				Enum []string `json:"enum"`
			} `json:"code"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("parse schema: %v", err)
	}
	return doc.Defs.Code.Enum
}

// TestCodesDocumented checks that every failure code is in the README's failure-code table,
// explained in docs/verdicts.md and allowed by the JSON Schema, in the order of Codes, and that neither documents a code
// the engine never reports.
func TestCodesDocumented(t *testing.T) {
	t.Parallel()
	want := make([]string, len(Codes))
	for i, c := range Codes {
		want[i] = string(c)
	}
	if len(want) != len(slices.Compact(slices.Sorted(slices.Values(want)))) {
		t.Fatalf("Codes has duplicates: %v", want)
	}
	docs := []struct {
		name string
		got  []string
	}{
		{name: "README.md failure-code table", got: docCodes(t, "../../README.md")},
		{name: "docs/verdicts.md failure-code table", got: docCodes(t, "../../docs/verdicts.md")},
		{name: "schema/results.schema.json $defs.code.enum", got: schemaCodes(t)},
	}
	for _, d := range docs {
		if diff := cmp.Diff(want, d.got); diff != "" {
			t.Errorf("%s does not list result.Codes (-want +got):\n%s", d.name, diff)
		}
	}
}
