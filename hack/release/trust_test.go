package release

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// releaseIdentity is the signer a recipe must name: the release workflow at the released tag,
// in the release workflow's own variables or as the docs write them.
var releaseIdentity = regexp.MustCompile(`--(?:certificate|cert)-identity[ =]"?https://github\.com/(\$\{GITHUB_REPOSITORY\}|<owner>/app-status-action|org/app-status-action)/\.github/workflows/release\.yml@refs/tags/(\$\{TAG\}|v\$version)"?( |$)`)

// signatureChecks returns the cosign verify and verify-blob commands and the gh attestation
// verify ones of a text (a script, a markdown page), each on one line: a line ending in a
// backslash goes on at the next.
func signatureChecks(text string) []string {
	var cmds []string
	joined := strings.ReplaceAll(text, "\\\n", " ")
	for _, line := range strings.Split(joined, "\n") {
		for _, cmd := range []string{"cosign verify", "gh attestation verify"} {
			if i := strings.Index(line, cmd); i >= 0 {
				cmds = append(cmds, strings.Join(strings.Fields(line[i:]), " "))
			}
		}
	}
	return cmds
}

// TestSignatureChecksPinTheReleaseWorkflow: every signature or provenance check a user is told
// to run (cosign's and gh attestation's, in the release notes the release workflow writes,
// docs/image.md, docs/other-ci.md, RELEASING.md) accepts a signature by the release workflow at
// the released tag alone: no identity pattern, no mere repository, which another workflow of
// the repository (any branch's, a pull request's) would match too. The notes check both
// images, the one with a shell as well.
func TestSignatureChecksPinTheReleaseWorkflow(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("..", "..", ".github", "workflows", "release.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		Jobs map[string]struct {
			Steps []struct {
				Name string `json:"name"`
				Run  string `json:"run"`
			} `json:"steps"`
		} `json:"jobs"`
	}
	if err := yaml.Unmarshal(data, &wf); err != nil {
		t.Fatalf("release.yml: %v", err)
	}
	var notes string
	for _, s := range wf.Jobs["release"].Steps {
		if strings.Contains(s.Run, "gh release edit") {
			notes = s.Run
		}
	}
	if notes == "" {
		t.Fatal("release.yml: no step publishes the release (gh release edit)")
	}
	texts := map[string]string{"the release notes (release.yml)": notes}
	for _, f := range []string{"docs/image.md", "docs/other-ci.md", "RELEASING.md"} {
		data, err := os.ReadFile(filepath.Join("..", "..", f))
		if err != nil {
			t.Fatal(err)
		}
		texts[f] = string(data)
	}
	for where, text := range texts {
		cmds := signatureChecks(text)
		if len(cmds) == 0 {
			t.Errorf("%s: no cosign check", where)
		}
		for _, c := range cmds {
			if strings.Contains(c, "-regex") || !releaseIdentity.MatchString(c) {
				t.Errorf("%s: %q does not pin the signer to the release workflow at the released tag (--certificate-identity, or gh's --cert-identity, https://github.com/OWNER/REPO/.github/workflows/release.yml@refs/tags/TAG)", where, c)
			}
		}
	}
	for _, want := range []string{"cosign verify ${IMAGE}@${DIGEST} ", "cosign verify ${IMAGE}@${SHELL_DIGEST} ",
		"gh attestation verify oci://${IMAGE}@${DIGEST} ", "gh attestation verify oci://${IMAGE}@${SHELL_DIGEST} "} {
		found := false
		for _, c := range signatureChecks(notes) {
			found = found || strings.HasPrefix(c, want)
		}
		if !found {
			t.Errorf("the release notes do not say %q...", want)
		}
	}
}

var (
	fromLine = regexp.MustCompile(`(?m)^FROM\s+(\S+)(?:\s+AS\s+(\S+))?\s*$`)
	argLine  = regexp.MustCompile(`(?m)^ARG\s+([A-Za-z_][A-Za-z0-9_]*)=(\S+)\s*$`)
	byDigest = regexp.MustCompile(`^[^@\s]+@sha256:[0-9a-f]{64}$`)
)

// TestReleaseImagesPinTheirBases: every image a release builds (the dockers_v2 of
// .goreleaser.yaml) starts from scratch, from a stage of its own, or from an image pinned by
// digest (with the tag beside it for the reader): a tag can be moved to other contents
// between two releases, a digest cannot. An ARG's default counts, as the release passes no
// build argument.
func TestReleaseImagesPinTheirBases(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("..", "..", ".goreleaser.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		DockersV2 []struct {
			ID         string            `json:"id"`
			Dockerfile string            `json:"dockerfile"`
			BuildArgs  map[string]string `json:"build_args"`
		} `json:"dockers_v2"`
	}
	if err := yaml.Unmarshal(data, &c); err != nil {
		t.Fatalf(".goreleaser.yaml: %v", err)
	}
	if len(c.DockersV2) == 0 {
		t.Fatal("no dockers_v2 images in .goreleaser.yaml")
	}
	shell := false
	for _, d := range c.DockersV2 {
		if len(d.BuildArgs) > 0 {
			t.Errorf("image %s: build_args %v: the bases are the Containerfile's own defaults, pinned there", d.ID, d.BuildArgs)
		}
		shell = shell || d.Dockerfile == "hack/image/Containerfile.shell"
		data, err := os.ReadFile(filepath.Join("..", "..", d.Dockerfile))
		if err != nil {
			t.Fatal(err)
		}
		args := map[string]string{}
		for _, m := range argLine.FindAllStringSubmatch(string(data), -1) {
			args[m[1]] = m[2]
		}
		stages := map[string]bool{}
		froms := fromLine.FindAllStringSubmatch(string(data), -1)
		if len(froms) == 0 {
			t.Errorf("%s: no FROM line", d.Dockerfile)
		}
		for _, m := range froms {
			base := os.Expand(m[1], func(k string) string { return args[k] })
			if base != "scratch" && !stages[base] && !byDigest.MatchString(base) {
				t.Errorf("%s: FROM %s (%s) is not pinned by digest (IMAGE:TAG@sha256:...)", d.Dockerfile, m[1], base)
			}
			if m[2] != "" {
				stages[m[2]] = true
			}
		}
	}
	if !shell {
		t.Error("no release image is built from hack/image/Containerfile.shell: the test checks another recipe than the release's")
	}
}
