package fakeapi

import "fmt"

// The kinds App serves.
var (
	KustomizationResource = Resource{Group: "kustomize.toolkit.fluxcd.io", Version: "v1", Kind: "Kustomization", Plural: "kustomizations", Namespaced: true}
	DeploymentResource    = Resource{Group: "apps", Version: "v1", Kind: "Deployment", Plural: "deployments", Namespaced: true}
	ServiceResource       = Resource{Version: "v1", Kind: "Service", Plural: "services", Namespaced: true}
	ConfigMapResource     = Resource{Version: "v1", Kind: "ConfigMap", Plural: "configmaps", Namespaced: true}
)

// App is a Flux app as a cluster holds it once rolled out: the Kustomization flux-system/NAME,
// Ready on revision, whose inventory lists objects Deployments, Services and ConfigMaps (in
// turn) in namespace NAME, every one Current. It returns what Options needs.
func App(name, revision string, objects int) ([]Resource, []map[string]any) {
	var entries []any
	var objs []map[string]any
	for i := range objects {
		n := fmt.Sprintf("%s-%03d", name, i)
		meta := map[string]any{"name": n, "namespace": name, "generation": int64(1), "uid": fmt.Sprintf("uid-%s", n), "resourceVersion": "1"}
		switch i % 3 {
		case 0:
			entries = append(entries, map[string]any{"id": fmt.Sprintf("%s_%s_apps_Deployment", name, n), "v": "v1"})
			objs = append(objs, map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta,
				"spec": map[string]any{"replicas": int64(2)},
				"status": map[string]any{"observedGeneration": int64(1), "replicas": int64(2), "updatedReplicas": int64(2),
					"readyReplicas": int64(2), "availableReplicas": int64(2),
					"conditions": []any{
						map[string]any{"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable"},
						map[string]any{"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable"},
					}}})
		case 1:
			entries = append(entries, map[string]any{"id": fmt.Sprintf("%s_%s__Service", name, n), "v": "v1"})
			objs = append(objs, map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": meta,
				"spec": map[string]any{"type": "ClusterIP", "clusterIP": "10.96.0.10"}})
		default:
			entries = append(entries, map[string]any{"id": fmt.Sprintf("%s_%s__ConfigMap", name, n), "v": "v1"})
			objs = append(objs, map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": map[string]any{"k": "v"}})
		}
	}
	ks := map[string]any{
		"apiVersion": "kustomize.toolkit.fluxcd.io/v1", "kind": "Kustomization",
		"metadata": map[string]any{"name": name, "namespace": "flux-system", "generation": int64(1), "uid": "uid-ks-" + name, "resourceVersion": "1"},
		"spec":     map[string]any{"interval": "10m", "path": "./", "prune": true, "sourceRef": map[string]any{"kind": "GitRepository", "name": name}},
		"status": map[string]any{
			"observedGeneration": int64(1), "lastAppliedRevision": revision, "lastAttemptedRevision": revision,
			"conditions": []any{map[string]any{"type": "Ready", "status": "True", "reason": "ReconciliationSucceeded",
				"message": "Applied revision: " + revision, "observedGeneration": int64(1)}},
			"inventory": map[string]any{"entries": entries},
		},
	}
	return []Resource{KustomizationResource, DeploymentResource, ServiceResource, ConfigMapResource}, append([]map[string]any{ks}, objs...)
}
