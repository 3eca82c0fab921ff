package fakeapi_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/org/app-status-action/internal/testing/fakeapi"
)

// contentTypes records the Content-Type of every answer.
type contentTypes struct {
	rt  http.RoundTripper
	got []string
}

func (c *contentTypes) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.rt.RoundTrip(r)
	if err == nil {
		c.got = append(c.got, resp.Header.Get("Content-Type"))
	}
	return resp, err
}

// The metadata client's gets and lists are answered in protobuf, as kube-apiserver answers
// them, with the objects' metadata only.
func TestMetadataInProtobuf(t *testing.T) {
	resources, objects := fakeapi.App("app", "main@sha1:a1b2c3d4e5f60718293a4b5c6d7e8f9012345678", 6)
	s := fakeapi.Start(fakeapi.Options{Resources: resources, Objects: objects})
	t.Cleanup(s.Close)
	types := &contentTypes{}
	md, err := metadata.NewForConfig(&rest.Config{Host: s.URL(), WrapTransport: func(rt http.RoundTripper) http.RoundTripper {
		types.rt = rt
		return types
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	kustomizations := schema.GroupVersionResource{Group: "kustomize.toolkit.fluxcd.io", Version: "v1", Resource: "kustomizations"}
	app, err := md.Resource(kustomizations).Namespace("flux-system").Get(ctx, "app", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if app.Name != "app" || app.Namespace != "flux-system" || app.Generation == 0 {
		t.Errorf("got %s/%s generation %d, want flux-system/app with its generation", app.Namespace, app.Name, app.Generation)
	}
	list, err := md.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).Namespace("app").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, item := range list.Items {
		names = append(names, item.Namespace+"/"+item.Name)
	}
	if len(names) == 0 || list.ResourceVersion != "1" {
		t.Errorf("configmaps %q at resourceVersion %q, want some at 1", names, list.ResourceVersion)
	}
	if diff := cmp.Diff([]string{"application/vnd.kubernetes.protobuf", "application/vnd.kubernetes.protobuf"}, types.got); diff != "" {
		t.Errorf("content types (-want +got):\n%s", diff)
	}
}

// TestRefusals: a refused resource is refused in its namespace alone, with the status asked
// for, as client-go reads it; elsewhere it is served.
func TestRefusals(t *testing.T) {
	t.Parallel()
	resources, objects := fakeapi.App("app", "main@sha1:a1b2c3d4e5f60718293a4b5c6d7e8f9012345678", 3)
	s := fakeapi.Start(fakeapi.Options{Resources: resources, Objects: objects, Refusals: []fakeapi.Refusal{
		{Plural: "deployments", Namespace: "app", Code: http.StatusNotFound},
		{Plural: "services", Namespace: "app", Code: http.StatusForbidden},
		{Plural: "configmaps", Namespace: "app", Code: http.StatusInternalServerError},
	}})
	t.Cleanup(s.Close)
	client, err := dynamic.NewForConfig(&rest.Config{Host: s.URL()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tests := []struct {
		resource  schema.GroupVersionResource
		namespace string
		is        func(error) bool
	}{
		{schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, "app", apierrors.IsNotFound},
		{schema.GroupVersionResource{Version: "v1", Resource: "services"}, "app", apierrors.IsForbidden},
		{schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, "app", apierrors.IsInternalError},
		{schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, "other", nil},
	}
	for _, tt := range tests {
		_, err := client.Resource(tt.resource).Namespace(tt.namespace).List(ctx, metav1.ListOptions{})
		switch {
		case tt.is == nil && err != nil:
			t.Errorf("list %s in %s: %v, want it served", tt.resource.Resource, tt.namespace, err)
		case tt.is != nil && !tt.is(err):
			t.Errorf("list %s in %s: error %v, want it refused with the status asked for", tt.resource.Resource, tt.namespace, err)
		}
	}
}

// TestSet: an object Set is listed at the server's next revision, the lists after it too, in
// numbers or, with OpaqueRevisions, in strings that are no numbers.
func TestSet(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name           string
		opaque         bool
		wantBefore     string
		wantAfter      string
		wantObjectsRVs []string
	}{
		{name: "numbered", wantBefore: "1", wantAfter: "2", wantObjectsRVs: []string{"1", "2"}},
		{name: "opaque", opaque: true, wantBefore: "opaque-4", wantAfter: "opaque-5", wantObjectsRVs: []string{"opaque-4", "opaque-5"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			resources, objects := fakeapi.App("app", "main@sha1:a1b2c3d4e5f60718293a4b5c6d7e8f9012345678", 2)
			s := fakeapi.Start(fakeapi.Options{Resources: resources, Objects: objects, OpaqueRevisions: tt.opaque})
			t.Cleanup(s.Close)
			client, err := dynamic.NewForConfig(&rest.Config{Host: s.URL()})
			if err != nil {
				t.Fatal(err)
			}
			deployments := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
			services := schema.GroupVersionResource{Version: "v1", Resource: "services"}
			list := func(gvr schema.GroupVersionResource) (string, []string) {
				l, err := client.Resource(gvr).Namespace("app").List(t.Context(), metav1.ListOptions{})
				if err != nil {
					t.Fatal(err)
				}
				var rvs []string
				for _, it := range l.Items {
					rvs = append(rvs, it.GetResourceVersion())
				}
				return l.GetResourceVersion(), rvs
			}
			before, _ := list(deployments)
			changed := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
				"metadata": map[string]any{"name": "app-000", "namespace": "app", "resourceVersion": "ignored"}, "spec": map[string]any{"replicas": int64(3)}}
			s.Set(changed)
			after, _ := list(deployments)
			_, serviceRVs := list(services)
			_, deploymentRVs := list(deployments)
			got := []string{serviceRVs[0], deploymentRVs[0]}
			if before != tt.wantBefore || after != tt.wantAfter {
				t.Errorf("lists at %q, then %q after Set, want %q, then %q", before, after, tt.wantBefore, tt.wantAfter)
			}
			if diff := cmp.Diff(tt.wantObjectsRVs, got); diff != "" {
				t.Errorf("resourceVersions of the Service and the Deployment Set (-want +got):\n%s", diff)
			}
			if len(deploymentRVs) != 1 {
				t.Errorf("%d deployments after Set, want the one replaced", len(deploymentRVs))
			}
		})
	}
}
