package release

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"text/template"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// compositeAction is what the test runs of setup/action.yml.
type compositeAction struct {
	Inputs map[string]struct {
		Default string `json:"default"`
	} `json:"inputs"`
	Outputs map[string]struct {
		Value string `json:"value"`
	} `json:"outputs"`
	Runs struct {
		Using string `json:"using"`
		Steps []struct {
			ID    string            `json:"id"`
			Uses  string            `json:"uses"`
			Shell string            `json:"shell"`
			Env   map[string]string `json:"env"`
			Run   string            `json:"run"`
		} `json:"steps"`
	} `json:"runs"`
}

// expression is a ${{ ... }} of a workflow or action.
var expression = regexp.MustCompile(`\$\{\{\s*(.*?)\s*\}\}`)

// evaluate replaces each ${{ NAME }} of s by its value in values; a name values lacks (an
// expression the runner would evaluate and this test does not know) fails the test.
func evaluate(t *testing.T, s string, values map[string]string) string {
	t.Helper()
	return expression.ReplaceAllStringFunc(s, func(m string) string {
		name := expression.FindStringSubmatch(m)[1]
		v, ok := values[name]
		if !ok {
			t.Fatalf("setup/action.yml: the test does not know the expression %q", m)
		}
		return v
	})
}

// setupStep is one use of the setup action in a job, on this machine as its runner.
type setupStep struct {
	inputs    map[string]string // the step's with:
	actionRef string            // github.action_ref: the tag (or branch) the action was used at
	jobEnv    []string          // the job's environment, which its steps inherit
	maxTime   string            // when set, curl's time limits are cut to it (seconds)
}

// setupResult is what the step did: its log, error, outputs, and the folders it added to
// the PATH.
type setupResult struct {
	log     string
	err     error
	outputs map[string]string
	path    []string
}

