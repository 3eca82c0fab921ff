package flux

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"

	"github.com/Masterminds/semver/v3"
)

// Revision is the revision a user expects a Flux object to have applied, in whatever form
// they had at hand: a Flux revision, a commit SHA, an OCI digest, or a tag, branch or chart
// version. The zero Revision expects nothing and matches anything.
type Revision struct {
	raw  string
	form revisionForm
	// ref is the part before @ (a full revision), the tag, branch or version (a ref), or the
	// hex itself (a SHA, which may also be a tag).
	ref    string
	algo   string // the digest algorithm, for full revisions and digests
	digest string // lower-case hex, for full revisions, SHAs and digests
}

type revisionForm int

const (
	formAny    revisionForm = iota // nothing expected
	formFull                       // REF@ALGO:HEX, or legacy REF/HEX
	formSHA                        // bare hex: a commit SHA (prefix), or a tag equal to it
	formDigest                     // ALGO:HEX: an OCI or artifact digest (prefix)
	formRef                        // a tag, branch or chart version
)

// minHex is the shortest SHA or digest prefix accepted, as git abbreviates.
const minHex = 7

// digestLengths are the full hex lengths of the digest algorithms Flux sources use.
var digestLengths = map[string]int{"sha1": 40, "sha256": 64, "sha384": 96, "sha512": 128, "blake3": 64}

const revisionUsage = "use a Flux revision (main@sha1:<sha>), a commit SHA (at least 7 hex digits), an OCI digest (sha256:<hex>), or a version tag or chart version (v1.2.3, mylib@1.2.3, 6.5.0)"

// movingRefUsage says why a branch is refused: it names whatever commit it points to now.
const movingRefUsage = "a branch, HEAD, latest or a short version (v1, 1.2) names whatever it points to when Flux looks, so it would match any revision; " +
	"pass the commit SHA (${{ github.sha }}), a Flux revision (main@sha1:<sha>), an OCI digest, or a version tag (refs/tags/NAME for a tag of another shape)"

// ParseRevision reads an expected revision. The empty string expects no particular revision.
func ParseRevision(s string) (Revision, error) {
	if s == "" {
		return Revision{}, nil
	}
	if i := strings.IndexFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }); i >= 0 {
		return Revision{}, fmt.Errorf("revision %q: contains whitespace or a control character at byte %d; pass the revision alone, without spaces or newlines", s, i)
	}
	r := Revision{raw: s}
	if i := strings.LastIndex(s, "@"); i >= 0 {
		if i == 0 {
			return Revision{}, fmt.Errorf("revision %q: nothing before @; %s", s, revisionUsage)
		}
		after := s[i+1:]
		switch {
		case strings.Contains(after, ":"):
			algo, hex, err := parseDigest(s, after)
			if err != nil {
				return Revision{}, err
			}
			r.form, r.ref, r.algo, r.digest = formFull, s[:i], algo, hex
		case isHex(after) && len(after) >= minHex && len(after) <= 128:
			// REF@SHA without the algorithm: the commit of a branch or tag, as people write it.
			r.form, r.ref, r.digest = formFull, s[:i], strings.ToLower(after)
		case isReleaseVersion(after) || strings.HasPrefix(s, "refs/tags/"):
			// A tag with an @ and no digest, as monorepos name them: mylib@1.2.3.
			r.form, r.ref = formRef, s
		default:
			return Revision{}, fmt.Errorf("revision %q: %q after @ is neither a digest nor a version; %s", s, after, movingRefUsage)
		}
		return r, nil
	}
	if strings.Contains(s, ":") {
		algo, hex, err := parseDigest(s, s)
		if err != nil {
			return Revision{}, err
		}
		r.form, r.algo, r.digest = formDigest, algo, hex
		return r, nil
	}
	if p := splitRevision(s); p.legacy {
		r.form, r.ref, r.algo, r.digest = formFull, p.ref, p.algo, p.digest
		return r, nil
	}
	if isHex(s) && len(s) >= minHex && len(s) <= 64 {
		r.form, r.ref, r.digest = formSHA, s, strings.ToLower(s)
		return r, nil
	}
	// A name that is not a digest can only be matched against the ref part of what Flux
	// applied, and a branch's ref is the same for every commit on it: only a tag is meant to
	// stay put, so only a full version MAJOR.MINOR.PATCH (a release tag or a chart version,
	// with build metadata too: 6.5.0+501967ad514d) or an explicit refs/tags/NAME is taken. A
	// short version (v1, 1.2) is as often a branch or a tag moved at every release.
	if !strings.HasPrefix(s, "refs/tags/") && !isReleaseVersion(s) {
		return Revision{}, fmt.Errorf("revision %q: %s", s, movingRefUsage)
	}
	r.form, r.ref = formRef, s
	return r, nil
}

