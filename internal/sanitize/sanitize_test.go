package sanitize

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestLine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{name: "plain", in: `Back-off pulling image "nope:1"`, want: `Back-off pulling image "nope:1"`},
		{name: "empty", in: "", want: ""},
		{name: "newlines", in: "one\ntwo\r\nthree\rfour", want: "one two three four"},
		{name: "tab", in: "a\tb", want: "a b"},
		{name: "spacing kept", in: "  a   b  ", want: "  a   b  "},
		{name: "unicode separators", in: "a\u2028b\u2029c\u0085d", want: "a b c d"},
		{name: "C1 controls", in: "a\u009bb", want: "a b"},
		{name: "terminal escapes", in: "\x1b[31mred\x1b[0m \x1b]0;title\x07done", want: "red done"},
		{name: "OSC ended by ST", in: "a\x1b]8;;http://x\x1b\\b", want: "ab"},
		{name: "escape at the end", in: "a\x1b", want: "a"},
		{name: "unicode", in: "ünïcödé ✅", want: "ünïcödé ✅"},
		{name: "invalid utf-8", in: "a\xffb", want: "a\uFFFDb"},
		{name: "NUL", in: "a\x00b", want: "a b"},
		{name: "bidi override", in: "abc\u202edcba\u202c.txt", want: "abcdcba.txt"},
		{name: "bidi isolate", in: "x\u2066y\u2069", want: "xy"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Line(tt.in); got != tt.want {
				t.Errorf("Line(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestCompact(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{name: "plain", in: "a b", want: "a b"},
		{name: "helm error list", in: "upgrade failed:\n  * a\n  * b\n", want: "upgrade failed: * a * b"},
		{name: "trimmed", in: "\t x \r\n", want: "x"},
		{name: "escapes", in: "\x1b[1mbold\x1b[0m  text", want: "bold text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Compact(tt.in); got != tt.want {
				t.Errorf("Compact(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestLogLine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{name: "indentation kept", in: "\tat main.go:12  x", want: "\tat main.go:12  x"},
		{name: "escapes dropped", in: "\x1b[1ma\x1b[0m", want: "a"},
		{name: "NUL becomes a space", in: "b\x00", want: "b "},
		{name: "newline becomes a space", in: "a\nb", want: "a b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := LogLine(tt.in); got != tt.want {
				t.Errorf("LogLine(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestTruncate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{in: "abc", n: 3, want: "abc"},
		{in: "abcd", n: 3, want: "ab…"},
		{in: "äöüß", n: 3, want: "äö…"},
		{in: "abc", n: 0, want: ""},
		{in: "abc", n: -1, want: ""},
	}
	for _, tt := range tests {
		if got := Truncate(tt.in, tt.n); got != tt.want {
			t.Errorf("Truncate(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

func TestCutUTF8(t *testing.T) {
	t.Parallel()
	s := "aä✅"
	for n := -1; n <= len(s)+1; n++ {
		got := CutUTF8(s, n)
		if len(got) > max(n, 0) || !utf8.ValidString(got) || !strings.HasPrefix(s, got) {
			t.Errorf("CutUTF8(%q, %d) = %q, want a valid prefix of at most %d bytes", s, n, got, n)
		}
	}
}

// FuzzLine checks that Line and Compact always return one valid line without control
// characters, whatever they are given, that Compact's is trimmed and collapsed, and that
// cleaning twice changes nothing.
func FuzzLine(f *testing.F) {
	for _, s := range []string{"", "a\nb", "\x1b[31mx", "a\u2028b", "\xff", "  x  ", "a\x1b]0;t\x07b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for name, clean := range map[string]func(string) string{"Line": Line, "Compact": Compact} {
			got := clean(s)
			if !utf8.ValidString(got) {
				t.Fatalf("%s(%q) = %q: invalid UTF-8", name, s, got)
			}
			for _, r := range got {
				if r < 0x20 || (r >= 0x7f && r < 0xa0) || r == '\u2028' || r == '\u2029' || bidiControl(r) {
					t.Fatalf("%s(%q) = %q: contains control character %U", name, s, got, r)
				}
			}
			if again := clean(got); again != got {
				t.Fatalf("%s(%s(%q)) = %q, want %q", name, name, s, again, got)
			}
		}
		if got := Compact(s); strings.TrimSpace(got) != got || strings.Contains(got, "  ") {
			t.Fatalf("Compact(%q) = %q: not trimmed and collapsed", s, got)
		}
	})
}