// runSetupAction runs setup/action.yml as the runner runs a composite action: each step's
// env: and run: evaluated (inputs, with the defaults action.yml gives; github.action_ref and
// github.action_repository), its run: written to a file and run with bash --noprofile
// --norc -eo pipefail (the runner's `shell: bash`) with GITHUB_ACTION_PATH set to the
// action's folder and a GITHUB_OUTPUT of its own, stopping at the first step that fails; then
// the action's outputs are evaluated from the steps' outputs. The PATH holds only the tools
// the script needs, and a curl that fails any call without a time limit.
func runSetupAction(t *testing.T, bin string, step setupStep) setupResult {
	t.Helper()
	actionDir, err := filepath.Abs(filepath.Join("..", "..", "setup"))
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(actionDir, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var action compositeAction
	if err := yaml.Unmarshal(data, &action); err != nil {
		t.Fatalf("setup/action.yml: %v", err)
	}
	if action.Runs.Using != "composite" || len(action.Runs.Steps) == 0 {
		t.Fatalf("setup/action.yml runs %q with %d steps, want a composite action", action.Runs.Using, len(action.Runs.Steps))
	}
	values := map[string]string{
		"github.action_ref":        step.actionRef,
		"github.action_repository": "org/app-status-action",
		"github.token":             "",
	}
	for name, in := range action.Inputs {
		values["inputs."+name] = evaluate(t, in.Default, values)
	}
	for name, v := range step.inputs {
		if _, ok := action.Inputs[name]; !ok {
			t.Fatalf("setup/action.yml has no input %q", name)
		}
		values["inputs."+name] = v
	}

	tmp := t.TempDir()
	runnerTemp, ghPath := filepath.Join(tmp, "runner-temp"), filepath.Join(tmp, "github-path")
	if err := os.Mkdir(runnerTemp, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var log strings.Builder
	for i, s := range action.Runs.Steps {
		if s.Uses != "" || s.Shell != "bash" {
			t.Fatalf("setup/action.yml step %d uses %q with shell %q: the test runs bash run: steps only", i, s.Uses, s.Shell)
		}
		script := filepath.Join(tmp, fmt.Sprintf("step-%d.sh", i))
		if err := os.WriteFile(script, []byte(evaluate(t, s.Run, values)), 0o600); err != nil {
			t.Fatal(err)
		}
		output := filepath.Join(tmp, fmt.Sprintf("output-%d", i))
		env := append([]string{"PATH=" + bin, "HOME=" + tmp, "RUNNER_OS=" + runnerOS(t), "RUNNER_ARCH=" + runnerArch(t),
			"RUNNER_TEMP=" + runnerTemp, "GITHUB_PATH=" + ghPath, "GITHUB_OUTPUT=" + output, "GITHUB_ACTION_PATH=" + actionDir,
			"TEST_CURL_MAX_TIME=" + step.maxTime}, step.jobEnv...)
		for k, v := range s.Env {
			env = append(env, k+"="+evaluate(t, v, values))
		}
		cmd := exec.CommandContext(ctx, filepath.Join(bin, "bash"), "--noprofile", "--norc", "-eo", "pipefail", script)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		log.Write(out)
		if ctx.Err() != nil {
			t.Fatalf("setup/action.yml step %d did not end in %s:\n%s", i, 3*time.Minute, log.String())
		}
		written, _ := os.ReadFile(output)
		for _, line := range strings.Split(strings.TrimSpace(string(written)), "\n") {
			if k, v, ok := strings.Cut(line, "="); ok && s.ID != "" {
				values["steps."+s.ID+".outputs."+k] = v
			}
		}
		if err != nil {
			return setupResult{log: log.String(), err: err, path: readLines(ghPath)}
		}
	}
	outputs := map[string]string{}
	for name, o := range action.Outputs {
		outputs[name] = evaluate(t, o.Value, values)
	}
	return setupResult{log: log.String(), outputs: outputs, path: readLines(ghPath)}
}

func readLines(name string) []string {
	data, _ := os.ReadFile(name)
	return strings.Fields(string(data))
}

// runnerOS and runnerArch are RUNNER_OS and RUNNER_ARCH of a runner of this machine.
func runnerOS(t *testing.T) string {
	name, ok := map[string]string{"linux": "Linux", "darwin": "macOS"}[runtime.GOOS]
	if !ok {
		t.Fatalf("no runner runs the setup action's bash on %s: this test needs a Linux or macOS machine", runtime.GOOS)
	}
	return name
}

func runnerArch(t *testing.T) string {
	arch, ok := map[string]string{"amd64": "X64", "arm64": "ARM64"}[runtime.GOARCH]
	if !ok {
		t.Fatalf("no runner runs on %s, and no release has an archive for it", runtime.GOARCH)
	}
	return arch
}

// toolsBin is a folder of the tools setup/install.sh runs, and a curl that runs the real one
// with its time limits cut to TEST_CURL_MAX_TIME seconds when set, and that fails, saying
// so, when called without --connect-timeout and --max-time.
func toolsBin(t *testing.T) string {
	t.Helper()
	bin := t.TempDir()
	for _, tool := range []string{"bash", "awk", "sha256sum", "tar", "gzip", "unzip", "mktemp", "mkdir", "rm", "chmod", "cat"} {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		if err := os.Symlink(p, filepath.Join(bin, tool)); err != nil {
			t.Fatal(err)
		}
	}
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Fatalf("curl: %v", err)
	}
	wrapper := `#!` + filepath.Join(bin, "bash") + `
args=() limits=0
while [ $# -gt 0 ]; do
  case $1 in
    --max-time | --connect-timeout)
      limits=$((limits + 1)); args+=("$1" "${TEST_CURL_MAX_TIME:-$2}"); shift 2; continue ;;
  esac
  args+=("$1"); shift
done
if [ "$limits" != 2 ]; then echo "TEST: curl was called without --connect-timeout and --max-time" >&2; exit 99; fi
exec ` + curl + ` "${args[@]}"
`
	if err := os.WriteFile(filepath.Join(bin, "curl"), []byte(wrapper), 0o755); err != nil { //nolint:gosec // the test's curl
		t.Fatal(err)
	}
	return bin
}

// goreleaserData is the data of .goreleaser.yaml's templates for a release.
type goreleaserData struct {
	Tag, Version, Os, Arch string
}

func render(t *testing.T, text string, data goreleaserData) string {
	t.Helper()
	tmpl, err := template.New("goreleaser").Option("missingkey=error").Parse(text)
	if err != nil {
		t.Fatalf(".goreleaser.yaml template %q: %v", text, err)
	}
	var b strings.Builder
	if err := tmpl.Execute(&b, data); err != nil {
		t.Fatalf(".goreleaser.yaml template %q: %v", text, err)
	}
	return b.String()
}

// buildRelease makes the release files of version for this machine's platform as
// .goreleaser.yaml makes them: the binary built as its build says (main, env, flags, ldflags
// with the tag), archived as tar.gz under its name template with its files, and
// checksums.txt, goreleaser's "SHA256  NAME" lines.
func buildRelease(t *testing.T, version string) (files map[string][]byte, archive string) {
	t.Helper()
	c := readGoreleaser(t)
	if len(c.Builds) != 1 || len(c.Archives) != 1 {
		t.Fatalf(".goreleaser.yaml has %d builds and %d archives, want one of each", len(c.Builds), len(c.Archives))
	}
	b, a := c.Builds[0], c.Archives[0]
	if !slices.Equal(a.Formats, []string{"tar.gz"}) || c.Checksum.NameTemplate != "checksums.txt" || c.Checksum.Algorithm != "sha256" {
		t.Fatalf(".goreleaser.yaml archives as %v with checksums %+v: the test makes tar.gz and checksums.txt of sha256", a.Formats, c.Checksum)
	}
	data := goreleaserData{Tag: version, Version: strings.TrimPrefix(version, "v"), Os: runtime.GOOS, Arch: runtime.GOARCH}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	binary := filepath.Join(t.TempDir(), b.Binary)
	args := append([]string{"build", "-o", binary}, b.Flags...)
	args = append(args, "-ldflags", render(t, strings.Join(b.Ldflags, " "), data), b.Main)
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), b.Env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}

	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, name := range append([]string{b.Binary}, archiveFiles(a.Files)...) {
		path := filepath.Join(root, name)
		if name == b.Binary {
			path = binary
		}
		content, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(content)), ModTime: time.Unix(1700000000, 0)}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(content); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	archive = render(t, a.NameTemplate, data) + ".tar.gz"
	sum := sha256.Sum256(buf.Bytes())
	return map[string][]byte{
		archive:         buf.Bytes(),
		"checksums.txt": fmt.Appendf(nil, "%x  %s\n", sum, archive),
	}, archive
}

