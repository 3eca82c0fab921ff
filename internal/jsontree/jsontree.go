// Package jsontree decodes a JSON object into the tree of maps, slices and values that
// Kubernetes' unstructured objects hold, as sigs.k8s.io/json's UnmarshalStrict does into a
// map[string]any with PreserveInts and DisallowDuplicateFields (integers as int64, other
// numbers as float64, keys case-sensitive), in one pass and without reflection.
//
// It handles the documents an API server sends. Anything else (invalid JSON, a key twice in
// an object, a string that is not valid UTF-8 or holds a surrogate escape, a number out of
// range, nesting deeper than encoding/json allows, a top level that is not an object) is not
// handled: DecodeObject says so, and the caller decodes with sigs.k8s.io/json, whose result
// or error is then the answer. FuzzDecodeObject holds the two to the same result.
package jsontree

import (
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// maxDepth is encoding/json's limit on nesting; deeper documents are left to it.
const maxDepth = 10000

// Interning: every key and short string value is made once per document (an API server's
// list repeats the same keys and values in every item), up to internMax distinct ones.
const (
	internMax      = 4096
	internValueMax = 16
)

// DecodeObject decodes data, a JSON object. ok is false when data is anything DecodeObject
// does not handle (see the package comment); the returned map is then nil.
func DecodeObject(data []byte) (m map[string]any, ok bool) {
	d := decoder{data: data}
	d.skipSpace()
	if d.i >= len(d.data) || d.data[d.i] != '{' {
		return nil, false
	}
	m, ok = d.object(1)
	if !ok {
		return nil, false
	}
	d.skipSpace()
	if d.i != len(d.data) {
		return nil, false
	}
	return m, true
}

type decoder struct {
	data    []byte
	i       int
	strings map[string]string
	buf     []byte // unescaping
}

func (d *decoder) skipSpace() {
	for d.i < len(d.data) {
		switch d.data[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// value decodes the value at d.i, which follows any space.
func (d *decoder) value(depth int) (any, bool) {
	if d.i >= len(d.data) {
		return nil, false
	}
	switch c := d.data[d.i]; {
	case c == '{':
		m, ok := d.object(depth + 1)
		return m, ok
	case c == '[':
		return d.array(depth + 1)
	case c == '"':
		return d.quoted(internValueMax)
	case c == 't':
		return true, d.literal("true")
	case c == 'f':
		return false, d.literal("false")
	case c == 'n':
		return nil, d.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		return d.number()
	}
	return nil, false
}

func (d *decoder) literal(word string) bool {
	if len(d.data)-d.i < len(word) || string(d.data[d.i:d.i+len(word)]) != word {
		return false
	}
	d.i += len(word)
	return true
}

// object decodes the object whose '{' is at d.i.
func (d *decoder) object(depth int) (map[string]any, bool) {
	if depth > maxDepth {
		return nil, false
	}
	d.i++
	m := make(map[string]any)
	d.skipSpace()
	if d.i < len(d.data) && d.data[d.i] == '}' {
		d.i++
		return m, true
	}
	for {
		if d.i >= len(d.data) || d.data[d.i] != '"' {
			return nil, false
		}
		key, ok := d.quoted(-1)
		if !ok {
			return nil, false
		}
		d.skipSpace()
		if d.i >= len(d.data) || d.data[d.i] != ':' {
			return nil, false
		}
		d.i++
		d.skipSpace()
		if _, twice := m[key]; twice {
			return nil, false
		}
		v, ok := d.value(depth)
		if !ok {
			return nil, false
		}
		m[key] = v
		if more, ok := d.next('}'); !ok {
			return nil, false
		} else if !more {
			return m, true
		}
	}
}

// array decodes the array whose '[' is at d.i; an empty one is an empty slice, not nil.
func (d *decoder) array(depth int) (any, bool) {
	if depth > maxDepth {
		return nil, false
	}
	d.i++
	a := make([]any, 0)
	d.skipSpace()
	if d.i < len(d.data) && d.data[d.i] == ']' {
		d.i++
		return a, true
	}
	for {
		v, ok := d.value(depth)
		if !ok {
			return nil, false
		}
		a = append(a, v)
		if more, ok := d.next(']'); !ok {
			return nil, false
		} else if !more {
			return a, true
		}
	}
}

// next reads what follows a member of an object or an array, and the space around it: ','
// (more follows) or end, the closing bracket (none does); ok is false for anything else.
func (d *decoder) next(end byte) (more, ok bool) {
	d.skipSpace()
	if d.i >= len(d.data) {
		return false, false
	}
	switch d.data[d.i] {
	case ',':
		d.i++
		d.skipSpace()
		return true, true
	case end:
		d.i++
		return false, true
	}
	return false, false
}

// quoted decodes the string whose '"' is at d.i. Strings up to internLen bytes are interned
// (every one when internLen is negative: keys).
func (d *decoder) quoted(internLen int) (string, bool) {
	d.i++
	start := d.i
	ascii := true
	for d.i < len(d.data) {
		c := d.data[d.i]
		switch {
		case c == '"':
			raw := d.data[start:d.i]
			d.i++
			if !ascii && !utf8.Valid(raw) {
				return "", false
			}
			return d.intern(raw, internLen), true
		case c == '\\':
			return d.escaped(start, internLen)
		case c < 0x20:
			return "", false
		case c >= utf8.RuneSelf:
			ascii = false
		}
		d.i++
	}
	return "", false
}

// escaped finishes a string that holds an escape, from its first byte at start.
func (d *decoder) escaped(start, internLen int) (string, bool) {
	b := append(d.buf[:0], d.data[start:d.i]...)
	for d.i < len(d.data) {
		c := d.data[d.i]
		switch {
		case c == '"':
			d.i++
			d.buf = b
			if !utf8.Valid(b) {
				return "", false
			}
			return d.intern(b, internLen), true
		case c < 0x20:
			return "", false
		case c != '\\':
			b = append(b, c)
			d.i++
			continue
		}
		if d.i+1 >= len(d.data) {
			return "", false
		}
		e := d.data[d.i+1]
		d.i += 2
		switch e {
		case '"', '\\', '/':
			b = append(b, e)
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r, ok := d.hex4()
			if !ok {
				return "", false
			}
			if utf16.IsSurrogate(r) {
				// A pair, a lone half or a half with the wrong partner: encoding/json's
				// rules for them are its own.
				return "", false
			}
			b = utf8.AppendRune(b, r)
		default:
			return "", false
		}
	}
	return "", false
}

func (d *decoder) hex4() (rune, bool) {
	if len(d.data)-d.i < 4 {
		return 0, false
	}
	var r rune
	for _, c := range d.data[d.i : d.i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	d.i += 4
	return r, true
}

func (d *decoder) intern(b []byte, internLen int) string {
	if internLen >= 0 && len(b) > internLen {
		return string(b)
	}
	if s, ok := d.strings[string(b)]; ok {
		return s
	}
	s := string(b)
	if d.strings == nil {
		d.strings = make(map[string]string, 64)
	}
	if len(d.strings) < internMax {
		d.strings[s] = s
	}
	return s
}

// number decodes the number at d.i as sigs.k8s.io/json does with PreserveInts: an int64 when
// it has no '.' and fits, a float64 otherwise.
func (d *decoder) number() (any, bool) {
	start := d.i
	if d.data[d.i] == '-' {
		d.i++
	}
	switch {
	case d.i < len(d.data) && d.data[d.i] == '0':
		d.i++
	case d.i < len(d.data) && d.data[d.i] >= '1' && d.data[d.i] <= '9':
		d.digits()
	default:
		return nil, false
	}
	float := false
	if d.i < len(d.data) && d.data[d.i] == '.' {
		float = true
		d.i++
		if !d.digits() {
			return nil, false
		}
	}
	if d.i < len(d.data) && (d.data[d.i] == 'e' || d.data[d.i] == 'E') {
		d.i++
		if d.i < len(d.data) && (d.data[d.i] == '+' || d.data[d.i] == '-') {
			d.i++
		}
		if !d.digits() {
			return nil, false
		}
	}
	text := string(d.data[start:d.i])
	if !float {
		if n, err := strconv.ParseInt(text, 10, 64); err == nil {
			return n, true
		}
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return nil, false
	}
	return f, true
}

// digits skips one or more digits; false when there is none.
func (d *decoder) digits() bool {
	start := d.i
	for d.i < len(d.data) && d.data[d.i] >= '0' && d.data[d.i] <= '9' {
		d.i++
	}
	return d.i > start
}
