// Package sanitize makes untrusted text safe to show: messages, names, events and logs that
// come from clusters, and text from the user's inputs. It removes terminal escape sequences,
// turns every other control character into a space, and bounds the length, so a piece of text
// always stays on the one line it was given. Escaping for a format (markdown, HTML, a
// workflow command) is the job of the code that writes that format; it starts from here.
package sanitize

import (
	"strings"
	"unicode/utf8"
)

// Line cleans s for a single line: escape sequences and bidirectional-text controls (which
// can make text display in another order than it reads) are dropped, and every other control
// character (newlines and tabs included) and every Unicode line or paragraph separator
// becomes a space. Invalid UTF-8 becomes U+FFFD. Spacing is kept.
func Line(s string) string {
	if printableASCII(s) {
		return s
	}
	return clean(s, false)
}

// Compact is Line with runs of white space collapsed to one space and the ends trimmed: for
// a message that is stored or shown on its own, such as a multi-line Helm error list.
func Compact(s string) string {
	return strings.Join(strings.Fields(Line(s)), " ")
}

// LogLine cleans one line of a container log: like Line, but tabs are kept, since a log's
// indentation means something.
func LogLine(s string) string {
	if printableASCII(s) {
		return s
	}
	return clean(s, true)
}

// printableASCII reports whether s has nothing to clean.
func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}

func clean(s string, keepTabs bool) string {
	var b strings.Builder
	b.Grow(len(s))
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == 0x1b: // ESC: skip the whole escape sequence
			i = skipEscape(rs, i)
		case r == '\r' && i+1 < len(rs) && rs[i+1] == '\n':
			// \r\n is one line break
		case r == '\t' && keepTabs:
			b.WriteRune(r)
		case bidiControl(r):
			// dropped
		case r < 0x20 || (r >= 0x7f && r < 0xa0) || r == '\u2028' || r == '\u2029' || r == '\u0085':
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// bidiControl reports the characters that change the display order of text (the
// "Trojan Source" characters): marks, embeddings, overrides and isolates.
func bidiControl(r rune) bool {
	return r == '\u061c' || r == '\u200e' || r == '\u200f' || (r >= '\u202a' && r <= '\u202e') || (r >= '\u2066' && r <= '\u2069')
}

// skipEscape returns the index of the last rune of the escape sequence starting at rs[i].
func skipEscape(rs []rune, i int) int {
	if i+1 >= len(rs) {
		return i
	}
	switch rs[i+1] {
	case '[': // CSI: parameters, then a final byte in @..~
		for j := i + 2; j < len(rs); j++ {
			if rs[j] >= 0x40 && rs[j] <= 0x7e {
				return j
			}
		}
		return len(rs) - 1
	case ']': // OSC: up to BEL or ESC \
		for j := i + 2; j < len(rs); j++ {
			if rs[j] == 0x07 {
				return j
			}
			if rs[j] == 0x1b && j+1 < len(rs) && rs[j+1] == '\\' {
				return j + 1
			}
		}
		return len(rs) - 1
	default:
		return i + 1
	}
}

// Truncate cuts s to at most n runes, ending it with "…" when it was cut.
func Truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n < 1 {
		return ""
	}
	rs := []rune(s)
	return string(rs[:n-1]) + "…"
}

// CutUTF8 cuts s to at most n bytes without splitting a rune.
func CutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
