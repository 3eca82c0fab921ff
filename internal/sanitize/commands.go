package sanitize

import (
	"bytes"
	"io"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Commands neutralises, in one line of text, everything a CI runner would take for a command
// of its own, and leaves all else as it is:
//   - "::" at the start of the line, after any white space (GitHub Actions' workflow commands:
//     the runner trims the line's start and looks for "::");
//   - "##[" anywhere in the line (GitHub's legacy form, "##[add-mask]x", "##[stop-commands]t",
//     which the runner looks for anywhere when the line is no "::" command);
//   - "##vso[" anywhere, in any case (Azure Pipelines' logging commands).
//
// The runner reads its output line by line as .NET's ReadLine does, so a line ends at "\n",
// "\r\n" or a lone "\r": each part of line between carriage returns is a line of its own here.
//
// The runner compares culture-sensitively: characters that sort as nothing (zero-width
// joiners and spaces, soft hyphens, other format and control characters) are skipped when it
// matches "::" or "##[". So they are skipped here too when looking for a command, and what
// breaks one is a plain space, which counts: ": :", "## [", "##vso [". A line with no command
// is returned unchanged.
func Commands(line string) string { return breakCommands(line, false) }

// commandsJSON is Commands for a line of JSON: a bracket in a string becomes its escape
// \u005b, which a JSON reader decodes back, so the document says the same and no runner sees
// a command. (A colon that starts a line cannot be in a string: JSON strings hold no line
// breaks; it gets a space, which JSON allows between tokens.)
func commandsJSON(line string) string { return breakCommands(line, true) }

// breakCommands breaks every command in line: a space before the character that completes it,
// or, in JSON, the escape of a bracket.
func breakCommands(line string, json bool) string {
	if strings.Contains(line, "\r") {
		parts := strings.Split(line, "\r")
		for i, p := range parts {
			parts[i] = breakCommands(p, json)
		}
		return strings.Join(parts, "\r")
	}
	cuts := commandCuts(line)
	if len(cuts) == 0 {
		return line
	}
	var b strings.Builder
	b.Grow(len(line) + 6*len(cuts))
	last := 0
	for _, c := range cuts {
		b.WriteString(line[last:c])
		if json && line[c] == '[' {
			b.WriteString(`\u005b`)
			c++
		} else {
			b.WriteByte(' ')
		}
		last = c
	}
	b.WriteString(line[last:])
	return b.String()
}

// commandCuts returns the byte offsets, in order, of the characters a space must precede to
// break every command in line.
func commandCuts(line string) []int {
	if !strings.ContainsAny(line, ":#") {
		return nil
	}
	var cuts []int
	// "::" at the start: the second colon gets a space before it.
	if i := skipInvisible(line, 0, true); i < len(line) && line[i] == ':' {
		if j := skipInvisible(line, i+1, false); j < len(line) && line[j] == ':' {
			cuts = append(cuts, j)
		}
	}
	// "##[" and "##vso[" anywhere: the bracket gets a space before it.
	for i := 0; i < len(line); i++ {
		if line[i] != '#' {
			continue
		}
		j := skipInvisible(line, i+1, false)
		if j >= len(line) || line[j] != '#' {
			continue
		}
		k := skipInvisible(line, j+1, false)
		if k < len(line) && line[k] == '[' {
			cuts = append(cuts, k)
			continue
		}
		if end, ok := matchFold(line, k, "vso"); ok && end < len(line) && line[end] == '[' {
			cuts = append(cuts, end)
		}
	}
	return dedupe(cuts)
}

// matchFold matches word in line from i on, in any case, skipping invisible characters
// before each of its letters, and returns where the match ends (after any invisible
// characters that follow it).
func matchFold(line string, i int, word string) (int, bool) {
	for _, want := range []byte(word) {
		i = skipInvisible(line, i, false)
		if i >= len(line) || line[i]|0x20 != want {
			return i, false
		}
		i++
	}
	return skipInvisible(line, i, false), true
}

// skipInvisible returns the offset of the first rune from i on that a culture-sensitive
// comparison does not skip: not a control, format or other default-ignorable character, nor a
// combining mark, nor (when whiteSpace, at the start of a line, which the runner trims) white
// space.
func skipInvisible(line string, i int, whiteSpace bool) int {
	for i < len(line) {
		r, size := utf8.DecodeRuneInString(line[i:])
		if !ignorable(r) && (!whiteSpace || !unicode.IsSpace(r)) {
			return i
		}
		i += size
	}
	return i
}

// ignorable reports the runes a culture-sensitive comparison may skip: controls (Cc), format
// characters (Cf: zero-width joiners, bidirectional marks, soft hyphen, BOM), combining and
// enclosing marks, variation selectors and the other default-ignorable code points, and
// U+FFFD, which invalid UTF-8 decodes to here.
func ignorable(r rune) bool {
	return r == utf8.RuneError || unicode.In(r, unicode.Cc, unicode.Cf, unicode.Mn, unicode.Me, unicode.Variation_Selector,
		unicode.Other_Default_Ignorable_Code_Point)
}

func dedupe(sorted []int) []int {
	out := sorted[:0]
	for i, v := range sorted {
		if i == 0 || v != sorted[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// CommandsText applies Commands to every line of text.
func CommandsText(text string) string { return eachLine(text, Commands) }

// CommandsJSONText is CommandsText for a JSON document: brackets in strings are escaped
// instead of spaced, so the document decodes to the same values.
func CommandsJSONText(text string) string { return eachLine(text, commandsJSON) }

func eachLine(text string, clean func(string) string) string {
	if !strings.ContainsAny(text, ":#") {
		return text
	}
	lines := strings.SplitAfter(text, "\n")
	for i, l := range lines {
		body := strings.TrimSuffix(l, "\n")
		lines[i] = clean(body) + l[len(body):]
	}
	return strings.Join(lines, "")
}

// CommandsWriter is an io.Writer that passes every complete line through Commands to w, and
// keeps a line without its newline until the newline comes or Flush is called. Everything a
// program prints to a CI log goes through one, except the program's own commands (a mask, an
// annotation, an output), which are written to w directly. It is safe for concurrent use:
// each Write is passed on whole, never interleaved with another.
type CommandsWriter struct {
	mu      sync.Mutex
	w       io.Writer
	clean   func(string) string
	pending []byte
}

// NewCommandsWriter returns a CommandsWriter writing to w.
func NewCommandsWriter(w io.Writer) *CommandsWriter { return &CommandsWriter{w: w, clean: Commands} }

// NewJSONCommandsWriter returns a CommandsWriter for a JSON document (CommandsJSONText).
func NewJSONCommandsWriter(w io.Writer) *CommandsWriter {
	return &CommandsWriter{w: w, clean: commandsJSON}
}

// Write cleans the complete lines of p (with what an earlier Write left without a newline) and
// writes them to w. Lines that cannot hold a command, most of them, are passed on as they are,
// in one write.
func (c *CommandsWriter) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	data := p
	if len(c.pending) > 0 {
		// The line left by an earlier Write is completed and written on its own: p, often a
		// buffer's 64 KiB, is not copied behind it.
		first := bytes.IndexByte(p, '\n')
		if first < 0 {
			c.pending = append(c.pending, p...)
			return len(p), nil
		}
		c.pending = append(c.pending, p[:first+1]...)
		_, err := c.w.Write(c.cleanLines(c.pending))
		c.pending = c.pending[:0]
		if err != nil {
			return 0, err
		}
		data = p[first+1:]
	}
	// What follows the last newline waits for the rest of its line.
	end := bytes.LastIndexByte(data, '\n')
	c.pending = append(c.pending, data[end+1:]...)
	if end >= 0 {
		if _, err := c.w.Write(c.cleanLines(data[:end+1])); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// cleanLines returns lines (whole lines, each ending in a newline) with every line that may
// hold a command cleaned; lines itself when none may.
func (c *CommandsWriter) cleanLines(lines []byte) []byte {
	var out []byte
	last := 0 // lines[last:start] is passed on as it is
	for start := 0; start < len(lines); {
		n := bytes.IndexByte(lines[start:], '\n') + 1
		line := lines[start : start+n-1]
		if mayHoldCommand(line) {
			if cleaned := c.clean(string(line)); cleaned != string(line) {
				if out == nil {
					out = make([]byte, 0, len(lines)+64)
				}
				out = append(out, lines[last:start]...)
				out = append(out, cleaned...)
				out = append(out, '\n')
				last = start + n
			}
		}
		start += n
	}
	if out == nil {
		return lines
	}
	return append(out, lines[last:]...)
}

// mayHoldCommand is a quick look at a line: false when Commands would surely leave it as it
// is (no '#', no carriage return, and it starts, after spaces, with a printable ASCII
// character other than ':').
func mayHoldCommand(line []byte) bool {
	// Two of IndexByte's vector scans: a byte set's scan (ContainsAny) goes a byte at a time,
	// and every byte printed passes here (a fleet's report is hundreds of megabytes).
	if bytes.IndexByte(line, '#') >= 0 || bytes.IndexByte(line, '\r') >= 0 {
		return true
	}
	i := 0
	for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
		i++
	}
	return i < len(line) && (line[i] == ':' || line[i] < 0x20 || line[i] >= 0x7f)
}

// Flush writes what is left without a newline.
func (c *CommandsWriter) Flush() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.pending) == 0 {
		return nil
	}
	_, err := io.WriteString(c.w, c.clean(string(c.pending)))
	c.pending = nil
	return err
}
