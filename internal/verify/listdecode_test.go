package verify

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// listBodies are list bodies as API servers send them, and the odd ones a hostile or broken
// server could.
var listBodies = []string{
	`{"apiVersion":"v1","kind":"ConfigMapList","metadata":{"resourceVersion":"12"},"items":[]}`,
	`{"apiVersion":"apps/v1","kind":"DeploymentList","metadata":{"resourceVersion":"7","continue":"abc"},"items":[` +
		`{"metadata":{"name":"a","namespace":"n","generation":3},"spec":{"replicas":2,"ratio":0.5,"big":18446744073709551616},` +
		`"status":{"observedGeneration":3,"conditions":[{"type":"Available","status":"True"}]}},` +
		`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"b"}}]}`,
	`{"apiVersion":"kustomize.toolkit.fluxcd.io/v1","kind":"KustomizationList","items":null}`,
	`{"apiVersion":"v1","kind":"List","items":[null,{"kind":"Pod"},{"apiVersion":"v1"}]}`,
	`{"apiVersion":"v1","kind":"PodList"}`,
	`{"kind":"PodList","items":[{}]}`,
	`{"apiVersion":"v1","kind":"PodList","items":{}}`,
	`{"apiVersion":"v1","kind":"PodList","items":"x"}`,
	`{"apiVersion":"v1","kind":"PodList","items":[1]}`,
	`{"apiVersion":"v1","kind":"PodList","items":[[]]}`,
	`{"apiVersion":"v1","items":[]}`,
	`{"apiVersion":"v1","kind":"","items":[]}`,
	`{"apiVersion":5,"kind":"PodList","items":[]}`,
	`{"apiVersion":"v1","kind":["PodList"],"items":[]}`,
	`{"apiVersion":"v1","kind":"PodList","KIND":7,"items":[]}`,
	`{"apiVersion":"v1","kind":"PodList","Kind":"Other","items":[]}`,
	`{"apiVersion":"v1","kind":"PodList","kind":"SecretList","items":[{}]}`,
	`{"apiVersion":"v1","kind":"PodList","items":[],"items":[{}]}`,
	`{"apiVersion":null,"kind":"PodList","items":[]}`,
	`{"apiVersion":"v1","kind":null,"items":[]}`,
	`{"apiVersion":"v1","kind":"PodList","items":[{"metadata":{"name":"\u2028\ud800"}}]}`,
	`{"apiVersion":"v1","kind":"PodList","items":[]`,
	`[{"apiVersion":"v1","kind":"PodList"}]`,
	`"PodList"`,
	`null`,
	``,
	`{}`,
	`{"apiVersion":"v1","kind":"PodList","items":[{"metadata":{"name":"a"}}]} trailing`,
	`{"apiVersion":"v1","kind":"PodList","items":[{"n":1e400}]}`,
	`{"apiVersion":"apps/v1/","kind":"PodList","items":[{}]}`,
	`{"apiVersion":"/v1","kind":"PodList","items":[{}]}`,
	`{"apiVersion":"v1","kind":5,"kind":"PodList","items":[]}`,
	`{"apiVersion":"v1","kind":"PodList","items":5,"items":[]}`,
	`{"apiVersion":"v1","kind":"PodList","items":[{"metadata":{"name":"a","name":"b"}}]}`,
	`{"apiVersion":"v1","kınd":5,"kind":"PodList","items":[]}`,
	`{"apiVersion":"v1","APIVERSION":"apps/v1","kind":"PodList","items":[{}]}`,
	`{"apiVersion":"v1","kind":"PodList","items":[{"n":-0,"m":1.0,"o":9223372036854775807,"p":-9223372036854775809}]}`,
}

// clientGoDecode is how client-go's dynamic client decodes a list body.
func clientGoDecode(t testing.TB, data []byte) (*unstructured.UnstructuredList, error) {
	t.Helper()
	for _, info := range dynamic.ConfigFor(&rest.Config{}).NegotiatedSerializer.SupportedMediaTypes() {
		if info.MediaType == runtime.ContentTypeJSON {
			list := &unstructured.UnstructuredList{}
			_, _, err := info.Serializer.Decode(data, nil, list)
			return list, err
		}
	}
	t.Fatal("the dynamic client has no JSON serializer")
	return nil, nil
}

// onePassDecode is how this package's dynamic client decodes it.
func onePassDecode(t testing.TB, data []byte) (*unstructured.UnstructuredList, error) {
	t.Helper()
	for _, info := range (onePassLists{dynamic.ConfigFor(&rest.Config{}).NegotiatedSerializer}).SupportedMediaTypes() {
		if info.MediaType == runtime.ContentTypeJSON {
			list := &unstructured.UnstructuredList{}
			out, _, err := info.Serializer.Decode(data, nil, list)
			if err == nil && out != list {
				// rest.Result.Into reads the object it gave, not the one returned.
				t.Fatalf("decode %q: returned %p, not the list it was given (%p)", data, out, list)
			}
			return list, err
		}
	}
	t.Fatal("onePassLists has no JSON serializer")
	return nil, nil
}

func sameDecoding(t *testing.T, data []byte) {
	t.Helper()
	want, wantErr := clientGoDecode(t, data)
	got, err := onePassDecode(t, data)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("decode %q: error %v, client-go's %v", data, err, wantErr)
	}
	if err != nil {
		return
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("decode %q: (-client-go +one pass)\n%s", data, diff)
	}
}

// TestDecodeUnstructuredList holds the one-pass list decoding to client-go's, on the lists
// API servers send and on malformed ones.
func TestDecodeUnstructuredList(t *testing.T) {
	for _, body := range listBodies {
		t.Run(body, func(t *testing.T) { sameDecoding(t, []byte(body)) })
	}
}

// TestOnePassListsLeavesTheRestToClientGo: what is not decoded into a list (the Status of an
// error answer, an object) is decoded by client-go's own serializer.
func TestOnePassListsLeavesTheRestToClientGo(t *testing.T) {
	jsonSerializer := func(s runtime.NegotiatedSerializer) runtime.Serializer {
		for _, info := range s.SupportedMediaTypes() {
			if info.MediaType == runtime.ContentTypeJSON {
				return info.Serializer
			}
		}
		t.Fatal("no JSON serializer")
		return nil
	}
	clientGo := jsonSerializer(dynamic.ConfigFor(&rest.Config{}).NegotiatedSerializer)
	onePass := jsonSerializer(onePassLists{dynamic.ConfigFor(&rest.Config{}).NegotiatedSerializer})
	for _, tc := range []struct {
		name string
		data string
		into func() runtime.Object
	}{
		{"status", `{"apiVersion":"v1","kind":"Status","status":"Failure","message":"no","reason":"Forbidden","code":403}`, func() runtime.Object { return nil }},
		{"object", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}}`, func() runtime.Object { return &unstructured.Unstructured{} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, _, wantErr := clientGo.Decode([]byte(tc.data), nil, tc.into())
			got, _, err := onePass.Decode([]byte(tc.data), nil, tc.into())
			if err != nil || wantErr != nil {
				t.Fatalf("errors %v, client-go's %v", err, wantErr)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("(-client-go +one pass)\n%s", diff)
			}
		})
	}
}

func FuzzDecodeUnstructuredList(f *testing.F) {
	for _, body := range listBodies {
		f.Add([]byte(body))
	}
	f.Fuzz(sameDecoding)
}