// parseDigest checks ALGO:HEX, the part of in after @ or all of it.
func parseDigest(in, d string) (algo, hex string, err error) {
	a, h, ok := strings.Cut(d, ":")
	algo, hex = strings.ToLower(a), strings.ToLower(h)
	size, known := digestLengths[algo]
	switch {
	case !ok || !known:
		return "", "", fmt.Errorf("revision %q: %q is not a digest ALGORITHM:HEX with algorithm sha1, sha256, sha384, sha512 or blake3; %s", in, d, revisionUsage)
	case !isHex(hex):
		return "", "", fmt.Errorf("revision %q: digest %q is not hexadecimal; %s", in, d, revisionUsage)
	case len(hex) < minHex:
		return "", "", fmt.Errorf("revision %q: digest %q is too short; give at least %d hex digits", in, d, minHex)
	case len(hex) > size:
		return "", "", fmt.Errorf("revision %q: digest %q is longer than a %s digest (%d hex digits)", in, d, algo, size)
	}
	return algo, hex, nil
}

// NamesArtifact reports whether the revision names one artifact of a source, as a merge's
// commit does: a commit SHA, a Flux revision or a digest, not a tag or a chart version.
func (r Revision) NamesArtifact() bool {
	return r.form == formSHA || r.form == formFull || r.form == formDigest
}

// IsZero reports whether no revision is expected.
func (r Revision) IsZero() bool { return r.form == formAny }

// String is the revision as the user gave it.
func (r Revision) String() string { return r.raw }

// Matches reports whether any of the candidates, revisions as Flux records them
// (lastAppliedRevision, a chart version, a digest), is the expected revision:
//   - a full revision matches the same ref and digest, also across the legacy REF/SHA format
//     and with or without a refs/heads/ or refs/tags/ prefix, and a bare digest equal to its own;
//   - a SHA matches a digest it starts, or that starts it (7 hex digits at least on both
//     sides: a full commit SHA matches a chart version VERSION+<12 hex>), or a ref equal to it;
//   - a digest matches a digest of the same algorithm, likewise by prefix;
//   - a ref matches a ref equal to it; a version also matches a chart version that only adds
//     build metadata (6.5.0 matches 6.5.0+501967ad514d, not 6.5.0-rc1).
//
// The zero Revision matches anything; an empty candidate never matches a set Revision.
func (r Revision) Matches(candidates ...string) bool {
	if r.IsZero() {
		return true
	}
	for _, c := range candidates {
		if c != "" && r.match(splitRevision(c)) {
			return true
		}
	}
	return false
}

func (r Revision) match(c revisionParts) bool {
	switch r.form {
	case formFull:
		// A chart version VERSION+<12 hex> built from the commit carries its digest: its ref
		// is the chart's version, not the branch.
		return c.hasDigest(r.algo, r.digest) && (c.ref == "" || c.version != "" || sameRef(r.ref, c.ref))
	case formSHA:
		return c.hasDigest("", r.digest) || sameRef(r.ref, c.ref)
	case formDigest:
		return c.hasDigest(r.algo, r.digest)
	case formRef:
		if sameRef(r.ref, c.ref) || (extendable(r.ref) && strings.HasPrefix(c.ref, r.ref+"+")) {
			return true
		}
		// A chart version with its digest, VERSION+<12 hex>, also matches that version and
		// digest recorded with the generation source-controller adds when it merges values
		// files (VERSION+<12 hex>.N).
		own := splitRevision(r.ref)
		return own.version != "" && own.version == c.version && own.digest == c.digest
	}
	return false
}

// extendable reports whether a chart version may extend ref with +build metadata: ref is a
// version as Helm reads a chart's (semver.NewVersion: 1, v1.2, 1.2.3-rc.1), without build
// metadata of its own.
func extendable(ref string) bool {
	v, err := semver.NewVersion(ref)
	return err == nil && v.Metadata() == ""
}

// isReleaseVersion reports whether s is a release version MAJOR.MINOR.PATCH, with a
// pre-release and build metadata: a version as Helm reads a chart's (semver.NewVersion, which
// also takes a leading v and leading zeros) that gives all three numbers.
func isReleaseVersion(s string) bool {
	if _, err := semver.NewVersion(s); err != nil {
		return false
	}
	core, _, _ := strings.Cut(s, "-")
	core, _, _ = strings.Cut(core, "+")
	return strings.Count(core, ".") == 2
}

