package verify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/chartutil"
	"github.com/go-logr/logr"
	"github.com/opencontainers/go-digest"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/org/app-status-action/internal/assess"
)

// readValues composes the values of the HelmRelease need.Release as helm-controller v1.6.4
// composes them at every reconcile (reconcileRelease: chartutil.ChartValuesFromReferences of
// spec.values and spec.valuesFrom), from the ConfigMaps and Secrets of its valuesFrom as a
// GET reads them now (quorum reads: no older than the HelmRelease's status the assessment
// that asked judged), and keeps only the digest helm-controller records of them
// (chartutil.DigestValues with its digest.Canonical, SHA-256): neither the data nor the
// values are kept, nor shown (an error names the object, the key and the kind of failure).
func (s *clusterState) readValues(ctx context.Context, need assess.ConfigNeed, now time.Time) assess.StoredConfig {
	values, refs, err := releaseValues(need.Release)
	if err != nil {
		return assess.StoredConfig{Unreadable: fmt.Sprintf("the values of HelmRelease %s/%s: %v", need.Namespace, need.Name, err)}
	}
	read := &readObjects{namespace: need.Namespace, objects: map[valuesObject]client.Object{}, missing: map[valuesObject]error{}}
	for _, ref := range refs {
		o := valuesObject{kind: ref.Kind, name: ref.Name}
		if _, done := read.objects[o]; done || read.missing[o] != nil {
			continue
		}
		var (
			obj client.Object
			err error
		)
		switch ref.Kind {
		case "ConfigMap":
			obj, err = s.core.ConfigMaps(need.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		case "Secret":
			obj, err = s.core.Secrets(need.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
		default:
			continue // (chartutil refuses the kind)
		}
		switch {
		case apierrors.IsNotFound(err):
			read.missing[o] = err
		case apierrors.IsForbidden(err):
			return assess.StoredConfig{Unreadable: fmt.Sprintf("the credentials may not get %s %s/%s (403)", ref.Kind, need.Namespace, ref.Name)}
		case err != nil:
			return assess.StoredConfig{RetryAt: now.Add(storageRetry), Unreadable: fmt.Sprintf("reading %s %s/%s: %s", ref.Kind, need.Namespace, ref.Name, apiMessage(err))}
		default:
			read.objects[o] = obj
		}
	}
	composed, err := chartutil.ChartValuesFromReferences(ctx, logr.Discard(), read, need.Namespace, values, refs...)
	if err != nil {
		return assess.StoredConfig{Unreadable: fmt.Sprintf("composing the values of HelmRelease %s/%s: %s", need.Namespace, need.Name, valuesError(err))}
	}
	return assess.StoredConfig{Checksum: chartutil.DigestValues(digest.SHA256, composed).String()}
}

// releaseValues is a HelmRelease's spec.values, decoded as helm-controller's GetValues decodes
// them (sigs.k8s.io/yaml, numbers as float64), and its spec.valuesFrom, as its API types decode
// them.
func releaseValues(hr *unstructured.Unstructured) (map[string]any, []meta.ValuesReference, error) {
	if hr == nil {
		return nil, nil, errors.New("no HelmRelease given")
	}
	raw, err := json.Marshal(hr.Object["spec"])
	if err != nil {
		return nil, nil, errors.New("its spec does not encode")
	}
	var spec struct {
		Values     json.RawMessage        `json:"values,omitempty"`
		ValuesFrom []meta.ValuesReference `json:"valuesFrom,omitempty"`
	}
	if err := json.Unmarshal(raw, &spec); err != nil {
		return nil, nil, errors.New("its spec.values or spec.valuesFrom do not decode")
	}
	var values map[string]any
	if len(spec.Values) > 0 {
		_ = yaml.Unmarshal(spec.Values, &values) // (as GetValues: values that do not decode are none)
	}
	return values, spec.ValuesFrom, nil
}

// valuesError says why chartutil could not compose the values, naming the object and the key
// and the kind of failure only: the underlying error may quote the data (a YAML parse error, a
// target path's value).
func valuesError(err error) string {
	var ref *chartutil.ErrValuesReference
	if !errors.As(err, &ref) {
		return "an error that is not a values reference's"
	}
	reason := chartutil.ErrUnknown
	if ref.Reason != nil {
		reason = ref.Reason
	}
	return fmt.Sprintf("%s %s, key %s: %v", ref.Kind, ref.Name, ref.Key, reason)
}

// valuesObject is a ConfigMap or Secret of a HelmRelease's valuesFrom, in its namespace.
type valuesObject struct{ kind, name string }

// readObjects is a controller-runtime client that gets what readValues read, and makes no
// request: chartutil.ChartValuesFromReferences (v1.27.2) calls Get alone, for a *ConfigMap or a
// *Secret of the release's namespace. Every other method is the nil Client's (a panic).
type readObjects struct {
	client.Client
	namespace string
	objects   map[valuesObject]client.Object
	// missing are the objects the API server said were not found, with its error.
	missing map[valuesObject]error
}

// Get copies the object read under key into obj.
func (r *readObjects) Get(_ context.Context, key types.NamespacedName, obj client.Object, _ ...client.GetOption) error {
	o := valuesObject{name: key.Name}
	switch obj.(type) {
	case *corev1.ConfigMap:
		o.kind = "ConfigMap"
	case *corev1.Secret:
		o.kind = "Secret"
	default:
		return fmt.Errorf("get %T: not a ConfigMap or a Secret", obj)
	}
	if key.Namespace != r.namespace {
		return fmt.Errorf("get %s %s: not in the release's namespace %s", o.kind, key, r.namespace)
	}
	if err, ok := r.missing[o]; ok {
		return err
	}
	switch read := r.objects[o].(type) {
	case *corev1.ConfigMap:
		read.DeepCopyInto(obj.(*corev1.ConfigMap))
	case *corev1.Secret:
		read.DeepCopyInto(obj.(*corev1.Secret))
	default:
		return fmt.Errorf("get %s %s: not read", o.kind, key)
	}
	return nil
}
