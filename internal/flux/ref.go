// Package flux reads Flux objects: which object the user asked for, whether its status says
// done, still going or failed for the expected revision, and what its inventory lists.
//
// It does no I/O. The engine fetches Kustomizations and HelmReleases as unstructured objects
// and hands them to Evaluate and Inventory; this package only reads them. Field names, condition
// types and reasons follow kustomize-controller v1.9 (kustomize.toolkit.fluxcd.io/v1) and
// helm-controller v1.6 (helm.toolkit.fluxcd.io/v2).
package flux

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/org/app-status-action/internal/result"
)

// Kind is a Flux object kind this package can verify.
type Kind string

// The Flux kinds.
const (
	KindKustomization Kind = "Kustomization"
	KindHelmRelease   Kind = "HelmRelease"
	// KindResourceSet is the Flux Operator's ResourceSet (fluxcd.controlplane.io/v1): it
	// generates Flux objects from inputs and keeps an inventory of them, as a Kustomization.
	KindResourceSet Kind = "ResourceSet"
)

// kindInfo is what the engine needs to find a kind in a cluster and what a person types for it.
type kindInfo struct {
	gvr schema.GroupVersionResource
	cli string // the name the flux CLI uses, e.g. in `flux resume kustomization`
}

var kinds = map[Kind]kindInfo{
	KindKustomization: {
		gvr: schema.GroupVersionResource{Group: "kustomize.toolkit.fluxcd.io", Version: "v1", Resource: "kustomizations"},
		cli: "kustomization",
	},
	KindHelmRelease: {
		gvr: schema.GroupVersionResource{Group: "helm.toolkit.fluxcd.io", Version: "v2", Resource: "helmreleases"},
		cli: "helmrelease",
	},
	KindResourceSet: {
		gvr: schema.GroupVersionResource{Group: "fluxcd.controlplane.io", Version: "v1", Resource: "resourcesets"},
		cli: "resourceset",
	},
}

// kindAliases maps what a user may type before the first slash, lower-cased, to a Kind.
var kindAliases = map[string]Kind{
	"kustomization":  KindKustomization,
	"kustomizations": KindKustomization,
	"ks":             KindKustomization,
	"helmrelease":    KindHelmRelease,
	"helmreleases":   KindHelmRelease,
	"hr":             KindHelmRelease,
	"resourceset":    KindResourceSet,
	"resourcesets":   KindResourceSet,
	"rset":           KindResourceSet,
}

// GroupVersionResource is the API resource the engine reads the kind from.
func (k Kind) GroupVersionResource() schema.GroupVersionResource { return kinds[k].gvr }

// GroupVersionKind is the kind's API group, served version and kind.
func (k Kind) GroupVersionKind() schema.GroupVersionKind {
	gvr := kinds[k].gvr
	return gvr.GroupVersion().WithKind(string(k))
}

// IsFluxKind reports whether an object of the given API group and kind, as found in an
// inventory, is a Flux object this package can evaluate, so the engine can follow nested
// Kustomizations and HelmReleases. The version is not compared: inventories record the
// version an object was applied with, which may be an older one that the API still serves.
func IsFluxKind(group, kind string) (Kind, bool) {
	k := Kind(kind)
	info, ok := kinds[k]
	if !ok || info.gvr.Group != group {
		return "", false
	}
	return k, true
}

// Ref names one Flux object.
type Ref struct {
	Kind      Kind
	Namespace string
	Name      string
}

// ID is the object's reference the way the project prints them: Kind/namespace/name.
func (r Ref) ID() string { return result.ObjectID(string(r.Kind), r.Namespace, r.Name) }

const resourceUsage = "use kustomization/NAME (ks/NAME), helmrelease/NAME (hr/NAME) or resourceset/NAME (rset/NAME), optionally KIND/NAMESPACE/NAME"

// ParseResource reads a resource reference as a user writes it: KIND/NAME or
// KIND/NAMESPACE/NAME, where KIND is kustomization (ks), helmrelease (hr) or resourceset (rset)
// in any case.
// Without a namespace, defaultNamespace is used.
func ParseResource(s, defaultNamespace string) (Ref, error) {
	in := strings.TrimSpace(s)
	parts := strings.Split(in, "/")
	if len(parts) < 2 || len(parts) > 3 {
		return Ref{}, fmt.Errorf("resource %q: not KIND/NAME or KIND/NAMESPACE/NAME; %s", s, resourceUsage)
	}
	kind, ok := kindAliases[strings.ToLower(parts[0])]
	if !ok {
		if parts[0] == "" {
			return Ref{}, fmt.Errorf("resource %q: missing kind; %s", s, resourceUsage)
		}
		return Ref{}, fmt.Errorf("resource %q: unknown kind %q; %s", s, parts[0], resourceUsage)
	}
	ref := Ref{Kind: kind, Namespace: defaultNamespace, Name: parts[len(parts)-1]}
	if len(parts) == 3 {
		ref.Namespace = parts[1]
	}
	if ref.Namespace == "" {
		return Ref{}, fmt.Errorf("resource %q: no namespace; write %s/NAMESPACE/%s or set a default namespace", s, parts[0], ref.Name)
	}
	if errs := validation.IsDNS1123Label(ref.Namespace); len(errs) > 0 {
		return Ref{}, fmt.Errorf("resource %q: invalid namespace %q: %s", s, ref.Namespace, strings.Join(errs, "; "))
	}
	if ref.Name == "" {
		return Ref{}, fmt.Errorf("resource %q: missing name; %s", s, resourceUsage)
	}
	if errs := validation.IsDNS1123Subdomain(ref.Name); len(errs) > 0 {
		return Ref{}, fmt.Errorf("resource %q: invalid name %q: %s", s, ref.Name, strings.Join(errs, "; "))
	}
	return ref, nil
}
