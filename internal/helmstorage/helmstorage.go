// Package helmstorage lists the objects a Helm release deployed, read from the Secret in which
// Helm stores the release (the "secret" storage driver, which helm-controller uses). The engine
// falls back on it for HelmReleases of helm-controllers older than 1.5, which record no
// .status.inventory. It does no I/O: the engine fetches the Secret and hands over its data.
//
// The Secret holds the release's values, which may be secrets themselves: nothing here returns,
// logs or quotes any of its content other than the objects' kinds, namespaces and names.
package helmstorage

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"

	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/org/app-status-action/internal/flux"
)

// DataKey is the key of the Secret's data that holds the release.
const DataKey = "release"

// hookAnnotation marks a hook's object; Helm keeps hooks out of the manifest, and
// helm-controller's inventory skips any that would be in it.
const hookAnnotation = "helm.sh/hook"

// maxReleaseBytes bounds the decompressed release, against a gzip bomb: Helm's own limit on
// a release Secret is 1 MiB compressed.
const maxReleaseBytes = 64 << 20

// SecretName is the name of the Secret in which Helm stores version of release:
// sh.helm.release.v1.<release>.v<version>.
func SecretName(release string, version int64) string {
	return fmt.Sprintf("sh.helm.release.v1.%s.v%d", release, version)
}

// gzipMagic starts gzip data; Helm releases stored before Helm 3.0's compression have none.
var gzipMagic = []byte{0x1f, 0x8b, 0x08}

// Objects decodes the release of a Helm storage Secret, the bytes of its data field "release"
// (base64 of gzipped JSON, as Helm's secret driver writes it), and returns the objects its
// manifest lists, sorted by ID. An object without a namespace gets the release's namespace,
// as Helm applies it; cluster-scoped kinds get it too (whether a kind is namespaced is the
// API server's to say), and the caller drops it for them.
func Objects(release []byte) ([]flux.ObjectRef, error) {
	raw := make([]byte, base64.StdEncoding.DecodedLen(len(release)))
	n, err := base64.StdEncoding.Decode(raw, bytes.TrimSpace(release))
	if err != nil {
		return nil, errors.New("decode the Helm release: not base64")
	}
	raw = raw[:n]
	if bytes.HasPrefix(raw, gzipMagic) {
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			return nil, errors.New("decode the Helm release: invalid gzip data")
		}
		raw, err = io.ReadAll(io.LimitReader(zr, maxReleaseBytes+1))
		if err != nil {
			return nil, errors.New("decode the Helm release: invalid gzip data")
		}
		if len(raw) > maxReleaseBytes {
			return nil, fmt.Errorf("decode the Helm release: larger than %d MiB uncompressed", maxReleaseBytes>>20)
		}
	}
	var rel struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
		Version   int64  `json:"version"`
		Manifest  string `json:"manifest"`
	}
	if err := json.Unmarshal(raw, &rel); err != nil {
		// The error could quote the release's content: say only where it failed.
		return nil, errors.New("decode the Helm release: not a Helm release (invalid JSON)")
	}
	refs, err := manifestObjects(rel.Manifest, rel.Namespace)
	if err != nil {
		return nil, fmt.Errorf("release %s version %d: %w", rel.Name, rel.Version, err)
	}
	return refs, nil
}

// manifestObjects lists the objects of Helm's rendered manifest: YAML documents, each
// preceded by a "# Source: chart/templates/file.yaml" comment. A document that is a list
// (an items array: kind List, ConfigMapList…) stands for its items, as Helm applies them
// (its resource builder flattens lists) and as helm-controller's own inventory lists them
// (fluxcd/pkg/ssa ReadObjects).
func manifestObjects(manifest, namespace string) ([]flux.ObjectRef, error) {
	refs := []flux.ObjectRef{}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader([]byte(manifest))))
	for i := 1; ; i++ {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("manifest document %d: cannot be read", i)
		}
		var obj manifestObject
		if err := yaml.Unmarshal(doc, &obj); err != nil {
			// yaml errors may quote the document, which may be a rendered Secret.
			return nil, fmt.Errorf("manifest document %d: not a Kubernetes object", i)
		}
		objects := []manifestObject{obj}
		if obj.Items != nil {
			objects = *obj.Items
		} else if obj.APIVersion == "" && obj.Kind == "" && obj.Metadata.Name == "" {
			continue // only comments, or empty
		}
		for _, o := range objects {
			ref, keep, err := o.ref(namespace)
			if err != nil {
				return nil, fmt.Errorf("manifest document %d: %w", i, err)
			}
			if keep {
				refs = append(refs, ref)
			}
		}
	}
	sort.SliceStable(refs, func(i, j int) bool {
		if a, b := refs[i].ID(), refs[j].ID(); a != b {
			return a < b
		}
		return refs[i].Group < refs[j].Group
	})
	return refs, nil
}

// manifestObject is what is read of one object of the manifest; Items is set for a list.
type manifestObject struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name        string            `json:"name"`
		Namespace   string            `json:"namespace"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	Items *[]manifestObject `json:"items"`
}

// ref is the object's reference, its namespace the release's when it names none; keep is
// false for a hook.
func (o manifestObject) ref(namespace string) (ref flux.ObjectRef, keep bool, err error) {
	if _, hook := o.Metadata.Annotations[hookAnnotation]; hook {
		return flux.ObjectRef{}, false, nil
	}
	gv, err := schema.ParseGroupVersion(o.APIVersion)
	if err != nil || o.APIVersion == "" || o.Kind == "" || o.Metadata.Name == "" || o.Items != nil {
		return flux.ObjectRef{}, false, errors.New("not a Kubernetes object with apiVersion, kind and metadata.name")
	}
	ns := o.Metadata.Namespace
	if ns == "" {
		ns = namespace
	}
	return flux.ObjectRef{Group: gv.Group, Version: gv.Version, Kind: o.Kind, Namespace: ns, Name: o.Metadata.Name}, true, nil
}
