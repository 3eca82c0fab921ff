package flux

import (
	"strings"
	"testing"
)

const (
	ociDigest   = "sha256:501967ad514d8a77666ffcdcbfd3c483f4aab25fa312108b4ac4e8678da6176a"
	otherDigest = "sha256:b9cb8b0c1a46040da3a2b23703c70d95ef38896739467ef07352eee9c87224c3"
)

func TestParseRevisionErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string
	}{
		{"main @sha1:" + newSHA, `revision "main @sha1:` + newSHA + `": contains whitespace or a control character at byte 4; pass the revision alone, without spaces or newlines`},
		{newSHA + "\n", `revision "` + newSHA + `\n": contains whitespace or a control character at byte 40; pass the revision alone, without spaces or newlines`},
		{"v1.2.3\x00", `revision "v1.2.3\x00": contains whitespace or a control character at byte 6; pass the revision alone, without spaces or newlines`},
		{"@sha1:" + newSHA, `revision "@sha1:` + newSHA + `": nothing before @; ` + revisionUsage},
		{"main@md5:" + newSHA, `revision "main@md5:` + newSHA + `": "md5:` + newSHA + `" is not a digest ALGORITHM:HEX with algorithm sha1, sha256, sha384, sha512 or blake3; ` + revisionUsage},
		{"main@sha1:", `revision "main@sha1:": digest "sha1:" is not hexadecimal; ` + revisionUsage},
		{"main@sha1:c2a6b0g", `revision "main@sha1:c2a6b0g": digest "sha1:c2a6b0g" is not hexadecimal; ` + revisionUsage},
		{"main@sha1:c2a6b0", `revision "main@sha1:c2a6b0": digest "sha1:c2a6b0" is too short; give at least 7 hex digits`},
		{"main@sha1:" + newSHA + "0", `revision "main@sha1:` + newSHA + `0": digest "sha1:` + newSHA + `0" is longer than a sha1 digest (40 hex digits)`},
		{"sha256:501967", `revision "sha256:501967": digest "sha256:501967" is too short; give at least 7 hex digits`},
		{"md5:501967ad514d", `revision "md5:501967ad514d": "md5:501967ad514d" is not a digest ALGORITHM:HEX with algorithm sha1, sha256, sha384, sha512 or blake3; ` + revisionUsage},
		{"main:latest", `revision "main:latest": "main:latest" is not a digest ALGORITHM:HEX with algorithm sha1, sha256, sha384, sha512 or blake3; ` + revisionUsage},
		// Names that move (issue 18): they would match any commit on them.
		{"main", `revision "main": ` + movingRefUsage},
		{"refs/heads/main", `revision "refs/heads/main": ` + movingRefUsage},
		{"HEAD", `revision "HEAD": ` + movingRefUsage},
		{"latest", `revision "latest": ` + movingRefUsage},
		{"feature/login", `revision "feature/login": ` + movingRefUsage},
		{"release-1.2", `revision "release-1.2": ` + movingRefUsage},
		{"main@HEAD", `revision "main@HEAD": "HEAD" after @ is neither a digest nor a version; ` + movingRefUsage},
		{"refs/heads/v2", `revision "refs/heads/v2": ` + movingRefUsage},
		{"refs/heads/1.2.3", `revision "refs/heads/1.2.3": ` + movingRefUsage},
		{"v1", `revision "v1": ` + movingRefUsage},
		{"1.2", `revision "1.2": ` + movingRefUsage},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			r, err := ParseRevision(tt.in)
			if err == nil {
				t.Fatalf("ParseRevision(%q) = %v, want error %q", tt.in, r, tt.want)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("ParseRevision(%q) error = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseRevisionKeepsInput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		zero bool
	}{
		{"", true},
		{"main@sha1:" + strings.ToUpper(newSHA), false},
		{"main/" + newSHA, false},
		{"c2a6b03", false},
		{ociDigest, false},
		{"6.5.0+501967ad514d", false},
		{"refs/tags/feature/login-page", false},
		{"mylib@1.2.3+build.7", false},
		{"refs/tags/release@2024-01", false},
		{"refs/tags/v1", false},
		{"v1.2.3-rc.1+abc", false},
		{"v1.2.3", false},
		{"mylib@1.2.3", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			r := mustRevision(t, tt.in)
			if got := r.String(); got != tt.in {
				t.Errorf("ParseRevision(%q).String() = %q, want the input", tt.in, got)
			}
			if got := r.IsZero(); got != tt.zero {
				t.Errorf("ParseRevision(%q).IsZero() = %t, want %t", tt.in, got, tt.zero)
			}
		})
	}
}

