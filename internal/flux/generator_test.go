package flux

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// TestGeneratorRevisionAliases: the aliases an ExternalArtifact takes its revision from are
// those of the artifact of its name; every artifact's where that is not known (a name made by
// spec.pathPattern, or one no longer in the spec), and none, any source, where one of them
// takes its revision from its content.
func TestGeneratorRevisionAliases(t *testing.T) {
	t.Parallel()
	const sources = `sources: [{alias: app, kind: GitRepository, name: app}, {alias: fleet, kind: GitRepository, name: fleet}]`
	tests := []struct {
		name, spec, artifact string
		want                 []string
	}{
		{name: "one artifact on each source: the app's", artifact: "app",
			spec: `artifacts: [{name: app, revision: "@app"}, {name: config, revision: "@fleet"}]`, want: []string{"app"}},
		{name: "one artifact on each source: the fleet's", artifact: "config",
			spec: `artifacts: [{name: app, revision: "@app"}, {name: config, revision: "@fleet"}]`, want: []string{"fleet"}},
		{name: "a revision and an origin revision", artifact: "app",
			spec: `artifacts: [{name: app, revision: "@app", originRevision: "@fleet"}, {name: config, revision: "@fleet"}]`, want: []string{"app", "fleet"}},
		{name: "its revision the digest of its content: any source", artifact: "app",
			spec: `artifacts: [{name: app}, {name: config, revision: "@fleet"}]`},
		{name: "a name no longer in the spec: every artifact's", artifact: "old",
			spec: `artifacts: [{name: app, revision: "@app"}, {name: config, revision: "@fleet"}]`, want: []string{"app", "fleet"}},
		{name: "a name no longer in the spec, one artifact of its content: any source", artifact: "old",
			spec: `artifacts: [{name: app, revision: "@app"}, {name: config}]`},
		{name: "names made by pathPattern: every artifact's", artifact: "app",
			spec: `pathPattern: "@app/apps/{app}"` + "\n" + `artifacts: [{name: "{app}", revision: "@app"}, {name: app, revision: "@fleet"}]`, want: []string{"app", "fleet"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			obj := &unstructured.Unstructured{}
			doc := "apiVersion: source.extensions.fluxcd.io/v1beta1\nkind: ArtifactGenerator\nmetadata: {name: gen, namespace: flux-system}\nspec:\n  " +
				sources + "\n  " + strings.ReplaceAll(tt.spec, "\n", "\n  ")
			if err := yaml.Unmarshal([]byte(doc), &obj.Object); err != nil {
				t.Fatal(err)
			}
			gen := ReadGenerator(SourceRef{Kind: KindArtifactGenerator, Namespace: "flux-system", Name: "gen"}, obj)
			if diff := cmp.Diff(tt.want, gen.RevisionAliases(tt.artifact)); diff != "" {
				t.Errorf("RevisionAliases(%q) (-want +got):\n%s", tt.artifact, diff)
			}
		})
	}
}
