package release

import (
	"archive/zip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// platforms are the CLI's release archives: every OS a CI's hosted runners run (Azure
// Pipelines' default pool is often Windows), on both architectures.
var platforms = []string{
	"darwin/amd64", "darwin/arm64", "linux/amd64", "linux/arm64", "windows/amd64", "windows/arm64",
}

// goreleaserConfig is what the tests read of .goreleaser.yaml.
type goreleaserConfig struct {
	Builds []struct {
		ID      string   `json:"id"`
		Main    string   `json:"main"`
		Binary  string   `json:"binary"`
		Env     []string `json:"env"`
		Goos    []string `json:"goos"`
		Goarch  []string `json:"goarch"`
		Flags   []string `json:"flags"`
		Ldflags []string `json:"ldflags"`
	} `json:"builds"`
	Archives []struct {
		NameTemplate    string   `json:"name_template"`
		Formats         []string `json:"formats"`
		FormatOverrides []struct {
			Goos    string   `json:"goos"`
			Formats []string `json:"formats"`
		} `json:"format_overrides"`
		// Files are paths or globs, or {src: ...} objects.
		Files []any `json:"files"`
	} `json:"archives"`
	Checksum struct {
		NameTemplate string `json:"name_template"`
		Algorithm    string `json:"algorithm"`
	} `json:"checksum"`
	Signs []struct {
		Cmd       string   `json:"cmd"`
		Artifacts string   `json:"artifacts"`
		Signature string   `json:"signature"`
		Args      []string `json:"args"`
	} `json:"signs"`
	DockersV2 []struct {
		ID         string            `json:"id"`
		Dockerfile string            `json:"dockerfile"`
		Labels     map[string]string `json:"labels"`
	} `json:"dockers_v2"`
}

func readGoreleaser(t *testing.T) goreleaserConfig {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", ".goreleaser.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var c goreleaserConfig
	if err := yaml.Unmarshal(data, &c); err != nil {
		t.Fatalf(".goreleaser.yaml: %v", err)
	}
	return c
}

// archiveFiles are the paths an archive's files: entry names, whether written as a path or as
// {src: PATH}.
func archiveFiles(files []any) []string {
	var paths []string
	for _, f := range files {
		switch f := f.(type) {
		case string:
			paths = append(paths, f)
		case map[string]any:
			if src, ok := f["src"].(string); ok {
				paths = append(paths, src)
			}
		}
	}
	return paths
}

// TestReleaseArchives: the CLI is built for every platform, archived as tar.gz (zip for
// Windows), and checksummed in checksums.txt, which cosign
// signs keyless into a Sigstore bundle beside it (the files docs/other-ci.md verifies).
func TestReleaseArchives(t *testing.T) {
	c := readGoreleaser(t)
	if len(c.Builds) == 0 || len(c.Archives) == 0 {
		t.Fatalf("%d builds, %d archives", len(c.Builds), len(c.Archives))
	}
	for _, b := range c.Builds {
		var got []string
		for _, goos := range b.Goos {
			for _, arch := range b.Goarch {
				got = append(got, goos+"/"+arch)
			}
		}
		slices.Sort(got)
		if diff := cmp.Diff(platforms, got); diff != "" {
			t.Errorf("build %s's platforms (-want +got):\n%s", b.ID, diff)
		}
	}
	for i, a := range c.Archives {
		if !cmp.Equal(a.Formats, []string{"tar.gz"}) {
			t.Errorf("archive %d is %v, want tar.gz", i, a.Formats)
		}
		windows := false
		for _, o := range a.FormatOverrides {
			windows = windows || (o.Goos == "windows" && cmp.Equal(o.Formats, []string{"zip"}))
		}
		if !windows {
			t.Errorf("archive %d has no zip for Windows: %v", i, a.FormatOverrides)
		}
	}
	if c.Checksum.NameTemplate != "checksums.txt" || (c.Checksum.Algorithm != "" && c.Checksum.Algorithm != "sha256") {
		t.Errorf("checksum %+v, want checksums.txt of sha256 sums", c.Checksum)
	}
	signed := false
	for _, s := range c.Signs {
		signed = signed || (s.Cmd == "cosign" && s.Artifacts == "checksum" && s.Signature == "${artifact}.sigstore.json" &&
			slices.Contains(s.Args, "sign-blob") && slices.Contains(s.Args, "--bundle=${signature}") && slices.Contains(s.Args, "${artifact}"))
	}
	if !signed {
		t.Errorf("no signs: entry signs the checksums with cosign sign-blob into ${artifact}.sigstore.json: %+v", c.Signs)
	}
}

// TestArchivesHoldTheLicense: every archive a release makes lists the LICENSE among its files
// (TestReleaseSnapshot opens the archives goreleaser makes).
func TestArchivesHoldTheLicense(t *testing.T) {
	c := readGoreleaser(t)
	if len(c.Archives) == 0 {
		t.Fatal("no archives in .goreleaser.yaml")
	}
	for i, a := range c.Archives {
		if !slices.Contains(archiveFiles(a.Files), "LICENSE") {
			t.Errorf("archive %d does not hold the LICENSE: files %v", i, a.Files)
		}
	}
}

// TestLicense: the repository's LICENSE is the Apache License 2.0, word for word but for the
// copyright line of its appendix, which names the project's authors.
func TestLicense(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "LICENSE"))
	if err != nil {
		t.Fatal(err)
	}
	const copyright = "   Copyright The app-status-action authors\n"
	if !strings.Contains(string(data), copyright) {
		t.Errorf("LICENSE lacks %q", strings.TrimSpace(copyright))
	}
	standard := strings.Replace(string(data), copyright, "   Copyright [yyyy] [name of copyright owner]\n", 1)
	// The SHA-256 of https://www.apache.org/licenses/LICENSE-2.0.txt.
	const apache2 = "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30"
	if sum := sha256.Sum256([]byte(standard)); hex.EncodeToString(sum[:]) != apache2 {
		t.Errorf("LICENSE is not the Apache License 2.0's text (sha256 %x less the copyright line, want %s)", sum, apache2)
	}
}

