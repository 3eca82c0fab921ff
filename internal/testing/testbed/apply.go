package testbed

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/restmapper"
)

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// DecodeManifests splits multi-document YAML into objects, skipping empty documents.
func DecodeManifests(data []byte) ([]*unstructured.Unstructured, error) {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var objs []*unstructured.Unstructured
	for {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return objs, nil
			}
			return nil, fmt.Errorf("decode manifests: %w", err)
		}
		if len(m) == 0 {
			continue
		}
		objs = append(objs, &unstructured.Unstructured{Object: m})
	}
}

// Apply server-side applies every object of a multi-document YAML, as field manager "testbed".
// Namespaced objects without a namespace go to namespace ns.
func (c *Cluster) Apply(ctx context.Context, ns string, manifests []byte) error {
	objs, err := DecodeManifests(manifests)
	if err != nil {
		return err
	}
	for _, obj := range objs {
		if err := c.ApplyObject(ctx, ns, obj); err != nil {
			return err
		}
	}
	return nil
}

// ApplyObject server-side applies one object.
func (c *Cluster) ApplyObject(ctx context.Context, ns string, obj *unstructured.Unstructured) error {
	mapping, err := c.mapping(ctx, obj.GroupVersionKind())
	if err != nil {
		return err
	}
	data, err := obj.MarshalJSON()
	if err != nil {
		return fmt.Errorf("testbed: encode %s: %w", obj.GetName(), err)
	}
	ri := c.Dynamic.Resource(mapping.Resource)
	force := true
	opts := metav1.PatchOptions{FieldManager: "testbed", Force: &force}
	if mapping.Scope.Name() == meta.RESTScopeNameNamespace {
		if obj.GetNamespace() == "" {
			obj.SetNamespace(ns)
			if data, err = obj.MarshalJSON(); err != nil {
				return fmt.Errorf("testbed: encode %s: %w", obj.GetName(), err)
			}
		}
		_, err = ri.Namespace(obj.GetNamespace()).Patch(ctx, obj.GetName(), types.ApplyPatchType, data, opts)
	} else {
		_, err = ri.Patch(ctx, obj.GetName(), types.ApplyPatchType, data, opts)
	}
	if err != nil {
		return fmt.Errorf("testbed: apply %s %s/%s in %s: %w", obj.GetKind(), obj.GetNamespace(), obj.GetName(), c.Name, err)
	}
	return nil
}

// mapping finds the resource of a kind, refreshing discovery once for kinds added since.
func (c *Cluster) mapping(ctx context.Context, gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for attempt := 0; ; attempt++ {
		mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(c.Kube.Discovery()))
		m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err == nil {
			return m, nil
		}
		if attempt >= 20 || !meta.IsNoMatchError(err) {
			return nil, fmt.Errorf("testbed: find resource of %s in %s: %w", gvk, c.Name, err)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// applyCRDs creates the Flux CRDs, and the Flux Operator's ResourceSet and FluxReport, and
// waits until the API server serves them.
func (c *Cluster) applyCRDs(ctx context.Context) error {
	var files []string
	for _, dir := range []string{c.bed.Bins.CRDDir(), c.bed.Bins.OperatorCRDDir()} {
		found, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
		if err != nil || len(found) == 0 {
			return fmt.Errorf("testbed: no CRDs in %s (run hack/build-bins.sh)", dir)
		}
		sort.Strings(found)
		files = append(files, found...)
	}
	var manifests [][]byte
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("testbed: read CRD: %w", err)
		}
		manifests = append(manifests, data)
	}
	return c.applyCRDManifests(ctx, manifests...)
}

// applyCRDManifests creates the CRDs of the manifests and waits until the API server serves
// them.
func (c *Cluster) applyCRDManifests(ctx context.Context, manifests ...[]byte) error {
	var names []string
	for _, data := range manifests {
		objs, err := DecodeManifests(data)
		if err != nil {
			return fmt.Errorf("testbed: decode CRDs: %w", err)
		}
		for _, obj := range objs {
			data, err := obj.MarshalJSON()
			if err != nil {
				return fmt.Errorf("testbed: encode CRD %s: %w", obj.GetName(), err)
			}
			force := true
			if _, err := c.Dynamic.Resource(crdGVR).Patch(ctx, obj.GetName(), types.ApplyPatchType, data,
				metav1.PatchOptions{FieldManager: "testbed", Force: &force}); err != nil {
				return fmt.Errorf("testbed: apply CRD %s in %s: %w", obj.GetName(), c.Name, err)
			}
			names = append(names, obj.GetName())
		}
	}
	for _, name := range names {
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			crd, err := c.Dynamic.Resource(crdGVR).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, nil
			}
			conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
			for _, cond := range conds {
				m, _ := cond.(map[string]any)
				if m["type"] == "Established" && m["status"] == "True" {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			return fmt.Errorf("testbed: CRD %s not established in %s: %w", name, c.Name, err)
		}
	}
	return nil
}
