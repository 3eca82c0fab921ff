package result

import (
	"reflect"
	"strings"
)

// Vocabulary returns the words a run's results are made of, whatever the clusters say: every
// verdict, failure code, object status and run status, the Ready condition's type, statuses
// and reasons, the flux-system namespace, and every key of the JSON document (the `results`
// and `report` outputs). A secret equal to one, or part of one, cannot be masked: the runner
// would blank it from the `status` output and drop every output that holds it.
func Vocabulary() []string {
	words := []string{"Ready", "True", "False", "Unknown", "AllClustersCurrent", "ClustersNotReady", "flux-system"}
	for _, v := range Verdicts {
		words = append(words, string(v))
	}
	for _, c := range Codes {
		words = append(words, string(c))
	}
	for _, s := range ObjectStatuses {
		words = append(words, string(s))
	}
	for _, s := range RunStatuses {
		words = append(words, string(s))
	}
	seen := map[reflect.Type]bool{}
	var keys func(t reflect.Type)
	keys = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] {
			return
		}
		seen[t] = true
		for i := range t.NumField() {
			f := t.Field(i)
			if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" && name != "-" {
				words = append(words, name)
			}
			keys(f.Type)
		}
	}
	keys(reflect.TypeFor[Run]())
	return words
}
