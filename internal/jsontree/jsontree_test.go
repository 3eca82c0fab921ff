package jsontree

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	kjson "sigs.k8s.io/json"
)

// reference is what DecodeObject must equal: sigs.k8s.io/json's strict decoding into a map,
// as the dynamic client's list decoding does. ok is false when it fails or reports a key
// twice.
func reference(data []byte) (m map[string]any, ok bool) {
	strict, err := kjson.UnmarshalStrict(data, &m, kjson.DisallowDuplicateFields)
	return m, err == nil && len(strict) == 0 && m != nil
}

// check fails t when DecodeObject handles data and does not give reference's result, or when
// it declines data it is required to handle.
func check(t *testing.T, data []byte, mustHandle bool) {
	t.Helper()
	got, ok := DecodeObject(data)
	want, wantOK := reference(data)
	switch {
	case ok && !wantOK:
		t.Fatalf("DecodeObject(%q) handled a body sigs.k8s.io/json rejects: %v", data, got)
	case ok:
		// (reflect.DeepEqual first: it tells int64 from float64 and an empty slice from nil
		// as cmp does, and deep nesting is slow to diff.)
		if !reflect.DeepEqual(want, got) {
			t.Fatalf("DecodeObject(%q) (-sigs.k8s.io/json +DecodeObject):\n%s", data, cmp.Diff(want, got))
		}
	case mustHandle:
		t.Fatalf("DecodeObject(%q) declined a body it must handle (sigs.k8s.io/json: ok %v)", data, wantOK)
	case got != nil:
		t.Fatalf("DecodeObject(%q) declined but returned %v", data, got)
	}
}

func TestDecodeObject(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		body   string
		handle bool // DecodeObject must handle it (else: either, but the same result)
	}{
		{name: "empty object", body: `{}`, handle: true},
		{name: "space around", body: " \t\r\n{ \"a\" : 1 , \"b\" :[ ] }\n ", handle: true},
		{name: "list", body: `{"apiVersion":"v1","kind":"List","metadata":{"resourceVersion":"12"},"items":[{"kind":"Pod","metadata":{"name":"a","labels":{}}},null]}`, handle: true},
		{name: "integers as int64", body: `{"a":0,"b":-0,"c":9223372036854775807,"d":-9223372036854775808,"e":12}`, handle: true},
		{name: "past int64: float64", body: `{"a":9223372036854775808,"b":-9223372036854775809,"c":123456789012345678901234567890}`, handle: true},
		{name: "fractions and exponents: float64", body: `{"a":1.0,"b":1e3,"c":1E+3,"d":-2.5e-3,"e":0.000001,"f":1e308}`, handle: true},
		{name: "literals", body: `{"t":true,"f":false,"n":null,"a":[true,false,null]}`, handle: true},
		{name: "escapes", body: `{"a":"\"\\\/\b\f\n\r\t","b":"\u0041\u00e9\u4e2d\u0000","c":"x\u00"}`},
		{name: "escapes, valid", body: `{"a":"\"\\\/\b\f\n\r\t","b":"\u0041\u00e9\u4e2d\u0000\uFFFF"}`, handle: true},
		{name: "escaped key", body: `{"k\u0069nd":"Pod","a\nb":1}`, handle: true},
		{name: "UTF-8", body: `{"名前":"値","emoji":"😀","mixed":"a€b"}`, handle: true},
		{name: "deep", body: strings.Repeat(`{"a":`, 500) + `1` + strings.Repeat(`}`, 500), handle: true},
		{name: "deep arrays", body: `{"a":` + strings.Repeat(`[`, 500) + strings.Repeat(`]`, 500) + `}`, handle: true},
		{name: "many keys past the intern table", body: manyKeys(internMax + 100), handle: true},
		{name: "a key in two cases", body: `{"kind":"A","Kind":"B"}`, handle: true},

		// Declined, each left to sigs.k8s.io/json.
		{name: "key twice", body: `{"a":1,"a":2}`},
		{name: "key twice, nested", body: `{"m":{"a":1,"b":{},"a":2}}`},
		{name: "key twice once unescaped", body: `{"a":1,"\u0061":2}`},
		{name: "surrogate pair", body: `{"a":"\ud83d\ude00"}`},
		{name: "lone surrogate", body: `{"a":"\ud83d"}`},
		{name: "invalid UTF-8", body: "{\"a\":\"\xff\"}"},
		{name: "invalid UTF-8 in a key", body: "{\"\xc3\x28\":1}"},
		{name: "control character", body: "{\"a\":\"\x01\"}"},
		{name: "too deep", body: strings.Repeat(`{"a":`, maxDepth+1) + `1` + strings.Repeat(`}`, maxDepth+1)},
		{name: "number out of range", body: `{"a":1e400}`},
		{name: "leading zero", body: `{"a":01}`},
		{name: "bare minus", body: `{"a":-}`},
		{name: "dot without digits", body: `{"a":1.}`},
		{name: "exponent without digits", body: `{"a":1e}`},
		{name: "plus sign", body: `{"a":+1}`},
		{name: "trailing comma", body: `{"a":1,}`},
		{name: "trailing comma in array", body: `{"a":[1,]}`},
		{name: "missing colon", body: `{"a" 1}`},
		{name: "unquoted key", body: `{a:1}`},
		{name: "single quotes", body: `{'a':1}`},
		{name: "unterminated", body: `{"a":"b`},
		{name: "unterminated object", body: `{"a":1`},
		{name: "garbage after", body: `{"a":1} x`},
		{name: "two objects", body: `{}{}`},
		{name: "array at the top", body: `[{}]`},
		{name: "null at the top", body: `null`},
		{name: "string at the top", body: `"a"`},
		{name: "empty", body: ``},
		{name: "byte order mark", body: "\ufeff{}"},
		{name: "bad literal", body: `{"a":tru}`},
		{name: "bad escape", body: `{"a":"\x"}`},
		{name: "NaN", body: `{"a":NaN}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			check(t, []byte(tt.body), tt.handle)
		})
	}
}

func manyKeys(n int) string {
	var b strings.Builder
	b.WriteString("{")
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"key-%d":"value-%d"`, i, i%7)
	}
	b.WriteString("}")
	return b.String()
}

