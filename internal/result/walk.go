package result

import "reflect"

// RewriteStrings replaces every string of run, in every cluster, Flux object, object,
// failure, event and list, with what rewrite returns for it. field is the Go name of the
// struct field the string is in (the field of a list for its elements), so a caller can treat
// some apart, e.g. Logs, which keep their lines. It walks the values themselves: nothing is
// encoded or parsed, so it cannot fail, whatever the strings hold.
func RewriteStrings(run *Run, rewrite func(field, s string) string) {
	rewriteValue(reflect.ValueOf(run).Elem(), "", rewrite)
}

func rewriteValue(v reflect.Value, field string, rewrite func(field, s string) string) {
	switch v.Kind() {
	case reflect.String:
		if v.CanSet() {
			v.SetString(rewrite(field, v.String()))
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			rewriteValue(v.Elem(), field, rewrite)
		}
	case reflect.Struct:
		t := v.Type()
		for i := range v.NumField() {
			if t.Field(i).IsExported() {
				rewriteValue(v.Field(i), t.Field(i).Name, rewrite)
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			rewriteValue(v.Index(i), field, rewrite)
		}
	case reflect.Map:
		// result holds no maps; a map's values cannot be set in place.
		panic("result.RewriteStrings: maps are not supported: " + v.Type().String())
	}
}