var licenseLabel = regexp.MustCompile(`(?m)^LABEL org\.opencontainers\.image\.licenses=Apache-2\.0$`)

// TestImagesLicensed: every image a release pushes says its license in the OCI label, both
// where goreleaser builds it and in the Containerfile itself (make image, a fork's own build),
// and so does the Dockerfile the action builds on a branch.
func TestImagesLicensed(t *testing.T) {
	c := readGoreleaser(t)
	if len(c.DockersV2) == 0 {
		t.Fatal("no dockers_v2 images in .goreleaser.yaml")
	}
	files := []string{"Dockerfile"}
	for _, d := range c.DockersV2 {
		if got := d.Labels["org.opencontainers.image.licenses"]; got != "Apache-2.0" {
			t.Errorf("image %s's org.opencontainers.image.licenses label = %q, want Apache-2.0", d.ID, got)
		}
		files = append(files, d.Dockerfile)
	}
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join("..", "..", f))
		if err != nil {
			t.Fatal(err)
		}
		if !licenseLabel.Match(data) {
			t.Errorf("%s has no line %q", f, licenseLabel)
		}
	}
}

// TestReleaseSnapshot runs goreleaser, the version the release workflow runs (hack/tools.sh
// builds it), on a copy of the repository: `goreleaser check`, then a snapshot release without
// images (--skip=docker; they need buildx and a registry) and with a stand-in cosign that
// writes the bundle (keyless signing needs the workflow's OIDC token). Every platform's archive
// is there, holds the binary, the LICENSE and the README, and checksums.txt holds its SHA-256;
// checksums.txt.sigstore.json is the signature.
func TestReleaseSnapshot(t *testing.T) {
	if testing.Short() {
		// Building goreleaser takes minutes once, the six cross-compiles about as long cold.
		t.Skip("goreleaser is built and run without -short (make test)")
	}
	out, err := exec.Command(filepath.Join("..", "tools.sh"), "goreleaser").Output()
	if err != nil {
		t.Fatalf("hack/tools.sh goreleaser: %v", err)
	}
	goreleaser := strings.TrimSpace(string(out))
	repo := copyRepo(t)

	bin := t.TempDir()
	// Records its arguments and writes the bundle --bundle names.
	cosign := `#!/bin/sh
echo "$@" >> "` + filepath.Join(bin, "cosign.log") + `"
for a in "$@"; do case $a in --bundle=*) echo '{"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json"}' > "${a#--bundle=}";; esac; done
`
	if err := os.WriteFile(filepath.Join(bin, "cosign"), []byte(cosign), 0o755); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "GITHUB_REPOSITORY=org/app-status-action")
	for _, args := range [][]string{
		{"check"},
		{"release", "--snapshot", "--clean", "--skip=docker,sbom"},
	} {
		cmd := exec.Command(goreleaser, args...)
		cmd.Dir, cmd.Env = repo, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("goreleaser %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}

	var artifacts []struct {
		Name   string `json:"name"`
		Path   string `json:"path"`
		Goos   string `json:"goos"`
		Goarch string `json:"goarch"`
		Type   string `json:"type"`
	}
	data, err := os.ReadFile(filepath.Join(repo, "dist", "artifacts.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &artifacts); err != nil {
		t.Fatal(err)
	}
	sums, err := os.ReadFile(filepath.Join(repo, "dist", "checksums.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var got, signatures []string
	for _, a := range artifacts {
		switch a.Type {
		case "Signature":
			signatures = append(signatures, a.Name)
			continue
		case "Archive":
		default:
			continue
		}
		platform := a.Goos + "/" + a.Goarch
		got = append(got, platform)
		ext, binary := ".tar.gz", "app-status"
		if a.Goos == "windows" {
			ext, binary = ".zip", "app-status.exe"
		}
		if want := "app-status_1.4.2-SNAPSHOT-"; !strings.HasPrefix(a.Name, want) || !strings.HasSuffix(a.Name, "_"+a.Goos+"_"+a.Goarch+ext) {
			t.Errorf("%s's archive is %s, want %s<commit>_%s_%s%s", platform, a.Name, want, a.Goos, a.Goarch, ext)
		}
		path := filepath.Join(repo, a.Path)
		var names []string
		if ext == ".zip" {
			names = zipNames(t, path)
		} else {
			files := tarFiles(t, path)
			for name := range files {
				names = append(names, name)
			}
			if platform == runtime.GOOS+"/"+runtime.GOARCH {
				// The binary runs here: the tag is stamped into it, as make build does.
				exe := filepath.Join(t.TempDir(), "app-status")
				if err := os.WriteFile(exe, []byte(files["app-status"]), 0o755); err != nil {
					t.Fatal(err)
				}
				if out, err := exec.Command(exe, "version").Output(); err != nil || string(out) != "app-status v1.4.2\n" {
					t.Errorf("%s's app-status version = %q (%v), want app-status v1.4.2", a.Name, out, err)
				}
			}
		}
		slices.Sort(names)
		if diff := cmp.Diff([]string{"LICENSE", "README.md", binary, "schema/results.schema.json"}, names); diff != "" {
			t.Errorf("%s's files (-want +got):\n%s", a.Name, diff)
		}
		content, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(content)
		if line := hex.EncodeToString(sum[:]) + "  " + a.Name + "\n"; !strings.Contains(string(sums), line) {
			t.Errorf("checksums.txt lacks %q:\n%s", line, sums)
		}
	}
	slices.Sort(got)
	if diff := cmp.Diff(platforms, got); diff != "" {
		t.Errorf("archives' platforms (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"checksums.txt.sigstore.json"}, signatures); diff != "" {
		t.Errorf("signatures (-want +got):\n%s", diff)
	}
	log, err := os.ReadFile(filepath.Join(bin, "cosign.log"))
	if err != nil || strings.TrimSpace(string(log)) != "sign-blob --yes --bundle=dist/checksums.txt.sigstore.json dist/checksums.txt" {
		t.Errorf("cosign ran with %q (%v), want sign-blob of checksums.txt into its bundle", log, err)
	}
}

// copyRepo copies the repository's files (tracked, or new and not ignored: the work tree as it
// is) into a new repository with one commit, tagged v1.4.2, with an origin that is never
// contacted, and returns its folder.
func copyRepo(t *testing.T) string {
	t.Helper()
	root := filepath.Join("..", "..")
	out, err := exec.Command("git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	dir := t.TempDir()
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		info, err := os.Lstat(filepath.Join(root, name))
		if err != nil || !info.Mode().IsRegular() {
			continue // deleted in the work tree, or a link
		}
		data, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, info.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{
		{"init", "--quiet", "-b", "main"},
		{"add", "."},
		{"commit", "--quiet", "-m", "the repository"},
		{"tag", "--annotate", "--message", "v1.4.2", "v1.4.2"},
		// goreleaser reads the tag only in a clone with a remote.
		{"remote", "add", "origin", "https://github.com/org/app-status-action.git"},
	} {
		cmd := exec.Command("git", append([]string{"-c", "user.name=test", "-c", "user.email=test@example.invalid"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return dir
}

// zipNames is the names of a zip archive's files.
func zipNames(t *testing.T, path string) []string {
	t.Helper()
	r, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var names []string
	for _, f := range r.File {
		if !f.FileInfo().IsDir() {
			names = append(names, f.Name)
		}
	}
	return names
}
