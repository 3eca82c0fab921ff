package report

import (
	"bytes"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/org/app-status-action/internal/result"
)

const (
	schemaFile = "../../schema/results.schema.json"
	schemaID   = "https://github.com/org/app-status-action/schema/results.schema.json"
	// resultsID names the schema of the `results` output: an array of $defs/cluster.
	resultsID = "https://github.com/org/app-status-action/schema/results-output.json"
)

// loadSchema reads the schema as the validator sees it.
func loadSchema(t *testing.T) map[string]any {
	t.Helper()
	f, err := os.Open(schemaFile)
	if err != nil {
		t.Fatalf("open schema: %v", err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatalf("parse schema: %v", err)
	}
	m, ok := doc.(map[string]any)
	if !ok {
		t.Fatalf("schema is a %T, want an object", doc)
	}
	return m
}

// lookup follows keys from v, failing the test when one is missing.
func lookup(t *testing.T, v any, keys ...string) any {
	t.Helper()
	for i, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("schema %s is a %T, want an object", strings.Join(keys[:i], "."), v)
		}
		if v, ok = m[k]; !ok {
			t.Fatalf("schema has no %s", strings.Join(keys[:i+1], "."))
		}
	}
	return v
}

func strs(v any) []string {
	var out []string
	for _, e := range v.([]any) {
		out = append(out, fmt.Sprint(e))
	}
	return out
}

func asStrings[T ~string](vs []T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}

// TestSchemaEnums checks the schema's enums and constants are the ones of package result, so
// they cannot drift.
func TestSchemaEnums(t *testing.T) {
	t.Parallel()
	schema := loadSchema(t)
	version := strconv.Itoa(result.SchemaVersion)
	tests := []struct {
		name string
		got  []string
		want []string
	}{
		{name: "verdict", got: strs(lookup(t, schema, "$defs", "verdict", "enum")), want: asStrings(result.Verdicts)},
		{name: "code", got: strs(lookup(t, schema, "$defs", "code", "enum")), want: asStrings(result.Codes)},
		{name: "status", got: strs(lookup(t, schema, "properties", "status", "enum")),
			want: asStrings(result.RunStatuses)},
		{name: "object status", got: strs(lookup(t, schema, "$defs", "objectStatus", "enum")),
			want: asStrings(result.ObjectStatuses)},
		{name: "run schemaVersion", got: []string{fmt.Sprint(lookup(t, schema, "properties", "schemaVersion", "const"))}, want: []string{version}},
		{name: "cluster schemaVersion", got: []string{fmt.Sprint(lookup(t, schema, "$defs", "cluster", "properties", "schemaVersion", "const"))}, want: []string{version}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, tt.got); diff != "" {
			t.Errorf("schema %s mismatch (-want +got):\n%s", tt.name, diff)
		}
	}
}

// TestSchemaFields checks every object of the schema has exactly the JSON fields of its Go
// type, requires exactly the ones that are not omitempty, and allows nothing else.
func TestSchemaFields(t *testing.T) {
	t.Parallel()
	schema := loadSchema(t)
	tests := []struct {
		def string // "" for the root
		typ reflect.Type
	}{
		{def: "", typ: reflect.TypeFor[result.Run]()},
		{def: "cluster", typ: reflect.TypeFor[result.Cluster]()},
		{def: "fluxObject", typ: reflect.TypeFor[result.FluxObject]()},
		{def: "object", typ: reflect.TypeFor[result.Object]()},
		{def: "failure", typ: reflect.TypeFor[result.Failure]()},
		{def: "event", typ: reflect.TypeFor[result.Event]()},
		{def: "condition", typ: reflect.TypeFor[result.Condition]()},
		{def: "properties/shard", typ: reflect.TypeFor[result.Shard]()}, // defined in place
		{def: "properties/origin", typ: reflect.TypeFor[result.Origin]()},
	}
	for _, tt := range tests {
		var def any = schema
		if path := strings.Split(tt.def, "/"); len(path) > 1 {
			def = lookup(t, schema, path...)
		} else if tt.def != "" {
			def = lookup(t, schema, "$defs", tt.def)
		}
		var wantProps, wantRequired []string
		for f := range tt.typ.Fields() {
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" || !f.IsExported() {
				continue
			}
			wantProps = append(wantProps, name)
			if !slices.Contains(strings.Split(opts, ","), "omitempty") {
				wantRequired = append(wantRequired, name)
			}
		}
		var gotProps []string
		for k := range lookup(t, def, "properties").(map[string]any) {
			gotProps = append(gotProps, k)
		}
		gotRequired := strs(lookup(t, def, "required"))
		for _, s := range [][]string{wantProps, wantRequired, gotProps, gotRequired} {
			slices.Sort(s)
		}
		if diff := cmp.Diff(wantProps, gotProps); diff != "" {
			t.Errorf("%s: properties mismatch with %s (-want +got):\n%s", tt.def, tt.typ, diff)
		}
		if diff := cmp.Diff(wantRequired, gotRequired); diff != "" {
			t.Errorf("%s: required mismatch with %s (-want +got):\n%s", tt.def, tt.typ, diff)
		}
		if got := lookup(t, def, "additionalProperties"); got != false {
			t.Errorf("%s: additionalProperties = %v, want false", tt.def, got)
		}
	}
}

