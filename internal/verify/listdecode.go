package verify

import (
	"fmt"
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	kjson "sigs.k8s.io/json"
)

// newDynamicClient is dynamic.NewForConfigAndClient with lists decoded in one pass
// (decodeUnstructuredList): client-go reads a list's JSON five times (for its kind, for its
// items as raw messages, whole into a map it then drops the items of, and each item again),
// which was a third of the engine's CPU on a fleet of healthy clusters.
func newDynamicClient(config *rest.Config, h *http.Client) (*dynamic.DynamicClient, error) {
	cfg := dynamic.ConfigFor(config)
	cfg.NegotiatedSerializer = onePassLists{cfg.NegotiatedSerializer}
	// As dynamic.NewForConfigAndClient: every request of the dynamic client gives its path.
	cfg.GroupVersion = nil
	cfg.APIPath = "/if-you-see-this-search-for-the-break"
	rc, err := rest.UnversionedRESTClientForConfigAndClient(cfg, h)
	if err != nil {
		return nil, err
	}
	return dynamic.New(rc), nil
}

// onePassLists is the dynamic client's serializer, with its JSON decoder replaced for lists.
type onePassLists struct {
	runtime.NegotiatedSerializer
}

func (s onePassLists) SupportedMediaTypes() []runtime.SerializerInfo {
	infos := s.NegotiatedSerializer.SupportedMediaTypes()
	out := make([]runtime.SerializerInfo, len(infos))
	for i, info := range infos {
		if info.MediaType == runtime.ContentTypeJSON {
			info.Serializer = onePassListSerializer{info.Serializer}
		}
		out[i] = info
	}
	return out
}

// onePassListSerializer decodes into an UnstructuredList with decodeUnstructuredList and
// leaves everything else to the dynamic client's own serializer.
type onePassListSerializer struct {
	runtime.Serializer
}

func (s onePassListSerializer) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	list, ok := into.(*unstructured.UnstructuredList)
	if !ok {
		return s.Serializer.Decode(data, defaults, into)
	}
	if err := decodeUnstructuredList(data, list); err != nil {
		return nil, nil, err
	}
	gvk := list.GroupVersionKind()
	return list, &gvk, nil
}

// decodeUnstructuredList decodes a JSON list as client-go's dynamic client does (the JSON
// serializer, then unstructured.UnstructuredList's UnmarshalJSON: numbers that are integers as
// int64, keys case-sensitive, items given the list's apiVersion and kind without "List" when
// they have neither, an error for a body that is not an object with a string kind, for items
// that are not a list and for an item that is not an object), in one pass over the body.
// TestDecodeUnstructuredList and FuzzDecodeUnstructuredList hold it to client-go's result.
func decodeUnstructuredList(data []byte, list *unstructured.UnstructuredList) error {
	var m map[string]any
	if err := kjson.UnmarshalCaseSensitivePreserveInts(data, &m); err != nil {
		return err
	}
	for key, v := range m {
		// client-go reads the kind first with encoding/json, which matches keys whatever
		// their case, and fails on one that is not a string.
		if (strings.EqualFold(key, "apiVersion") || strings.EqualFold(key, "kind")) && v != nil {
			if _, isString := v.(string); !isString {
				return fmt.Errorf("couldn't get version/kind; json parse error: %s is a %T, not a string", key, v)
			}
		}
	}
	var items []any
	switch v := m["items"].(type) {
	case nil:
	case []any:
		items = v
	default:
		return fmt.Errorf("json: cannot unmarshal %T into the items of a list", v)
	}
	delete(m, "items")
	list.Object = m
	apiVersion, kind := list.GetAPIVersion(), list.GetKind()
	if kind == "" {
		return runtime.NewMissingKindErr(string(data))
	}
	itemKind := strings.TrimSuffix(kind, "List")
	list.Items = make([]unstructured.Unstructured, 0, len(items))
	for _, it := range items {
		obj, ok := it.(map[string]any)
		if !ok && it != nil {
			return fmt.Errorf("json: cannot unmarshal %T into an item of a list", it)
		}
		u := unstructured.Unstructured{Object: obj}
		if u.GetKind() == "" && u.GetAPIVersion() == "" {
			u.SetKind(itemKind)
			u.SetAPIVersion(apiVersion)
		}
		list.Items = append(list.Items, u)
	}
	return nil
}
