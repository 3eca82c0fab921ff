package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestAppendIndented: appendIndented indents compact JSON byte for byte as json.Indent does,
// on hand-picked documents and on every golden JSON report.
func TestAppendIndented(t *testing.T) {
	t.Parallel()
	docs := []string{
		`{}`, `[]`, `""`, `0`, `-1.5e+10`, `true`, `null`,
		`{"a":{},"b":[],"c":[{}],"d":[[]],"e":{"f":[1,2,{"g":null}]}}`,
		`{"quote \" in a key":"a \\\" b","backslash at the end\\":"\\","colon:comma,":"{[}]"}`,
		`["\\\\","\\\\\"","\u2028 ::set-output ##[error] \ufffd","é ü 世界"]`,
		`[{"id":"Deployment/shop/web","status":"Current","sinceMs":1200,"failure":{"code":"ImagePullBackOff"}}]`,
	}
	golden, err := filepath.Glob(filepath.Join("testdata", "*.golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range golden {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, data); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		docs = append(docs, compact.String())
	}
	if len(golden) == 0 {
		t.Fatal("no golden JSON reports found in testdata")
	}
	for _, doc := range docs {
		for _, style := range [][2]string{{"", "  "}, {"    ", "  "}, {"\t", "\t"}} {
			var want bytes.Buffer
			if err := json.Indent(&want, []byte(doc), style[0], style[1]); err != nil {
				t.Fatalf("json.Indent(%.60q): %v", doc, err)
			}
			got := appendIndented([]byte("kept:"), []byte(doc), style[0], style[1])
			if diff := cmp.Diff("kept:"+want.String(), string(got)); diff != "" {
				t.Errorf("appendIndented(%.60q, %q, %q) (-json.Indent +got):\n%s", doc, style[0], style[1], diff)
			}
		}
	}
}

// FuzzAppendIndented: for any valid JSON, compacted as the encoder writes it, appendIndented
// gives what json.Indent gives.
func FuzzAppendIndented(f *testing.F) {
	for _, seed := range []string{`{"a":[1,{"b":"c\"d"}],"e":{}}`, `[[],{},"\\",null]`, `"x"`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, data); err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		if err := json.Indent(&want, compact.Bytes(), "    ", "  "); err != nil {
			t.Fatal(err)
		}
		if got := appendIndented(nil, compact.Bytes(), "    ", "  "); !bytes.Equal(got, want.Bytes()) {
			t.Errorf("appendIndented(%q) = %q, json.Indent gives %q", compact.Bytes(), got, want.Bytes())
		}
	})
}
