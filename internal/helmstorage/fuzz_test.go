package helmstorage

import (
	"strings"
	"testing"
)

// FuzzManifestObjects: any manifest, lists included, gives objects or an error, never a
// panic, and an error never quotes the manifest's content (it may be a rendered Secret).
func FuzzManifestObjects(f *testing.F) {
	f.Add(manifest)
	f.Add("apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: a\n")
	f.Add("apiVersion: v1\nkind: List\nitems:\n- items: []\n")
	f.Add("items: " + secretValue + "\n")
	f.Fuzz(func(t *testing.T, m string) {
		refs, err := manifestObjects(m, "apps")
		if err != nil {
			if strings.Contains(err.Error(), secretValue) {
				t.Errorf("manifestObjects() error %q quotes the manifest", err)
			}
			return
		}
		for _, r := range refs {
			if r.Kind == "" || r.Name == "" || r.Namespace == "" {
				t.Errorf("manifestObjects() gave %+v, an object without kind, name or namespace", r)
			}
		}
	})
}