// compileSchemas compiles the Run schema and the schema of the `results` output.
func compileSchemas(t *testing.T) (run, results *jsonschema.Schema) {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource(schemaID, loadSchema(t)); err != nil {
		t.Fatalf("add schema: %v", err)
	}
	array := map[string]any{
		"$schema": "https://json-schema.org/draft/2020-12/schema",
		"type":    "array",
		"items":   map[string]any{"$ref": schemaID + "#/$defs/cluster"},
	}
	if err := c.AddResource(resultsID, array); err != nil {
		t.Fatalf("add results schema: %v", err)
	}
	run, err := c.Compile(schemaID)
	if err != nil {
		t.Fatalf("compile schema: %v", err)
	}
	results, err = c.Compile(resultsID)
	if err != nil {
		t.Fatalf("compile results schema: %v", err)
	}
	return run, results
}

func validate(s *jsonschema.Schema, doc []byte) error {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return fmt.Errorf("parse: %w", err)
	}
	return s.Validate(v)
}

// TestSchemaValidates checks the rendered JSON of real runs is valid.
func TestSchemaValidates(t *testing.T) {
	t.Parallel()
	runSchema, resultsSchema := compileSchemas(t)
	runs := fixtures()
	runs = append(runs, fixture{name: "fleet", run: fleetRun(3, 2)})
	stamped := fleetRun(3, 2)
	stamped.Origin = &result.Origin{CI: "github", Repository: "org/app", RunID: "7001", Attempt: 2}
	runs = append(runs, fixture{name: "fleet of a CI run", run: stamped})
	for _, f := range runs {
		doc, err := JSON(f.run)
		if err != nil {
			t.Fatalf("%s: JSON: %v", f.name, err)
		}
		if err := validate(runSchema, doc); err != nil {
			t.Errorf("%s: JSON is not valid: %v", f.name, err)
		}
		results, err := ResultsJSON(f.run)
		if err != nil {
			t.Fatalf("%s: ResultsJSON: %v", f.name, err)
		}
		if err := validate(resultsSchema, results); err != nil {
			t.Errorf("%s: ResultsJSON is not valid: %v", f.name, err)
		}
	}
}

// TestSchemaRejects checks the schema is strict enough to catch a broken document.
func TestSchemaRejects(t *testing.T) {
	t.Parallel()
	runSchema, resultsSchema := compileSchemas(t)
	doc, err := JSON(mixedRun())
	if err != nil {
		t.Fatalf("JSON: %v", err)
	}
	tests := []struct {
		name   string
		schema *jsonschema.Schema
		doc    string
	}{
		{name: "unknown verdict", schema: runSchema, doc: strings.Replace(string(doc), `"verdict": "Failed"`, `"verdict": "Broken"`, 1)},
		{name: "unknown code", schema: runSchema, doc: strings.Replace(string(doc), `"code": "image-pull"`, `"code": "bad-luck"`, 1)},
		{name: "unknown field", schema: runSchema, doc: strings.Replace(string(doc), `"durationMs"`, `"elapsed": 1, "durationMs"`, 1)},
		{name: "null flux", schema: runSchema, doc: strings.Replace(string(doc), `"flux": []`, `"flux": null`, 1)},
		{name: "wrong schemaVersion", schema: runSchema, doc: strings.Replace(string(doc), `"schemaVersion": 1`, `"schemaVersion": 2`, 1)},
		{name: "results is not an array", schema: resultsSchema, doc: `{}`},
		{name: "results holds a run", schema: resultsSchema, doc: "[" + string(doc) + "]"},
	}
	for _, tt := range tests {
		if tt.doc == string(doc) {
			t.Fatalf("%s: the document was not changed", tt.name)
		}
		if err := validate(tt.schema, []byte(tt.doc)); err == nil {
			t.Errorf("%s: validate() = nil, want an error", tt.name)
		}
	}
}
