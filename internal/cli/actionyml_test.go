package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sethvargo/go-githubactions"
	"sigs.k8s.io/yaml"

	"github.com/org/app-status-action/internal/flux"
	"github.com/org/app-status-action/internal/result"
)

// releasedImage is action.yml's image in a released commit.
var releasedImage = regexp.MustCompile(`^docker://ghcr\.io/[a-z0-9._-]+/app-status-action@sha256:[0-9a-f]{64}$`)

// actionYML is the part of action.yml the program must agree with.
type actionYML struct {
	Inputs map[string]struct {
		Default  string `json:"default"`
		Required bool   `json:"required"`
	} `json:"inputs"`
	Outputs map[string]struct {
		Description string `json:"description"`
	} `json:"outputs"`
	Runs struct {
		Using string   `json:"using"`
		Image string   `json:"image"`
		Args  []string `json:"args"`
	} `json:"runs"`
}

func readActionYML(t *testing.T) actionYML {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var a actionYML
	if err := yaml.Unmarshal(data, &a); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	return a
}

// TestActionYMLMatchesTheProgram: every input action.yml declares is read, nothing else is,
// its defaults are the program's, and the outputs are exactly the ones written.
func TestActionYMLMatchesTheProgram(t *testing.T) {
	t.Parallel()
	a := readActionYML(t)
	// A released commit runs the released image by digest (hack/release/pin-action.sh); every
	// other commit builds the Dockerfile.
	image := a.Runs.Image == "Dockerfile" || releasedImage.MatchString(a.Runs.Image)
	if a.Runs.Using != "docker" || !image || !cmp.Equal(a.Runs.Args, []string{"action"}) {
		t.Errorf("runs = %+v, want docker, Dockerfile or docker://ghcr.io/OWNER/app-status-action@sha256:DIGEST, [action]", a.Runs)
	}

	read := map[string]bool{}
	getenv := func(k string) string {
		if name, ok := strings.CutPrefix(k, "INPUT_"); ok {
			read[strings.ToLower(name)] = true
		}
		return ""
	}
	unset, err := actionSettings(githubactions.New(githubactions.WithGetenv(getenv)))
	if err != nil {
		t.Fatal(err)
	}
	var declared, got []string
	for name := range a.Inputs {
		declared = append(declared, name)
	}
	for name := range read {
		got = append(got, name)
	}
	sort.Strings(declared)
	sort.Strings(got)
	if diff := cmp.Diff(declared, got); diff != "" {
		t.Errorf("inputs: action.yml (-) against those the program reads (+):\n%s", diff)
	}

	defaults := func(k string) string {
		if name, ok := strings.CutPrefix(k, "INPUT_"); ok {
			d := a.Inputs[strings.ToLower(name)].Default
			if strings.HasPrefix(d, "${{") {
				return "" // an expression the runner evaluates (the job's token): no default of the program's
			}
			return d
		}
		return ""
	}
	withDefaults, err := actionSettings(githubactions.New(githubactions.WithGetenv(defaults)))
	if err != nil {
		t.Fatalf("action.yml's defaults are not accepted: %v", err)
	}
	if diff := cmp.Diff(unset, withDefaults, cmp.AllowUnexported(actionConfig{}, settings{}, flux.Revision{})); diff != "" {
		t.Errorf("action.yml's defaults differ from the program's (-unset +action.yml defaults):\n%s", diff)
	}
	if !a.Inputs["resource"].Required {
		t.Error("input resource must be required")
	}

	var outputs, written []string
	for name := range a.Outputs {
		outputs = append(outputs, name)
	}
	for _, o := range actionOutputs(result.NewRun(nil, "", nil, 0), "", "") {
		written = append(written, o.Name)
	}
	sort.Strings(outputs)
	sort.Strings(written)
	if diff := cmp.Diff(outputs, written); diff != "" {
		t.Errorf("outputs: action.yml (-) against those written (+):\n%s", diff)
	}
}

// TestFlagDefaults: the CLI's flags start from the same defaults as the action's inputs.
func TestFlagDefaults(t *testing.T) {
	t.Parallel()
	var o cliOptions
	if err := newFlagSet("verify", &o).Parse(nil); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(defaultSettings(), o.settings, cmp.AllowUnexported(settings{})); diff != "" {
		t.Errorf("flag defaults differ from defaultSettings (-want +got):\n%s", diff)
	}
	action, err := actionSettings(githubactions.New(githubactions.WithGetenv(func(string) string { return "" })))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(action.settings, o.settings, cmp.AllowUnexported(settings{})); diff != "" {
		t.Errorf("flag defaults differ from the action's (-action +flags):\n%s", diff)
	}
}