// TestDecodeObjectInterns: a key or a short value met again is the same string, so that a
// list's items share them.
func TestDecodeObjectInterns(t *testing.T) {
	t.Parallel()
	m, ok := DecodeObject([]byte(`{"items":[{"kind":"Deployment","status":"True"},{"kind":"Deployment","status":"True"}]}`))
	if !ok {
		t.Fatal("DecodeObject declined")
	}
	items := m["items"].([]any)
	a, b := items[0].(map[string]any), items[1].(map[string]any)
	for _, key := range []string{"kind", "status"} {
		if !sameString(a[key].(string), b[key].(string)) {
			t.Errorf("the two items' %s values are two strings", key)
		}
	}
	var keyA, keyB string
	for k := range a {
		if k == "kind" {
			keyA = k
		}
	}
	for k := range b {
		if k == "kind" {
			keyB = k
		}
	}
	if !sameString(keyA, keyB) {
		t.Error("the two items' kind keys are two strings")
	}
}

// sameString reports whether a and b are one string in memory.
func sameString(a, b string) bool {
	return a == b && unsafe.StringData(a) == unsafe.StringData(b)
}

// FuzzDecodeObject holds DecodeObject to sigs.k8s.io/json on any input: when it handles a
// body, the result is sigs.k8s.io/json's; it never handles one sigs.k8s.io/json rejects.
func FuzzDecodeObject(f *testing.F) {
	seeds := []string{
		`{}`, `{"a":1}`, `{"a":[1,2.5,-3e2,true,false,null,"x"],"b":{"c":{}}}`,
		`{"a":"\u00e9\n\"","b":"\ud83d\ude00"}`, `{"a":1,"a":2}`, "{\"a\":\"\xff\"}", `{"a":9223372036854775808}`,
		`{"apiVersion":"apps/v1","kind":"DeploymentList","metadata":{"resourceVersion":"7"},"items":[{"metadata":{"name":"a","namespace":"b","generation":2},"spec":{"replicas":3},"status":{"conditions":[{"type":"Available","status":"True"}]}}]}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	// A document the encoder writes, with every kind of value.
	doc, err := json.Marshal(map[string]any{"s": "a\u2028b<>&", "n": []any{0, -1, 1.5, 1e21}, "m": map[string]any{"": nil}})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(doc)
	f.Fuzz(func(t *testing.T, data []byte) {
		check(t, data, false)
	})
}
