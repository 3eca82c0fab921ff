package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCheck(t *testing.T) {
	t.Parallel()
	long := "verify: " + strings.Repeat("a", maxSubject-len("verify: "))
	tests := []struct {
		name string
		msg  string
		want []string
	}{
		{name: "subject only", msg: "merge: refuse reports of another run\n"},
		{name: "git's revert", msg: "Revert \"merge: refuse reports of another run in a very long subject of 72\"\n\nThis reverts commit 0123.\n"},
		{name: "git's revert, no blank line", msg: "Revert \"merge: refuse\"\nThis reverts commit 0123.\n",
			want: []string{"the second line is not blank: a blank line separates the subject from the body"}},
		{name: "subject and body", msg: "merge: refuse reports of another run\n\nA report of another run was merged.\n"},
		{name: "no trailing newline", msg: "merge: refuse reports of another run"},
		{name: "area with a path", msg: "internal/flux: read chart versions with semver\n"},
		{name: "area with dots, digits, dashes", msg: "ci.yml_2-x: add a unit job\n"},
		{name: "72 characters", msg: long + "\n"},
		{name: "72 characters, not bytes", msg: "docs: " + strings.Repeat("é", maxSubject-len("docs: ")) + "\n"},
		{
			name: "73 characters",
			msg:  long + "b\n",
			want: []string{"the subject is 73 characters long, more than 72: figures and details belong in the body"},
		},
		{name: "empty", msg: "", want: []string{"the subject (the first line) is empty"}},
		{name: "blank subject", msg: "  \n\nbody\n", want: []string{"the subject (the first line) is empty"}},
		{
			name: "no area",
			msg:  "Reread: the hint names the CLI's --shard\n",
			want: []string{`the area "Reread" is not lowercase letters, digits and /._- (starting with a letter or digit)`},
		},
		{
			name: "no colon",
			msg:  "refuse reports of another run\n",
			want: []string{`the subject does not start with an area and ": " (e.g. "verify: ", "docs: ")`},
		},
		{
			name: "no space after the colon",
			msg:  "merge:refuse reports of another run\n",
			want: []string{`the subject does not start with an area and ": " (e.g. "verify: ", "docs: ")`},
		},
		{
			name: "area with a space",
			msg:  "make bench-shards on fb2e62f: 20 shards\n",
			want: []string{`the area "make bench-shards on fb2e62f" is not lowercase letters, digits and /._- (starting with a letter or digit)`},
		},
		{
			name: "area starting with a dash",
			msg:  "-x: do a thing\n",
			want: []string{`the area "-x" is not lowercase letters, digits and /._- (starting with a letter or digit)`},
		},
		{name: "empty area", msg: ": do a thing\n", want: []string{`the area "" is not lowercase letters, digits and /._- (starting with a letter or digit)`}},
		{name: "empty summary", msg: "verify: \n", want: []string{"the subject starts or ends with white space", "the summary after the area is empty"}},
		{name: "period", msg: "verify: park hung clusters.\n", want: []string{"the summary ends with a period"}},
		{name: "leading space", msg: " verify: park hung clusters\n", want: []string{
			"the subject starts or ends with white space",
			`the area " verify" is not lowercase letters, digits and /._- (starting with a letter or digit)`,
		}},
		{
			name: "body without a blank line",
			msg:  "verify: park hung clusters\nbecause they hang\n",
			want: []string{"the second line is not blank: a blank line separates the subject from the body"},
		},
		{
			name: "everything wrong",
			msg:  "Review of 6db82fa: " + strings.Repeat("x", 80) + ".\nbody\n",
			want: []string{
				"the subject is 100 characters long, more than 72: figures and details belong in the body",
				`the area "Review of 6db82fa" is not lowercase letters, digits and /._- (starting with a letter or digit)`,
				"the summary ends with a period",
				"the second line is not blank: a blank line separates the subject from the body",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, check(tt.msg)); diff != "" {
				t.Errorf("check(%q) mismatch (-want +got):\n%s", tt.msg, diff)
			}
		})
	}
}
