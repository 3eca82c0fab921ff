package verify

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/restmapper"

	"github.com/org/app-status-action/internal/assess"
)

// mapping finds the resource of a kind through discovery of its group version alone (the
// resources one group version serves, never the whole API: see discover). A kind the read
// does not find, or a read that failed, is read again once the read is mappingRetry old: a
// kind the cluster starts serving since, such as one whose CRD the app itself installs, is
// found then, and a kind first asked of an old read is never told "not served" from it.
func (s *clusterState) mapping(gvk schema.GroupVersionKind, now time.Time) (m *meta.RESTMapping, done bool, err error) {
	s.mappingsMu.Lock()
	m, ok := s.mappings[gvk]
	lastErr := s.mappingErrs[gvk]
	s.mappingsMu.Unlock()
	if ok {
		return m, true, nil
	}
	if m, ok := builtinMapping(gvk); ok {
		return m, true, nil
	}
	if gvk.Version == "" {
		// Flux's inventories and Helm's manifests name every object's version; this one
		// names none, and a kind is served per version.
		return nil, true, fmt.Errorf("the inventory gives %s no API version", schema.GroupKind{Group: gvk.Group, Kind: gvk.Kind})
	}
	// One read per group version, whatever number of its kinds the inventories list: they
	// share it, and reads of different group versions run at once.
	gv := gvk.GroupVersion()
	key := "discovery " + gv.String()
	read := func(context.Context) (any, error) {
		mapper, err := s.discover(gv)
		return discovered{mapper: mapper, at: now}, err
	}
	v, done, err := s.fetches.get(key, read)
	if done {
		m, err = mappingFrom(gvk, v, err)
		if d, _ := v.(discovered); err != nil && now.Sub(d.at) >= mappingRetry {
			s.fetches.forget(key)
			v, done, err = s.fetches.get(key, read)
			if done {
				m, err = mappingFrom(gvk, v, err)
			}
		}
	}
	if !done {
		// Asked again: the last answer stands meanwhile.
		return nil, lastErr != nil, lastErr
	}
	s.mappingsMu.Lock()
	defer s.mappingsMu.Unlock()
	if err != nil {
		if s.mappingErrs == nil {
			s.mappingErrs = map[schema.GroupVersionKind]error{}
		}
		s.mappingErrs[gvk] = err
		return nil, true, err
	}
	s.mappings[gvk] = m
	delete(s.mappingErrs, gvk)
	return m, true, nil
}

// builtinResources are the resources and scopes of the built-in kinds apps are made of,
// which kube-apiserver serves at these names in every version it has served them in: they
// need no discovery, so an inventory of them is listed on the pass that reads it, not a round
// trip (one per group version) and a pass later. Any other kind, and any other version of
// these groups, is discovered (mapping).
var builtinResources = map[schema.GroupVersionKind]struct {
	resource   string
	namespaced bool
}{
	{Version: "v1", Kind: "ConfigMap"}:                                              {"configmaps", true},
	{Version: "v1", Kind: "Secret"}:                                                 {"secrets", true},
	{Version: "v1", Kind: "Service"}:                                                {"services", true},
	{Version: "v1", Kind: "ServiceAccount"}:                                         {"serviceaccounts", true},
	{Version: "v1", Kind: "PersistentVolumeClaim"}:                                  {"persistentvolumeclaims", true},
	{Version: "v1", Kind: "Namespace"}:                                              {"namespaces", false},
	{Group: "apps", Version: "v1", Kind: "Deployment"}:                              {"deployments", true},
	{Group: "apps", Version: "v1", Kind: "StatefulSet"}:                             {"statefulsets", true},
	{Group: "apps", Version: "v1", Kind: "DaemonSet"}:                               {"daemonsets", true},
	{Group: "batch", Version: "v1", Kind: "Job"}:                                    {"jobs", true},
	{Group: "batch", Version: "v1", Kind: "CronJob"}:                                {"cronjobs", true},
	{Group: "networking.k8s.io", Version: "v1", Kind: "Ingress"}:                    {"ingresses", true},
	{Group: "networking.k8s.io", Version: "v1", Kind: "NetworkPolicy"}:              {"networkpolicies", true},
	{Group: "policy", Version: "v1", Kind: "PodDisruptionBudget"}:                   {"poddisruptionbudgets", true},
	{Group: "autoscaling", Version: "v2", Kind: "HorizontalPodAutoscaler"}:          {"horizontalpodautoscalers", true},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "Role"}:               {"roles", true},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "RoleBinding"}:        {"rolebindings", true},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"}:        {"clusterroles", false},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRoleBinding"}: {"clusterrolebindings", false},
}

// builtinMapping is the mapping of a kind of builtinResources; false for any other.
func builtinMapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, bool) {
	r, ok := builtinResources[gvk]
	if !ok {
		return nil, false
	}
	scope := meta.RESTScopeRoot
	if r.namespaced {
		scope = meta.RESTScopeNamespace
	}
	return &meta.RESTMapping{Resource: gvk.GroupVersion().WithResource(r.resource), GroupVersionKind: gvk, Scope: scope}, true
}

// mappingFrom is a kind's mapping in the read of its group version (a discovered, and the
// read's error).
func mappingFrom(gvk schema.GroupVersionKind, v any, readErr error) (*meta.RESTMapping, error) {
	if readErr != nil {
		return nil, discoveryError(gvk, readErr)
	}
	d, _ := v.(discovered)
	m, err := d.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	switch {
	case meta.IsNoMatchError(err):
		return nil, assess.NotServedError{GVK: gvk}
	case err != nil:
		return nil, fmt.Errorf("discover %s: %w", gvk.Kind, err)
	}
	return m, nil
}

// mappingRetry is how long a kind that could not be mapped waits before it is asked again:
// the decision's own (assess.MappingRetry), which rechecks then.
const mappingRetry = assess.MappingRetry

// discovered is the answer of discovery for a group version, and when it was asked.
type discovered struct {
	mapper meta.RESTMapper
	at     time.Time
}

// discover asks the API server for the resources of one group version (/apis/GROUP/VERSION,
// /api/v1) and returns client-go's discovery mapper over them: the same resource and scope
// for a kind as discovery of the whole API gives, for a few kilobytes. The whole API (what
// /api and /apis answer, aggregated) lists every resource of every CRD the cluster has, often
// megabytes to decode and hold per cluster, and fails or lags with any aggregated API server
// that is down. It runs off the assessment (fetcher): the discovery client has a deadline of
// its own and ends with the cluster's verification.
func (s *clusterState) discover(gv schema.GroupVersion) (meta.RESTMapper, error) {
	list, err := s.disco.ServerResourcesForGroupVersion(gv.String())
	if err != nil {
		return nil, err
	}
	group := metav1.APIGroup{
		Name:             gv.Group,
		Versions:         []metav1.GroupVersionForDiscovery{{GroupVersion: gv.String(), Version: gv.Version}},
		PreferredVersion: metav1.GroupVersionForDiscovery{GroupVersion: gv.String(), Version: gv.Version},
	}
	return restmapper.NewDiscoveryRESTMapper([]*restmapper.APIGroupResources{{
		Group:              group,
		VersionedResources: map[string][]metav1.APIResource{gv.Version: list.APIResources},
	}}), nil
}

// discoveryError says why a kind's group version could not be read: not served (404), or
// what the API server answered.
func discoveryError(gvk schema.GroupVersionKind, err error) error {
	if apierrors.IsNotFound(err) {
		return assess.NotServedError{GVK: gvk}
	}
	return fmt.Errorf("discover %s: %w", gvk.Kind, err)
}
