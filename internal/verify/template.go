package verify

import (
	"encoding/json"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// templateWrittenOf is when a Deployment's or DaemonSet's pod template was last written
// (assess.ObjectFacts.TemplateWritten), read from its managedFields before they are dropped:
// the API server moves an entry's time whenever its manager changes a field it owns. Zero for
// another kind, or when no entry says.
func templateWrittenOf(obj any) time.Time {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return time.Time{}
	}
	if gk := u.GroupVersionKind().GroupKind(); gk.Group != "apps" || (gk.Kind != "Deployment" && gk.Kind != "DaemonSet") {
		return time.Time{}
	}
	return templateWritten(u.GetManagedFields())
}

// templateWritten is the latest time of the managedFields entries that own fields of
// spec.template; zero when none says. An entry that owns only the node selector Flagger adds
// to a DaemonSet it scales to zero (flagger.app/scale-to-zero) is not a change of the template:
// Flagger writes it when it rolls back, and counting it would date the template after the
// Failed that wrote it.
func templateWritten(entries []metav1.ManagedFieldsEntry) time.Time {
	var latest time.Time
	for _, f := range entries {
		if f.Time == nil || f.FieldsV1 == nil || !f.Time.After(latest) {
			continue
		}
		var top struct {
			Spec map[string]json.RawMessage `json:"f:spec"`
		}
		if json.Unmarshal(f.FieldsV1.GetRawBytes(), &top) != nil {
			continue
		}
		if raw, owns := top.Spec["f:template"]; owns && !onlyScaleToZero(raw) {
			latest = f.Time.Time
		}
	}
	return latest
}

// onlyScaleToZero reports whether the field set of a pod template holds nothing but Flagger's
// scale-to-zero node selector (and the "." entries that stand for the maps holding it).
func onlyScaleToZero(raw json.RawMessage) bool {
	var tmpl map[string]any
	if json.Unmarshal(raw, &tmpl) != nil {
		return false
	}
	spec, _ := tmpl["f:spec"].(map[string]any)
	selector, _ := spec["f:nodeSelector"].(map[string]any)
	if _, ok := selector["f:flagger.app/scale-to-zero"]; !ok {
		return false
	}
	return onlyKeys(tmpl, "f:spec", ".") && onlyKeys(spec, "f:nodeSelector", ".") && onlyKeys(selector, "f:flagger.app/scale-to-zero", ".")
}

// onlyKeys reports whether m has no key but those.
func onlyKeys(m map[string]any, keys ...string) bool {
	for key := range m {
		if !slices.Contains(keys, key) {
			return false
		}
	}
	return true
}
