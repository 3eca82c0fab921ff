package result

import "reflect"

// RewriteStrings replaces every string of run, in every cluster, Flux object, object,
// failure, event and list, with what rewrite returns for it. field is the Go name of the
// struct field the string is in (the field of a list for its elements), so a caller can treat
// some apart, e.g. Logs, which keep their lines. It walks the values themselves: nothing is
// encoded or parsed, so it cannot fail, whatever the strings hold.
func RewriteStrings(run *Run, rewrite func(field, s string) string) {
	w := walker{rewrite: rewrite, fields: map[reflect.Type][]exportedField{}}
	w.value(reflect.ValueOf(run).Elem(), "")
}

// Rewriter rewrites the strings of a run piece by piece, as RewriteStrings does, so that a
// caller can decide between the pieces what to do with the rest (stop early, cut it down).
type Rewriter struct{ w walker }

// NewRewriter returns a Rewriter that calls rewrite for every string.
func NewRewriter(rewrite func(field, s string) string) *Rewriter {
	return &Rewriter{w: walker{rewrite: rewrite, fields: map[reflect.Type][]exportedField{}}}
}

// Cluster rewrites every string of c.
func (r *Rewriter) Cluster(c *Cluster) { r.w.value(reflect.ValueOf(c).Elem(), "") }

// Run rewrites every string of run but those of its clusters.
func (r *Rewriter) Run(run *Run) {
	clusters := run.Results
	run.Results = nil
	r.w.value(reflect.ValueOf(run).Elem(), "")
	run.Results = clusters
}

// walker walks a run once, reading each struct type's exported fields once (reflect's Field
// is what a walk of a fleet's 200,000 objects would otherwise spend its time in).
type walker struct {
	rewrite func(field, s string) string
	fields  map[reflect.Type][]exportedField
}

type exportedField struct {
	index int
	name  string
}

func (w *walker) exported(t reflect.Type) []exportedField {
	if fs, ok := w.fields[t]; ok {
		return fs
	}
	var fs []exportedField
	for i := range t.NumField() {
		if f := t.Field(i); f.IsExported() {
			fs = append(fs, exportedField{index: i, name: f.Name})
		}
	}
	w.fields[t] = fs
	return fs
}

func (w *walker) value(v reflect.Value, field string) {
	switch v.Kind() {
	case reflect.String:
		if v.CanSet() {
			v.SetString(w.rewrite(field, v.String()))
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			w.value(v.Elem(), field)
		}
	case reflect.Struct:
		for _, f := range w.exported(v.Type()) {
			w.value(v.Field(f.index), f.name)
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			w.value(v.Index(i), field)
		}
	case reflect.Map:
		// result holds no maps; a map's values cannot be set in place.
		panic("result.RewriteStrings: maps are not supported: " + v.Type().String())
	}
}