// revisionParts is a recorded revision taken apart.
type revisionParts struct {
	ref    string // before @, before /HEX (legacy), or the whole revision
	algo   string // empty when unknown (chart version build metadata)
	digest string // lower-case hex
	at     int    // where the digest starts in the revision, -1 without one
	// version is a chart version without its +HEX build metadata, which is then the digest.
	version string
	legacy  bool // REF/HEX
}

// splitRevision takes a recorded revision apart, leniently: anything it does not recognise
// is a plain ref.
func splitRevision(s string) revisionParts {
	p := revisionParts{ref: s, at: -1}
	if i := strings.LastIndex(s, "@"); i >= 0 {
		if algo, hex, ok := cutDigest(s[i+1:]); ok {
			return revisionParts{ref: s[:i], algo: algo, digest: hex, at: i + 1 + len(algo) + 1}
		}
		if hex := s[i+1:]; isHex(hex) && len(hex) >= minHex {
			// REF@SHA without the algorithm, as people write a revision.
			return revisionParts{ref: s[:i], digest: strings.ToLower(hex), at: i + 1}
		}
		return p
	}
	if algo, hex, ok := cutDigest(s); ok {
		return revisionParts{algo: algo, digest: hex, at: len(algo) + 1}
	}
	if i := strings.LastIndex(s, "/"); i > 0 && isHex(s[i+1:]) {
		switch len(s) - i - 1 {
		case 40:
			return revisionParts{ref: s[:i], algo: "sha1", digest: strings.ToLower(s[i+1:]), at: i + 1, legacy: true}
		case 64:
			return revisionParts{ref: s[:i], algo: "sha256", digest: strings.ToLower(s[i+1:]), at: i + 1, legacy: true}
		}
	}
	// helm-controller records OCI chart versions as VERSION+<first 12 hex of the digest>, and
	// source-controller builds a chart from Git or a Bucket as VERSION+<first 12 hex of the
	// revision>, followed by .GENERATION when it merges values files. A chart packaged with a
	// commit of its own (--version 0.1.0+<sha>) carries hex with letters. Other build metadata
	// (a date, a build number, a generation alone: decimal) is no digest.
	if i := strings.LastIndex(s, "+"); i > 0 {
		if m := chartBuildDigest.FindStringSubmatch(s[i+1:]); m != nil && len(m[1]) >= minHex && len(m[1]) <= 64 {
			p.version, p.digest = s[:i], strings.ToLower(m[1])
		}
	}
	return p
}

// chartBuildDigest is the build metadata of a chart version that carries a digest: 12 hex
// digits, or 7 to 64 with a letter among them, then an optional .GENERATION.
var chartBuildDigest = regexp.MustCompile(`^([0-9a-fA-F]{12}|[0-9a-fA-F]*[a-fA-F][0-9a-fA-F]*)(\.[0-9]+)?$`)

func cutDigest(s string) (algo, hex string, ok bool) {
	a, h, ok := strings.Cut(s, ":")
	a = strings.ToLower(a)
	if _, known := digestLengths[a]; !ok || !known || !isHex(h) {
		return "", "", false
	}
	return a, strings.ToLower(h), true
}

// hasDigest reports whether the recorded digest and hex agree: one is a prefix of the other,
// and the shorter has at least minHex digits (a full commit SHA matches the 12 digits a chart
// version built from Git carries, and a short SHA matches a full digest). An empty algo, on
// either side, matches any algorithm.
func (p revisionParts) hasDigest(algo, hex string) bool {
	if p.digest == "" || (algo != "" && p.algo != "" && p.algo != algo) {
		return false
	}
	short, long := p.digest, hex
	if len(short) > len(long) {
		short, long = long, short
	}
	return len(short) >= minHex && strings.HasPrefix(long, short)
}

// sameRef compares refs, ignoring a refs/heads/ or refs/tags/ prefix on either side.
func sameRef(a, b string) bool {
	return a != "" && shortRef(a) == shortRef(b)
}

func shortRef(s string) string {
	for _, p := range []string{"refs/heads/", "refs/tags/"} {
		if strings.HasPrefix(s, p) {
			return s[len(p):]
		}
	}
	return s
}

func isHex(s string) bool {
	return s != "" && strings.Trim(s, "0123456789abcdefABCDEF") == ""
}

// ShortRevision abbreviates the digest in a revision for messages, the way git and OCI tools
// do: 7 hex digits of a sha1, 12 of other digests.
func ShortRevision(s string) string {
	p := splitRevision(s)
	if p.at < 0 || p.algo == "" {
		if isHex(s) && len(s) > 12 {
			return s[:minHex]
		}
		return s
	}
	n := 12
	if p.algo == "sha1" {
		n = minHex
	}
	if len(s)-p.at > n {
		return s[:p.at+n]
	}
	return s
}
