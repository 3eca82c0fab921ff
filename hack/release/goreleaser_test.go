package release

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// goreleaserConfig is what the tests read of .goreleaser.yaml.
type goreleaserConfig struct {
	Builds []struct {
		ID     string   `json:"id"`
		Goos   []string `json:"goos"`
		Goarch []string `json:"goarch"`
	} `json:"builds"`
	Archives []struct {
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
