package report

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// FuzzMDText: whatever a cluster writes, mdText gives one line of valid UTF-8 in which no
// markdown or HTML syntax character and no autolink is left active.
func FuzzMDText(f *testing.F) {
	for _, s := range []string{"a | b", "<script>x</script>", "**b** [l](u)", "@octocat #12", "line\nbreak\r\n\x1b[31m", "```", "\\|", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := mdText(s, 200)
		if !utf8.ValidString(got) || strings.ContainsAny(got, "\n\r<>") {
			t.Fatalf("mdText(%q) = %q: not one safe line", s, got)
		}
		rs := []rune(got)
		for i, r := range rs {
			backslashes := 0
			for j := i - 1; j >= 0 && rs[j] == '\\'; j-- {
				backslashes++
			}
			escaped := backslashes%2 == 1
			switch {
			case strings.ContainsRune("`*_[]|~", r) && !escaped:
				t.Fatalf("mdText(%q) = %q: %q at %d is not escaped", s, got, r, i)
			case (r == '@' || r == '#') && (i == 0 || !wordRune(rs[i-1])) &&
				i+1 < len(rs) && (unicode.IsLetter(rs[i+1]) || unicode.IsDigit(rs[i+1])):
				t.Fatalf("mdText(%q) = %q: %q at %d starts a link", s, got, r, i)
			}
		}
	})
}
