// Package rbac checks deploy/rbac's kustomizations with kustomize's own builder (krusty, as
// kubectl apply -k and Flux's kustomize-controller build them): each builds, holds what it
// says, and the read-only base grants no write verb.
package rbac

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/api/resource"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// root is deploy/rbac.
var root = filepath.Join("..", "..", "deploy", "rbac")

// build runs kustomize on dir (below deploy/rbac) as kubectl apply -k does: files only from
// the kustomization's own folder, other kustomizations by their folder.
func build(t *testing.T, dir string) resmap.ResMap {
	t.Helper()
	m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), filepath.Join(root, dir))
	if err != nil {
		t.Fatalf("kustomize build deploy/rbac/%s: %v", dir, err)
	}
	return m
}

// ids are the objects of m as Kind/namespace/name (Kind/name when cluster-scoped), sorted.
func ids(m resmap.ResMap) []string {
	var out []string
	for _, r := range m.Resources() {
		id := r.GetKind() + "/" + r.GetName()
		if ns := r.GetNamespace(); ns != "" {
			id = r.GetKind() + "/" + ns + "/" + r.GetName()
		}
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// decode reads a built object into its API type.
func decode(r *resource.Resource, into any) error {
	m, err := r.Map()
	if err != nil {
		return err
	}
	return runtime.DefaultUnstructuredConverter.FromUnstructured(m, into)
}

var (
	readOnly = []string{
		"ClusterRole/app-status-reader",
		"ClusterRoleBinding/app-status-reader",
		"ServiceAccount/flux-system/app-status",
	}
	reconcile = []string{
		"ClusterRole/app-status-reconciler",
		"ClusterRoleBinding/app-status-reconciler",
		"ValidatingAdmissionPolicy/app-status-reconcile-only",
		"ValidatingAdmissionPolicyBinding/app-status-reconcile-only",
	}
	force = []string{
		"ClusterRole/app-status-reconciler-force",
		"ClusterRoleBinding/app-status-reconciler-force",
	}
)

func sorted(lists ...[]string) []string {
	out := slices.Concat(lists...)
	slices.Sort(out)
	return out
}

// TestKustomizationsBuild: deploy/rbac (what a Flux Kustomization pointed at the folder
// applies) is the read-only base and nothing else; the reconcile overlay adds the role, its
// admission policy and its binding; the force overlay adds the force verb on top.
func TestKustomizationsBuild(t *testing.T) {
	t.Parallel()
	tests := []struct {
		dir  string
		want []string
	}{
		{dir: ".", want: readOnly},
		{dir: "base", want: readOnly},
		{dir: "reconcile", want: sorted(readOnly, reconcile)},
		{dir: "force", want: sorted(readOnly, reconcile, force)},
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, ids(build(t, tt.dir))); diff != "" {
				t.Errorf("deploy/rbac/%s builds (-want +got):\n%s", tt.dir, diff)
			}
		})
	}
}

// TestBaseIsReadOnly: the base, built as deploy/rbac and as deploy/rbac/base, grants get,
// list and watch and nothing else, reads no Secret, holds no admission policy, and binds only
// its own role.
func TestBaseIsReadOnly(t *testing.T) {
	t.Parallel()
	for _, dir := range []string{".", "base"} {
		t.Run(dir, func(t *testing.T) {
			t.Parallel()
			m := build(t, dir)
			roles := map[string]bool{}
			for _, r := range m.Resources() {
				switch r.GetKind() {
				case "ClusterRole", "Role":
					var role rbacv1.ClusterRole
					if err := decode(r, &role); err != nil {
						t.Fatalf("%s/%s: %v", r.GetKind(), r.GetName(), err)
					}
					roles[r.GetKind()+"/"+r.GetName()] = true
					if role.AggregationRule != nil {
						t.Errorf("%s/%s aggregates other roles: its rights would not be its own", r.GetKind(), r.GetName())
					}
					for _, rule := range role.Rules {
						for _, v := range rule.Verbs {
							if v != "get" && v != "list" && v != "watch" {
								t.Errorf("%s/%s grants %q on %v: the base must be read-only", r.GetKind(), r.GetName(), v, rule.Resources)
							}
						}
						for _, res := range rule.Resources {
							if res == "*" || strings.HasPrefix(res, "secrets") {
								t.Errorf("%s/%s grants %v on %q: the base reads no Secret", r.GetKind(), r.GetName(), rule.Verbs, res)
							}
						}
						if len(rule.NonResourceURLs) > 0 {
							t.Errorf("%s/%s grants non-resource URLs %v", r.GetKind(), r.GetName(), rule.NonResourceURLs)
						}
					}
				case "ClusterRoleBinding", "RoleBinding", "ServiceAccount":
				default:
					t.Errorf("the base holds a %s (%s): only roles, their bindings and the ServiceAccount belong there", r.GetKind(), r.GetName())
				}
			}
			for _, r := range m.Resources() {
				if k := r.GetKind(); k != "ClusterRoleBinding" && k != "RoleBinding" {
					continue
				}
				var b rbacv1.RoleBinding
				if err := decode(r, &b); err != nil {
					t.Fatalf("%s/%s: %v", r.GetKind(), r.GetName(), err)
				}
				if !roles[b.RoleRef.Kind+"/"+b.RoleRef.Name] {
					t.Errorf("%s/%s binds %s/%s, a role the base does not define (whatever it grants)", r.GetKind(), r.GetName(), b.RoleRef.Kind, b.RoleRef.Name)
				}
			}
		})
	}
}
