package testbed

import (
	"cmp"
	"context"
	"fmt"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// KustomizationGVR and HelmReleaseGVR are the Flux kinds the product verifies.
var (
	KustomizationGVR = schema.GroupVersionResource{Group: "kustomize.toolkit.fluxcd.io", Version: "v1", Resource: "kustomizations"}
	HelmReleaseGVR   = schema.GroupVersionResource{Group: "helm.toolkit.fluxcd.io", Version: "v2", Resource: "helmreleases"}
)

// Kustomization describes a Flux Kustomization that applies the GitRepository of the same
// name (in namespace flux-system) into TargetNamespace.
type Kustomization struct {
	Name string
	// SourceKind is the kind of its source, of the same name: GitRepository (the default) or
	// OCIRepository (published with PublishOCI).
	SourceKind string
	// Source names its source when it is not Name; Path is spec.path ("./" when empty).
	Source          string
	Path            string
	TargetNamespace string
	Suspend         bool
	Wait            bool     // spec.wait: Flux health-checks what it applied
	DependsOn       []string // names of Kustomizations in flux-system
	Timeout         string   // spec.timeout, e.g. "30s"
	// RetryInterval is spec.retryInterval: how soon kustomize-controller tries again after a
	// failure (its interval, 10m, when empty).
	RetryInterval string
	// HealthCheckExprs are spec.healthCheckExprs: CEL health checks per kind.
	HealthCheckExprs []map[string]any
}

// Manifest renders the Kustomization.
func (k Kustomization) Manifest() *unstructured.Unstructured {
	spec := map[string]any{
		"interval":        "10m",
		"path":            cmp.Or(k.Path, "./"),
		"prune":           true,
		"targetNamespace": k.TargetNamespace,
		"sourceRef":       map[string]any{"kind": cmp.Or(k.SourceKind, "GitRepository"), "name": cmp.Or(k.Source, k.Name)},
		"suspend":         k.Suspend,
		"wait":            k.Wait,
	}
	if k.RetryInterval != "" {
		spec["retryInterval"] = k.RetryInterval
	}
	if k.Timeout != "" {
		spec["timeout"] = k.Timeout
	}
	if len(k.HealthCheckExprs) > 0 {
		exprs := make([]any, len(k.HealthCheckExprs))
		for i, e := range k.HealthCheckExprs {
			exprs[i] = e
		}
		spec["healthCheckExprs"] = exprs
	}
	if len(k.DependsOn) > 0 {
		var deps []any
		for _, d := range k.DependsOn {
			deps = append(deps, map[string]any{"name": d})
		}
		spec["dependsOn"] = deps
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kustomize.toolkit.fluxcd.io/v1",
		"kind":       "Kustomization",
		"metadata":   map[string]any{"name": k.Name, "namespace": "flux-system"},
		"spec":       spec,
	}}
}

// DeployApp publishes the files under dir as a new revision of the GitRepository k.Name and
// applies the Kustomization k, creating its target namespace. It returns the published
// artifact; Flux applies it asynchronously.
func (c *Cluster) DeployApp(ctx context.Context, k Kustomization, dir, commit string) (Artifact, error) {
	if err := c.EnsureNamespace(ctx, k.TargetNamespace); err != nil {
		return Artifact{}, err
	}
	art, err := c.PublishGit(ctx, "flux-system", k.Name, dir, commit)
	if err != nil {
		return Artifact{}, err
	}
	if err := c.ApplyObject(ctx, "flux-system", k.Manifest()); err != nil {
		return Artifact{}, err
	}
	return art, nil
}

// WaitFluxApplied waits until the Flux object is Ready with lastAppliedRevision == revision.
func (c *Cluster) WaitFluxApplied(ctx context.Context, gvr schema.GroupVersionResource, ns, name, revision string) error {
	var last *unstructured.Unstructured
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		obj, err := c.Dynamic.Resource(gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		last = obj
		applied, _, _ := unstructured.NestedString(obj.Object, "status", "lastAppliedRevision")
		conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
		for _, cond := range conds {
			m, _ := cond.(map[string]any)
			if m["type"] == "Ready" && m["status"] == "True" && applied == revision {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("cluster %s: %s %s/%s did not apply %s: %w (status: %v)", c.Name, gvr.Resource, ns, name, revision, err, last)
	}
	return nil
}

// TokenKubeconfig creates a ServiceAccount ns/name with a token and returns a kubeconfig that
// authenticates with that token, as a user would pass one in a secret. rules, when given, are
// granted to the ServiceAccount through a ClusterRole; without them it may read nothing.
func (c *Cluster) TokenKubeconfig(ctx context.Context, ns, name string, rules []rbacv1.PolicyRule) ([]byte, error) {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	if _, err := c.Kube.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, fmt.Errorf("testbed: create service account %s/%s: %w", ns, name, err)
	}
	if len(rules) > 0 {
		roleName := "testbed-" + ns + "-" + name
		role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: roleName}, Rules: rules}
		if _, err := c.Kube.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("testbed: create cluster role %s: %w", roleName, err)
		}
		binding := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: roleName},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: roleName},
			Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: ns, Name: name}},
		}
		if _, err := c.Kube.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, fmt.Errorf("testbed: bind cluster role %s: %w", roleName, err)
		}
	}
	return c.ServiceAccountKubeconfig(ctx, ns, name)
}

// ServiceAccountKubeconfig returns a kubeconfig that authenticates as the existing
// ServiceAccount ns/name with a token of one hour, as a user would put one in a secret.
func (c *Cluster) ServiceAccountKubeconfig(ctx context.Context, ns, name string) ([]byte, error) {
	expiry := int64(3600)
	tok, err := c.Kube.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("testbed: token for %s/%s: %w", ns, name, err)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[c.Name] = &clientcmdapi.Cluster{Server: c.Config.Host, CertificateAuthorityData: c.Config.CAData, InsecureSkipTLSVerify: c.Config.Insecure}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: tok.Status.Token}
	cfg.Contexts[c.Name] = &clientcmdapi.Context{Cluster: c.Name, AuthInfo: name}
	cfg.CurrentContext = c.Name
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, fmt.Errorf("testbed: write token kubeconfig: %w", err)
	}
	return data, nil
}
