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

	"github.com/org/app-status-action/internal/jsontree"
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
	handled, err := decodeUnstructuredList(data, list)
	if !handled {
		// A body no API server sends (a key twice, a kind in two cases): client-go's
		// own decoding says what it makes of it.
		// (list is left as it was given.)
		return s.Serializer.Decode(data, defaults, into)
	}
	if err != nil {
		return nil, nil, err
	}
	gvk := list.GroupVersionKind()
	return list, &gvk, nil
}

// decodeUnstructuredList decodes a JSON list as client-go's dynamic client does (the JSON
// serializer, then unstructured.UnstructuredList's UnmarshalJSON: numbers that are integers as
// int64, keys case-sensitive, items given the list's apiVersion and kind without "List" when
// they have neither, an error for a body that is not an object with a string kind and a valid
// apiVersion, for items that are not a list and for an item that is not an object), in one
// pass over the body. A body with a key twice in an object, or with apiVersion or kind in
// more than one case, is not handled (handled is false): client-go reads the first or the
// last of them, depending on the pass. TestDecodeUnstructuredList and
// FuzzDecodeUnstructuredList hold it to client-go's result.
func decodeUnstructuredList(data []byte, list *unstructured.UnstructuredList) (handled bool, err error) {
	m, ok := jsontree.DecodeObject(data)
	if !ok {
		// Not a body an API server sends: sigs.k8s.io/json says what it is.
		strict, err := kjson.UnmarshalStrict(data, &m, kjson.DisallowDuplicateFields)
		if err != nil {
			return true, err
		}
		if len(strict) > 0 {
			return false, nil
		}
	}
	// client-go reads the kind first with encoding/json, which matches keys whatever their
	// case, fails on a value that is not a string, and parses the apiVersion.
	var apiVersionKeys, kindKeys int
	for key, v := range m {
		isAPIVersion, isKind := strings.EqualFold(key, "apiVersion"), strings.EqualFold(key, "kind")
		if !isAPIVersion && !isKind {
			continue
		}
		if isAPIVersion {
			apiVersionKeys++
		} else {
			kindKeys++
		}
		text, isString := v.(string)
		if v != nil && !isString {
			return true, fmt.Errorf("couldn't get version/kind; json parse error: %s is a %T, not a string", key, v)
		}
		if isAPIVersion {
			if _, err := schema.ParseGroupVersion(text); err != nil {
				return true, err
			}
		}
	}
	if apiVersionKeys > 1 || kindKeys > 1 {
		return false, nil
	}
	var items []any
	switch v := m["items"].(type) {
	case nil:
	case []any:
		items = v
	default:
		return true, fmt.Errorf("json: cannot unmarshal %T into the items of a list", v)
	}
	delete(m, "items")
	list.Object = m
	apiVersion, kind := list.GetAPIVersion(), list.GetKind()
	if kind == "" {
		return true, runtime.NewMissingKindErr(string(data))
	}
	itemKind := strings.TrimSuffix(kind, "List")
	list.Items = make([]unstructured.Unstructured, 0, len(items))
	for _, it := range items {
		obj, ok := it.(map[string]any)
		if !ok && it != nil {
			return true, fmt.Errorf("json: cannot unmarshal %T into an item of a list", it)
		}
		u := unstructured.Unstructured{Object: obj}
		if u.GetKind() == "" && u.GetAPIVersion() == "" {
			u.SetKind(itemKind)
			u.SetAPIVersion(apiVersion)
		}
		list.Items = append(list.Items, u)
	}
	return true, nil
}