func TestRevisionMatches(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		want       string
		candidates []string
		match      bool
	}{
		{"nothing expected", "", []string{"main@sha1:" + newSHA}, true},
		{"nothing expected, nothing recorded", "", nil, true},
		{"nothing recorded", "v1.2.3", nil, false},
		{"empty candidate", "v1.2.3", []string{""}, false},
		{"any candidate", "6.5.0", []string{"", "6.4.0", "6.5.0+501967ad514d"}, true},

		{"full: same", "main@sha1:" + newSHA, []string{"main@sha1:" + newSHA}, true},
		{"full: other sha", "main@sha1:" + newSHA, []string{"main@sha1:" + newerSHA}, false},
		{"full: other branch", "main@sha1:" + newSHA, []string{"dev@sha1:" + newSHA}, false},
		{"full: upper-case hex", "main@sha1:" + strings.ToUpper(newSHA), []string{"main@sha1:" + newSHA}, true},
		{"full: legacy recorded", "main@sha1:" + newSHA, []string{"main/" + newSHA}, true},
		{"full: legacy expected", "main/" + newSHA, []string{"main@sha1:" + newSHA}, true},
		{"full: legacy both", "main/" + newSHA, []string{"main/" + newSHA}, true},
		{"full: legacy other branch", "main/" + newSHA, []string{"dev/" + newSHA}, false},
		{"full: refs/heads expected", "refs/heads/main@sha1:" + newSHA, []string{"main@sha1:" + newSHA}, true},
		{"full: refs/heads recorded", "main@sha1:" + newSHA, []string{"refs/heads/main@sha1:" + newSHA}, true},
		{"full: tag", "v1.2.3@sha1:" + newSHA, []string{"refs/tags/v1.2.3@sha1:" + newSHA}, true},
		{"full: bare digest recorded", "main@sha1:" + newSHA, []string{"sha1:" + newSHA}, true},
		{"full: no digest recorded", "main@sha1:" + newSHA, []string{"main"}, false},
		{"full: short sha expected", "main@sha1:c2a6b03", []string{"main@sha1:" + newSHA}, true},
		{"full: OCI tag", "latest@" + ociDigest, []string{"latest@" + ociDigest}, true},
		{"full: OCI other digest", "latest@" + ociDigest, []string{"latest@" + otherDigest}, false},
		{"full: OCI digest recorded alone", "latest@" + ociDigest, []string{ociDigest}, true},
		{"full: other algorithm", "latest@sha256:" + newSHA, []string{"latest@sha1:" + newSHA}, false},
		{"full: chart version", "6.5.0@sha256:501967ad514d", []string{"6.5.0+501967ad514d"}, true},
		{"full: chart version carries 12 digits", "6.5.0@" + ociDigest, []string{"6.5.0+501967ad514d"}, true},
		{"full: chart version, other digest", "6.5.0@" + otherDigest, []string{"6.5.0+501967ad514d"}, false},
		{"full: ref@sha without algorithm", "main@" + newSHA, []string{"main@sha1:" + newSHA}, true},
		{"full: ref@short sha without algorithm", "main@c2a6b03", []string{"main@sha1:" + newSHA}, true},
		{"full: ref@sha, other branch", "main@c2a6b03", []string{"dev@sha1:" + newSHA}, false},

		{"sha: full", newSHA, []string{"main@sha1:" + newSHA}, true},
		{"sha: short", "c2a6b03", []string{"main@sha1:" + newSHA}, true},
		{"sha: upper-case", "C2A6B03F19", []string{"main@sha1:" + newSHA}, true},
		{"sha: legacy", "c2a6b03", []string{"main/" + newSHA}, true},
		{"sha: other", newerSHA, []string{"main@sha1:" + newSHA}, false},
		{"sha: not a prefix", "2a6b03f", []string{"main@sha1:" + newSHA}, false},
		{"sha: bare digest", "501967ad", []string{ociDigest}, true},
		{"sha: chart version digest", "501967a", []string{"6.5.0+501967ad514d"}, true},
		{"sha: also a tag", "deadbee", []string{"deadbee"}, true},
		{"sha: also a tag with digest", "deadbee", []string{"deadbee@sha1:" + newSHA}, true},
		{"sha: not a longer tag", "deadbee", []string{"deadbeef"}, false},
		{"sha: not a ref prefix", "c2a6b03", []string{"c2a6b03-feature"}, false},
		{"sha: github.sha against a chart built from Git", "0123456789ab" + strings.Repeat("c", 28), []string{"1.0.0+0123456789ab"}, true},
		{"sha: github.sha against another chart", newSHA, []string{"1.0.0+0123456789ab"}, false},
		{"sha: 6 digits of a chart version are too few", newSHA, []string{"1.0.0+c2a6b0"}, false},
		{"sha: full sha against a short recorded digest", newSHA, []string{"sha1:c2a6b03"}, true},

		{"digest: same", ociDigest, []string{ociDigest}, true},
		{"digest: short", "sha256:501967ad514d", []string{ociDigest}, true},
		{"digest: upper-case", "SHA256:501967AD514D", []string{ociDigest}, true},
		{"digest: in a revision", ociDigest, []string{"latest@" + ociDigest}, true},
		{"digest: other", ociDigest, []string{otherDigest}, false},
		{"digest: other algorithm", "sha1:" + newSHA, []string{"sha256:" + newSHA + "000000000000000000000000"}, false},
		{"digest: chart version", "sha256:501967ad514d", []string{"6.5.0+501967ad514d"}, true},
		{"digest: not a ref", "sha256:501967ad514d", []string{"501967ad514d"}, false},

		{"ref: tag", "refs/tags/release-1.2", []string{"release-1.2@sha1:" + newSHA}, true},
		{"ref: legacy", "v1.2.3", []string{"v1.2.3/" + newSHA}, true},
		{"ref: longer tag name", "refs/tags/rel", []string{"release@sha1:" + newSHA}, false},
		{"full: chart built from the commit", "main@sha1:" + newSHA, []string{"0.1.0+" + newSHA[:12]}, true},
		{"full: chart built from another commit", "main@sha1:" + newSHA, []string{"0.1.0+b9cb8b0c1a46"}, false},
		{"full: chart built from the commit, values merged", "main@sha1:" + newSHA, []string{"0.1.0+" + newSHA[:12] + ".3"}, true},
		{"sha: decimal build metadata is no digest", "2024010", []string{"1.0.0+20240101"}, false},
		{"sha: generation alone is no digest", "1234567", []string{"1.0.0+1234567"}, false},
		{"sha: a chart packaged with its short commit", newSHA, []string{"0.1.0+" + newSHA[:7]}, true},
		{"sha: a chart packaged with another commit", newSHA, []string{"0.1.0+b9cb8b0"}, false},
		{"ref: chart version with digest, values merged", "6.5.0+501967ad514d", []string{"6.5.0+501967ad514d.4"}, true},
		{"ref: chart version with digest, other digest merged", "6.5.0+501967ad514d", []string{"6.5.0+b9cb8b0c1a46.4"}, false},
		{"ref: floating major tag given as refs/tags", "refs/tags/v1", []string{"v1@" + ociDigest}, true},
		{"ref: tag with slash", "refs/tags/feature/login", []string{"feature/login@sha1:" + newSHA}, true},
		{"ref: tag", "v1.2.3", []string{"v1.2.3@sha1:" + newSHA}, true},
		{"ref: refs/tags", "v1.2.3", []string{"refs/tags/v1.2.3@sha1:" + newSHA}, true},
		{"ref: longer tag", "v1.2.3", []string{"v1.2.30@sha1:" + newSHA}, false},
		{"ref: OCI tag", "6.5.0", []string{"6.5.0@" + ociDigest}, true},
		{"ref: version", "6.5.0", []string{"6.5.0"}, true},
		{"ref: OCI chart version", "6.5.0", []string{"6.5.0+501967ad514d"}, true},
		{"ref: longer version", "6.5.0", []string{"6.5.01"}, false},
		{"ref: pre-release", "6.5.0", []string{"6.5.0-rc1"}, false},
		{"ref: pre-release with digest", "6.5.0", []string{"6.5.0-rc1+501967ad514d"}, false},
		{"ref: expected pre-release", "6.5.0-rc1", []string{"6.5.0-rc1+501967ad514d"}, true},
		{"ref: with build metadata", "6.5.0+501967ad514d", []string{"6.5.0+501967ad514d"}, true},
		{"ref: other build metadata", "6.5.0+501967ad514d", []string{"6.5.0+b9cb8b0c1a46"}, false},
		{"ref: not a version", "refs/tags/release-1.2", []string{"release-1.2+hotfix"}, false},
		{"ref: case-sensitive", "refs/tags/Main", []string{"main@sha1:" + newSHA}, false},
		{"ref: monorepo tag", "mylib@1.2.3", []string{"mylib@1.2.3@sha1:" + newSHA}, true},
		{"ref: monorepo tag, refs/tags", "mylib@1.2.3", []string{"refs/tags/mylib@1.2.3@sha1:" + newSHA}, true},
		{"ref: monorepo tag, other library", "mylib@1.2.3", []string{"otherlib@1.2.3@sha1:" + newSHA}, false},
		{"ref: monorepo tag, other version", "mylib@1.2.3", []string{"mylib@1.2.4@sha1:" + newSHA}, false},
		{"full: monorepo tag with digest", "mylib@1.2.3@sha1:" + newSHA, []string{"refs/tags/mylib@1.2.3@sha1:" + newSHA}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := mustRevision(t, tt.want).Matches(tt.candidates...); got != tt.match {
				t.Errorf("ParseRevision(%q).Matches(%q) = %t, want %t", tt.want, tt.candidates, got, tt.match)
			}
		})
	}
}

