package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/org/app-status-action/internal/flux"
)

// TestResourceKindsListed: every text that lists the kinds a resource may name (the flag's
// help, the action's input, the GitLab component's input, the Tekton Task's param and its
// README) names each kind the program reads, with its short form.
func TestResourceKindsListed(t *testing.T) {
	t.Parallel()
	forms := []struct {
		kind        flux.Kind
		long, short string
	}{
		{flux.KindKustomization, "kustomization/NAME", "ks/NAME"},
		{flux.KindHelmRelease, "helmrelease/NAME", "hr/NAME"},
		{flux.KindResourceSet, "resourceset/NAME", "rset/NAME"},
	}
	for _, f := range forms {
		for _, form := range []string{f.long, f.short} {
			if ref, err := flux.ParseResource(strings.Replace(form, "NAME", "app", 1), "flux-system"); err != nil || ref.Kind != f.kind {
				t.Fatalf("ParseResource(%s) = %v, %v, want a %s", form, ref, err, f.kind)
			}
		}
	}
	read := func(path ...string) []byte {
		data, err := os.ReadFile(filepath.Join(append([]string{"..", ".."}, path...)...))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	texts := map[string]string{}

	var o cliOptions
	texts["--resource"] = newFlagSet("verify", &o).Lookup("resource").Usage

	var action struct {
		Inputs map[string]struct {
			Description string `json:"description"`
		} `json:"inputs"`
	}
	if err := yaml.Unmarshal(read("action.yml"), &action); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	texts["action.yml input resource"] = action.Inputs["resource"].Description

	header, _, _ := strings.Cut(string(read("templates", "app-status.yml")), "\n---\n")
	var component struct {
		Spec struct {
			Inputs map[string]struct {
				Description string `json:"description"`
			} `json:"inputs"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal([]byte(header), &component); err != nil {
		t.Fatalf("templates/app-status.yml: %v", err)
	}
	texts["GitLab component input resource"] = component.Spec.Inputs["resource"].Description

	var task struct {
		Spec struct {
			Params []struct {
				Name        string `json:"name"`
				Description string `json:"description"`
			} `json:"params"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(read("deploy", "tekton", "task.yaml"), &task); err != nil {
		t.Fatalf("deploy/tekton/task.yaml: %v", err)
	}
	for _, p := range task.Spec.Params {
		if p.Name == "resource" {
			texts["Tekton Task param resource"] = p.Description
		}
	}
	for _, l := range strings.Split(string(read("deploy", "tekton", "README.md")), "\n") {
		if strings.HasPrefix(l, "| `resource` |") {
			texts["deploy/tekton/README.md param resource"] = l
		}
	}
	for _, where := range []string{"--resource", "action.yml input resource", "GitLab component input resource", "Tekton Task param resource", "deploy/tekton/README.md param resource"} {
		text, ok := texts[where]
		if !ok || text == "" {
			t.Errorf("%s: no text found", where)
			continue
		}
		for _, f := range forms {
			if !strings.Contains(text, f.short) {
				t.Errorf("%s does not name %s (%s): %q", where, f.short, f.kind, text)
			}
		}
	}
}
