package flux

import (
	"strings"
	"testing"
)

// FuzzParseRevision: parsing never panics; a revision it accepts reads back as given and
// matches itself, as a user pasting the revision Flux recorded expects.
func FuzzParseRevision(f *testing.F) {
	for _, s := range []string{"main@sha1:" + newSHA, newSHA, "c2a6b03", "sha256:501967ad514d", "6.5.0", "6.5.0+501967ad514d",
		"mylib@1.2.3", "main@c2a6b03", "main/" + newSHA, "refs/tags/v1@sha1:" + newSHA, "@x", "a:b", "main@sha1:zz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRevision(s)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("ParseRevision(%q) error spans lines: %q", s, err)
			}
			return
		}
		if r.String() != s {
			t.Fatalf("ParseRevision(%q).String() = %q", s, r.String())
		}
		if s != "" && !r.Matches(s) {
			t.Fatalf("ParseRevision(%q) does not match itself", s)
		}
		_ = ShortRevision(s)
	})
}
