// Package flagger holds Flagger's rules that the decision reads: what a Canary's phase says of
// its target's template, and how a primary's pod template compares with its target's once
// Flagger's rewrites are undone. It does no I/O.
package flagger

import (
	"reflect"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// What a primary runs is told by comparing its pod template with its target's, after undoing
// what Flagger v1.36.1 rewrites when it copies the target's template to NAME-primary
// (pkg/canary/deployment_controller.go getPrimaryDeploymentTemplateSpec,
// daemonset_controller.go, config_tracker.go ApplyPrimaryConfigs, util.go makeAnnotations and
// makePrimaryLabels):
//
//   - the ConfigMaps and Secrets it tracks are renamed NAME-primary in volumes (also
//     projected) and in the containers' env and envFrom;
//   - a label selector's value naming the target in topologySpreadConstraints and pod
//     anti-affinity becomes NAME-primary, and so does the pod's selector label;
//   - the pod's annotations gain flagger-id; labels and annotations holding
//     toolkit.fluxcd.io are dropped;
//   - a DaemonSet target scaled to zero gains the node selector flagger.app/scale-to-zero.
//
// A pod annotation found on the primary only is not compared (dropPrimaryOnly).
//
// Both templates are normalised the same way (a "-primary" suffix dropped at those places), so
// a template that Flagger copied compares equal to its target's, and a template that it did
// not (the primary runs another env, args, resources, volume...) does not, whatever Flagger's
// status says.

const (
	// PrimarySuffix ends the name of the copy Flagger makes of a target and of a config it
	// tracks.
	PrimarySuffix     = "-primary"
	flaggerIDKey      = "flagger-id"
	toolkitMarker     = "toolkit.fluxcd.io"
	scaleToZeroMarker = "flagger.app/scale-to-zero"
)

// TemplateDiff says in which fields the pod template of primary differs from target's once
// Flagger's rewrites are undone; "" when it is the target's.
func TemplateDiff(target, primary *unstructured.Unstructured) string {
	want := normalTemplate(target)
	got := normalTemplate(primary)
	dropPrimaryOnly(want, got)
	var fields []string
	for _, part := range []string{"metadata", "spec"} {
		w, _ := want[part].(map[string]any)
		g, _ := got[part].(map[string]any)
		for key := range w {
			if !reflect.DeepEqual(w[key], g[key]) {
				fields = append(fields, key)
			}
		}
		for key := range g {
			if _, ok := w[key]; !ok {
				fields = append(fields, key)
			}
		}
	}
	if len(fields) == 0 {
		return ""
	}
	slices.Sort(fields)
	fields = slices.Compact(fields)
	if len(fields) > 5 {
		fields = append(fields[:5], "...")
	}
	return "runs a pod template that differs from the target's in " + strings.Join(fields, ", ")
}

// dropPrimaryOnly drops from got the pod annotations that want lacks: one written on the
// primary alone (kubectl rollout restart's kubectl.kubernetes.io/restartedAt) is not the
// target's template, and nothing rewrites it before a later promotion, so it would make the
// templates differ for good. A key the target holds is compared: its change is a real one.
func dropPrimaryOnly(want, got map[string]any) {
	wm, _ := want["metadata"].(map[string]any)
	gm, _ := got["metadata"].(map[string]any)
	wa, _ := wm["annotations"].(map[string]any)
	ga, _ := gm["annotations"].(map[string]any)
	for key := range ga {
		if _, ok := wa[key]; !ok {
			delete(ga, key)
		}
	}
	if ga != nil && len(ga) == 0 {
		delete(gm, "annotations")
	}
}

// normalTemplate is a copy of u's spec.template with Flagger's rewrites undone.
func normalTemplate(u *unstructured.Unstructured) map[string]any {
	tmpl, _, _ := unstructured.NestedMap(u.Object, "spec", "template")
	if tmpl == nil {
		tmpl = map[string]any{}
	}
	tmpl = runtime.DeepCopyJSON(tmpl)
	meta, _ := tmpl["metadata"].(map[string]any)
	out := map[string]any{}
	labels := keepMeta(meta, "labels", func(key string) bool { return !strings.Contains(key, toolkitMarker) })
	for key, v := range labels {
		if s, ok := v.(string); ok {
			labels[key] = strings.TrimSuffix(s, PrimarySuffix)
		}
	}
	annotations := keepMeta(meta, "annotations", func(key string) bool {
		return key != flaggerIDKey && !strings.Contains(key, toolkitMarker)
	})
	m := map[string]any{}
	if len(labels) > 0 {
		m["labels"] = labels
	}
	if len(annotations) > 0 {
		m["annotations"] = annotations
	}
	out["metadata"] = m
	spec, _ := tmpl["spec"].(map[string]any)
	if spec == nil {
		spec = map[string]any{}
	}
	if sel, ok := spec["nodeSelector"].(map[string]any); ok {
		delete(sel, scaleToZeroMarker)
		if len(sel) == 0 {
			delete(spec, "nodeSelector")
		}
	}
	for _, v := range items(spec["volumes"]) {
		trimAt(v, "configMap", "name")
		trimAt(v, "secret", "secretName")
		projected, _ := v["projected"].(map[string]any)
		for _, src := range items(projected["sources"]) {
			trimAt(src, "configMap", "name")
			trimAt(src, "secret", "name")
		}
	}
	for _, c := range items(spec["containers"]) {
		for _, env := range items(c["env"]) {
			from, _ := env["valueFrom"].(map[string]any)
			trimAt(from, "configMapKeyRef", "name")
			trimAt(from, "secretKeyRef", "name")
		}
		for _, from := range items(c["envFrom"]) {
			trimAt(from, "configMapRef", "name")
			trimAt(from, "secretRef", "name")
		}
	}
	for _, tsc := range items(spec["topologySpreadConstraints"]) {
		trimSelector(tsc["labelSelector"])
	}
	affinity, _ := spec["affinity"].(map[string]any)
	anti, _ := affinity["podAntiAffinity"].(map[string]any)
	for _, term := range items(anti["preferredDuringSchedulingIgnoredDuringExecution"]) {
		pat, _ := term["podAffinityTerm"].(map[string]any)
		trimSelector(pat["labelSelector"])
	}
	for _, term := range items(anti["requiredDuringSchedulingIgnoredDuringExecution"]) {
		trimSelector(term["labelSelector"])
	}
	out["spec"] = spec
	return out
}

// keepMeta is the map meta[field] with the keys keep accepts.
func keepMeta(meta map[string]any, field string, keep func(string) bool) map[string]any {
	in, _ := meta[field].(map[string]any)
	out := map[string]any{}
	for key, v := range in {
		if keep(key) {
			out[key] = v
		}
	}
	return out
}

// items are the objects of a JSON array.
func items(v any) []map[string]any {
	list, _ := v.([]any)
	out := make([]map[string]any, 0, len(list))
	for _, raw := range list {
		if m, ok := raw.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// trimAt drops the "-primary" suffix of obj[field][name].
func trimAt(obj map[string]any, field, name string) {
	ref, _ := obj[field].(map[string]any)
	if s, ok := ref[name].(string); ok {
		ref[name] = strings.TrimSuffix(s, PrimarySuffix)
	}
}

// trimSelector drops the "-primary" suffix of a label selector's values.
func trimSelector(v any) {
	sel, _ := v.(map[string]any)
	if labels, ok := sel["matchLabels"].(map[string]any); ok {
		for key, value := range labels {
			if s, ok := value.(string); ok {
				labels[key] = strings.TrimSuffix(s, PrimarySuffix)
			}
		}
	}
	for _, expr := range items(sel["matchExpressions"]) {
		values, _ := expr["values"].([]any)
		for i, value := range values {
			if s, ok := value.(string); ok {
				values[i] = strings.TrimSuffix(s, PrimarySuffix)
			}
		}
	}
}
