package flux

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/org/app-status-action/internal/result"
)

// ObjectRef is one object of a Flux object's inventory.
type ObjectRef struct {
	Group     string // empty for the core group
	Version   string
	Kind      string
	Namespace string // empty for cluster-scoped objects
	Name      string
}

// ID is the object's reference the way the project prints them: Kind/namespace/name, or
// Kind/name when cluster-scoped.
func (o ObjectRef) ID() string { return result.ObjectID(o.Kind, o.Namespace, o.Name) }

// Inventory lists what a Kustomization or HelmRelease applied, from
// .status.inventory.entries, sorted by ID (then group). An object without an inventory, such
// as one not reconciled yet, lists nothing.
func Inventory(obj *unstructured.Unstructured) ([]ObjectRef, error) {
	refs, _, err := InventoryIDs(obj)
	return refs, err
}

// InventoryIDs is Inventory with each object's ID (ObjectRef.ID), in the same order: made
// once here, for the sort, rather than again by every caller that needs them.
func InventoryIDs(obj *unstructured.Unstructured) ([]ObjectRef, []string, error) {
	if obj == nil {
		return []ObjectRef{}, []string{}, nil
	}
	entries, found, err := NestedSlice(obj.Object, "status", "inventory", "entries")
	if err != nil {
		return nil, nil, fmt.Errorf("read the inventory of %s/%s: %w", obj.GetNamespace(), obj.GetName(), err)
	}
	if !found {
		return []ObjectRef{}, []string{}, nil
	}
	refs := make([]ObjectRef, 0, len(entries))
	for i, e := range entries {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, nil, fmt.Errorf("inventory of %s/%s: entry %d is a %T, not an object with id and v", obj.GetNamespace(), obj.GetName(), i, e)
		}
		id, _ := m["id"].(string)
		ref, err := parseInventoryID(id)
		if err != nil {
			return nil, nil, fmt.Errorf("inventory of %s/%s: entry %d: %w", obj.GetNamespace(), obj.GetName(), i, err)
		}
		ref.Version, _ = m["v"].(string)
		refs = append(refs, ref)
	}
	ids := make([]string, len(refs))
	for i, r := range refs {
		ids[i] = r.ID()
	}
	// Sorted by ID, then group, then the order Flux listed them in (what a stable sort
	// gives): the entries' indexes are sorted, not the entries, which are five strings each.
	order := make([]int, len(refs))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		return cmp.Or(strings.Compare(ids[a], ids[b]), strings.Compare(refs[a].Group, refs[b].Group), cmp.Compare(a, b))
	})
	sortedRefs, sortedIDs := make([]ObjectRef, len(refs)), make([]string, len(refs))
	for i, j := range order {
		sortedRefs[i], sortedIDs[i] = refs[j], ids[j]
	}
	return sortedRefs, sortedIDs, nil
}

// parseInventoryID reads an inventory id, <namespace>_<name>_<group>_<kind>, as Flux writes
// it with cli-utils' ObjMetadata: the namespace is the first field, the group and kind the
// last two, and the name everything between; a colon in a name (RBAC names such as
// system:auth-delegator) is written as a double underscore. Unlike cli-utils this keeps
// single underscores in names, which some kinds allow; a name such as a___b is read as a:_b.
func parseInventoryID(id string) (ObjectRef, error) {
	bad := func(why string) (ObjectRef, error) {
		return ObjectRef{}, fmt.Errorf("inventory id %q %s; want <namespace>_<name>_<group>_<kind>, as kustomize-controller and helm-controller write it", id, why)
	}
	namespace, rest, ok := strings.Cut(id, "_")
	if !ok {
		return bad("has no field separator")
	}
	i := strings.LastIndex(rest, "_")
	if i < 0 {
		return bad("has too few fields")
	}
	rest, kind := rest[:i], rest[i+1:]
	i = strings.LastIndex(rest, "_")
	if i < 0 {
		return bad("has too few fields")
	}
	name, group := rest[:i], rest[i+1:]
	switch {
	case name == "":
		return bad("has an empty name")
	case kind == "":
		return bad("has an empty kind")
	}
	return ObjectRef{Group: group, Kind: kind, Namespace: namespace, Name: strings.ReplaceAll(name, "__", ":")}, nil
}
