package report

import (
	"strings"
	"unicode"

	"github.com/org/app-status-action/internal/sanitize"
)

// mdText escapes text for markdown outside code: in a table cell, a list item or a paragraph.
// It is cleaned to one line and cut to limit runes first. Characters that start markdown
// syntax (code spans, emphasis, links, cell breaks) are backslash-escaped and HTML
// delimiters become entities, so the text shows as it is and cannot break out. A word joiner
// (U+2060, invisible) breaks every @mention and issue reference (noRefs), so that GitHub
// makes no notification or link out of a cluster's text.
func mdText(s string, limit int) string {
	s = noRefs(sanitize.Truncate(sanitize.Line(s), limit))
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

// noRefs puts a word joiner (U+2060, invisible) where GitHub would make a notification or a
// link out of text: after an @ that starts a word (@user, @org/team; not the @ of main@sha1:…
// or chart@1.2.3, which GitHub leaves alone), after every # followed by a word character
// (#123, and owner/repo#123 whatever precedes it), and after the GH of GH-123.
func noRefs(s string) string {
	if !strings.ContainsAny(s, "@#Gg") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	rs := []rune(s)
	for i, r := range rs {
		b.WriteRune(r)
		next := func(k int) rune {
			if i+k < len(rs) {
				return rs[i+k]
			}
			return 0
		}
		switch {
		case r == '@' && (i == 0 || !wordRune(rs[i-1])) && wordRune(next(1)) && next(1) != '_',
			r == '#' && wordRune(next(1)):
			b.WriteRune('\u2060')
		case (r == 'H' || r == 'h') && i > 0 && (rs[i-1] == 'G' || rs[i-1] == 'g') && next(1) == '-' && unicode.IsDigit(next(2)):
			b.WriteRune('\u2060')
		}
	}
	return b.String()
}

// wordRune reports a rune that continues a word, as GitHub's autolinks read words.
func wordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_'
}

// htmlText escapes text for raw HTML, where markdown is not rendered (a <summary>). It is cleaned
// to one line and cut to limit runes first, and its mentions and references broken (noRefs).
func htmlText(s string, limit int) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(noRefs(sanitize.Truncate(sanitize.Line(s), limit)))
}

// mdCode wraps text in a markdown code span that its own backticks cannot close. It is meant
// for identifiers (object IDs, revisions, pod names), not for table cells.
func mdCode(s string, limit int) string {
	s = sanitize.Truncate(sanitize.Line(s), limit)
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
		lines[i] = sanitize.Truncate(sanitize.LogLine(strings.TrimSuffix(l, "\r")), width)
	}
	return lines, total
}
