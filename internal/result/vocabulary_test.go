package result

import (
	"encoding/json"
	"slices"
	"testing"
)

// TestVocabulary: the vocabulary holds the words a run's JSON is made of, keys and values,
// for a run of every verdict.
func TestVocabulary(t *testing.T) {
	t.Parallel()
	var clusters []Cluster
	for _, v := range Verdicts {
		clusters = append(clusters, Cluster{Name: "c-" + string(v), Verdict: v, Code: CodeImagePull,
			Flux:      []FluxObject{{ID: "Kustomization/flux-system/app", Namespace: "flux-system", Verdict: v, Ready: "True"}},
			Objects:   []Object{{ID: "Deployment/app/web", Status: ObjectFailed, Failure: &Failure{Code: CodeOOM, Events: []Event{{}}}}},
			Reconcile: &Reconcile{}, Preflight: &Preflight{}})
	}
	run := NewRun([]string{"Kustomization/flux-system/app"}, "main@sha1:0123456", clusters, 0)
	run.Shard, run.Origin = &Shard{}, &Origin{}
	data, err := json.Marshal(run)
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	vocabulary := Vocabulary()
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, e := range v {
				if !slices.Contains(vocabulary, k) {
					t.Errorf("Vocabulary() lacks the key %q", k)
				}
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(doc)
	for _, w := range []string{"success", "failure", "timeout", "Current", "Failed", "InProgress", "image-pull", "flux-system", "ClustersNotReady", "AllClustersCurrent"} {
		if !slices.Contains(vocabulary, w) {
			t.Errorf("Vocabulary() lacks %q", w)
		}
	}
}
