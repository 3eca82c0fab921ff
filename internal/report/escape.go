package report

import (
	"strings"
	"unicode/utf8"
)

// oneLine cleans text from a cluster for a single line: terminal escape sequences are
// dropped and every other control character (newlines and tabs included) becomes a space.
func oneLine(s string) string {
	return sanitize(s, false)
}

// logLine cleans one line of a container log: like oneLine, but tabs are kept.
func logLine(s string) string {
	return sanitize(s, true)
}

func sanitize(s string, keepTabs bool) string {
	clean := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f || c >= 0x80 {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
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
		case r < 0x20 || (r >= 0x7f && r < 0xa0) || r == '\u2028' || r == '\u2029':
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
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

// truncate cuts s to at most n runes, ending it with "…" when it was cut.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	if n < 1 {
		return ""
	}
	rs := []rune(s)
	return string(rs[:n-1]) + "…"
}

// mdText escapes text for markdown outside code: in a table cell, a list item or a paragraph.
// It is cleaned to one line and cut to limit runes first. Characters that start markdown
// syntax (code spans, emphasis, links, cell breaks) are backslash-escaped and HTML
// delimiters become entities, so the text shows as it is and cannot break out.
func mdText(s string, limit int) string {
	s = truncate(oneLine(s), limit)
	var b strings.Builder
	b.Grow(len(s) + len(s)/8)
	for _, r := range s {
		switch r {
		case '\\', '`', '*', '_', '[', ']', '|', '~':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			b.WriteString("&amp;")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// htmlText escapes text for raw HTML, where markdown is not rendered (a <summary>). It is cleaned
// to one line and cut to limit runes first.
func htmlText(s string, limit int) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(truncate(oneLine(s), limit))
}

// mdCode wraps text in a markdown code span that its own backticks cannot close. It is meant
// for identifiers (object IDs, revisions, pod names), not for table cells.
func mdCode(s string, limit int) string {
	s = truncate(oneLine(s), limit)
	if s == "" {
		return ""
	}
	ticks := strings.Repeat("`", longestRun(s, '`')+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		s = " " + s + " "
	}
	return ticks + s + ticks
}

// fence is a code fence that no line of content can close: three backticks, or one more
// than the longest run of backticks in the content.
func fence(content string) string {
	return strings.Repeat("`", max(3, longestRun(content, '`')+1))
}

func longestRun(s string, c byte) int {
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] != c {
			run = 0
			continue
		}
		run++
		longest = max(longest, run)
	}
	return longest
}

// logTail returns the last n lines of a log, each cleaned and cut to width runes, and how
// many lines the log had.
func logTail(logs string, n, width int) (lines []string, total int) {
	logs = strings.TrimRight(logs, "\r\n")
	if logs == "" {
		return nil, 0
	}
	all := strings.Split(logs, "\n")
	total = len(all)
	if len(all) > n {
		all = all[len(all)-n:]
	}
	lines = make([]string, len(all))
	for i, l := range all {
		lines[i] = truncate(logLine(strings.TrimSuffix(l, "\r")), width)
	}
	return lines, total
}

// cutUTF8 cuts s to at most n bytes without splitting a rune.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