func TestShortRevision(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string
	}{
		{"main@sha1:" + newSHA, "main@sha1:c2a6b03"},
		{"main/" + newSHA, "main/c2a6b03"},
		{newSHA, "c2a6b03"},
		{"c2a6b03f19", "c2a6b03f19"},
		{"latest@" + ociDigest, "latest@sha256:501967ad514d"},
		{ociDigest, "sha256:501967ad514d"},
		{"6.5.0+501967ad514d", "6.5.0+501967ad514d"},
		{"main@sha1:c2a6b", "main@sha1:c2a6b"},
		{"main", "main"},
		{"", ""},
		{"v1.2.3@sha1:" + newSHA, "v1.2.3@sha1:c2a6b03"},
		{"feat/a@b@sha1:" + newSHA, "feat/a@b@sha1:c2a6b03"},
		{"sha1:" + newSHA, "sha1:c2a6b03"},
		{"sha384:" + strings.Repeat("0123456789abcdef", 6), "sha384:0123456789ab"},
		{"sha512:" + strings.Repeat("0123456789abcdef", 8), "sha512:0123456789ab"},
		{"blake3:" + strings.Repeat("0123456789abcdef", 4), "blake3:0123456789ab"},
		{"1.4.0", "1.4.0"},
		{"main@sha1:" + strings.Repeat("z", 40), "main@sha1:" + strings.Repeat("z", 40)},
		{"sha256:0123", "sha256:0123"},
		{"md5:" + strings.Repeat("0123456789abcdef", 2), "md5:" + strings.Repeat("0123456789abcdef", 2)},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			if got := ShortRevision(tt.in); got != tt.want {
				t.Errorf("ShortRevision(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestNamesArtifact: a commit SHA, a Flux revision or a digest names one artifact of a
// source, as a merge's commit does; a tag or a chart version does not.
func TestNamesArtifact(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want bool
	}{
		{"", false},
		{"a1b2c3d", true},
		{"main@sha1:a1b2c3d4e5f60718293a4b5c6d7e8f9012345678", true},
		{"sha256:43ad78c94b2655429d84f21488f29d7cca9cd45b7f54d2b27e16bbec8eff9228", true},
		{"v1.2.3", false},
		{"6.5.0", false},
	}
	for _, tt := range tests {
		r, err := ParseRevision(tt.in)
		if err != nil {
			t.Fatalf("ParseRevision(%q): %v", tt.in, err)
		}
		if got := r.NamesArtifact(); got != tt.want {
			t.Errorf("ParseRevision(%q).NamesArtifact() = %t, want %t", tt.in, got, tt.want)
		}
	}
}