// TestSetupActionInstallsRelease runs setup/action.yml's steps, as the runner runs a
// composite action (nektos/act is not used: it needs an image of a runner's file system and
// its own engine), against a release of this machine's platform built as .goreleaser.yaml
// builds one, served on 127.0.0.1: the binary it installs runs from the PATH of a later step
// and says the version; a tampered archive is refused; a version without a release, a server
// that is not there and one that never answers fail with an error annotation, within the
// download's time limits (cut, for the last, to one second a try).
func TestSetupActionInstallsRelease(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("the test builds app-status (seconds with a warm build cache, minutes cold): without -short (make test)")
	}
	const version = "v2.0.1"
	files, archive := buildRelease(t, version)
	release := serveRelease(t, version, files)
	tampered := map[string][]byte{"checksums.txt": files["checksums.txt"], archive: bytes.Clone(files[archive])}
	tampered[archive][len(tampered[archive])/2] ^= 0xff
	tamperedRelease := serveRelease(t, version, tampered)
	// A port nothing listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String()
	_ = l.Close()
	// A server that takes the request and never answers.
	stop := make(chan struct{})
	silent := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	t.Cleanup(silent.Close)
	t.Cleanup(func() { close(stop) })
	platform := runtime.GOOS + "/" + runtime.GOARCH
	bin := toolsBin(t)

	tests := []struct {
		name    string
		step    setupStep
		wantErr string // in the error annotation
		within  time.Duration
	}{
		{name: "the release the action's tag names", step: setupStep{actionRef: version, jobEnv: []string{"APP_STATUS_DOWNLOAD_URL=" + release}}},
		{name: "the version input, at a branch", step: setupStep{actionRef: "main", inputs: map[string]string{"version": strings.TrimPrefix(version, "v")},
			jobEnv: []string{"APP_STATUS_DOWNLOAD_URL=" + release}}},
		{name: "a tampered archive", step: setupStep{actionRef: version, jobEnv: []string{"APP_STATUS_DOWNLOAD_URL=" + tamperedRelease}},
			wantErr: archive + " does not match checksums.txt of " + version},
		{name: "a version without a release", step: setupStep{actionRef: "v1", inputs: map[string]string{"version": "v9.9.9"},
			jobEnv: []string{"APP_STATUS_DOWNLOAD_URL=" + release}},
			wantErr: fmt.Sprintf("could not download %s/v9.9.9/app-status_9.9.9_%s_%s.tar.gz: is v9.9.9 a release of org/app-status-action with an archive for %s?",
				release, runtime.GOOS, runtime.GOARCH, platform)},
		{name: "a server that is not there", step: setupStep{actionRef: version, jobEnv: []string{"APP_STATUS_DOWNLOAD_URL=" + closed}},
			wantErr: "could not download " + closed + "/" + version + "/", within: 30 * time.Second},
		{name: "a server that never answers", step: setupStep{actionRef: version, maxTime: "1", jobEnv: []string{"APP_STATUS_DOWNLOAD_URL=" + silent.URL}},
			wantErr: "could not download " + silent.URL + "/" + version + "/", within: 60 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			got := runSetupAction(t, bin, tt.step)
			took := time.Since(start)
			if strings.Contains(got.log, "TEST: curl was called without") {
				t.Errorf("install.sh downloads without a time limit:\n%s", got.log)
			}
			// A later run: step, with the PATH the runner gives it.
			later := exec.Command(filepath.Join(bin, "bash"), "--noprofile", "--norc", "-eo", "pipefail", "-c", "app-status version")
			later.Env = []string{"PATH=" + strings.Join(append(slices.Clone(got.path), bin), string(os.PathListSeparator))}
			ran, ranErr := later.CombinedOutput()
			if tt.wantErr != "" {
				if got.err == nil || !strings.Contains(got.log, "::error title=app-status setup::") || !strings.Contains(got.log, tt.wantErr) {
					t.Errorf("the setup action = %v\n%s\nwant an error annotation saying %q", got.err, got.log, tt.wantErr)
				}
				if tt.within != 0 && took > tt.within {
					t.Errorf("the setup action failed after %s, want within %s", took.Round(time.Second), tt.within)
				}
				if len(got.path) != 0 || ranErr == nil {
					t.Errorf("a failed setup added %v to the PATH, where app-status version says %q", got.path, ran)
				}
				return
			}
			if got.err != nil {
				t.Fatalf("the setup action: %v\n%s", got.err, got.log)
			}
			if len(got.path) != 1 {
				t.Fatalf("the setup action added %v to the PATH, want one folder", got.path)
			}
			if diff := cmp.Diff(map[string]string{"version": version, "path": got.path[0]}, got.outputs); diff != "" {
				t.Errorf("the action's outputs (-want +got):\n%s", diff)
			}
			if ranErr != nil || string(ran) != "app-status "+version+"\n" {
				t.Errorf("a later step's app-status version = %q (%v), want app-status %s", ran, ranErr, version)
			}
		})
	}
}
