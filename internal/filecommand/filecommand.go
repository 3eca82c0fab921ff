// Package filecommand writes GitHub Actions file commands: the step outputs (GITHUB_OUTPUT)
// and the job summary (GITHUB_STEP_SUMMARY), so that no value, whatever a cluster put in it,
// can end an output early, add an output or change another one.
//
// Every output is written in the runner's multi-line form, name<<DELIMITER, the value, then the
// delimiter alone on a line, with a fresh delimiter per value made of 122 random bits (as
// GitHub's own toolkit does: "ghadelimiter_" and a random UUID). A value that contains its
// delimiter is refused, never written. go-githubactions writes every output with one fixed,
// public delimiter, which a value could contain on purpose: it is used here for inputs, masks
// and annotations only.
package filecommand

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
)

// Output is one step output.
type Output struct {
	Name  string
	Value string
}

// outputName is what an output name may be: what later steps can write after
// steps.<id>.outputs.
var outputName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// ErrDelimiterInValue is returned when a value contains the delimiter chosen for it. With 122
// random bits it happens only to a value that was made to guess it.
var ErrDelimiterInValue = errors.New("the value contains its delimiter")

// Encode writes the outputs to w in the runner's file-command format, each with a fresh
// delimiter read from random (crypto/rand.Reader when nil). Nothing is written when an output
// is refused.
func Encode(w io.Writer, outputs []Output, random io.Reader) error {
	if random == nil {
		random = rand.Reader
	}
	var b strings.Builder
	for _, o := range outputs {
		if !outputName.MatchString(o.Name) {
			return fmt.Errorf("output name %q: use letters, digits, _ and -, starting with a letter or _", o.Name)
		}
		delimiter, err := newDelimiter(random)
		if err != nil {
			return fmt.Errorf("output %s: %w", o.Name, err)
		}
		if strings.Contains(o.Value, delimiter) {
			return fmt.Errorf("output %s: %w", o.Name, ErrDelimiterInValue)
		}
		if strings.Contains(o.Value, "\r") {
			// The runner reads a carriage return as a line end: the value would not read back.
			return fmt.Errorf("output %s: the value contains a carriage return", o.Name)
		}
		fmt.Fprintf(&b, "%s<<%s\n%s\n%s\n", o.Name, delimiter, o.Value, delimiter)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write outputs: %w", err)
	}
	return nil
}

// newDelimiter is "ghadelimiter_" and a random (version 4) UUID.
func newDelimiter(random io.Reader) (string, error) {
	var u [16]byte
	if _, err := io.ReadFull(random, u[:]); err != nil {
		return "", fmt.Errorf("make a delimiter: %w", err)
	}
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return fmt.Sprintf("ghadelimiter_%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16]), nil
}

// WriteOutputs appends the outputs to the GITHUB_OUTPUT file at path, in one write.
func WriteOutputs(path string, outputs []Output) error {
	var b strings.Builder
	if err := Encode(&b, outputs, nil); err != nil {
		return err
	}
	return appendFile(path, b.String())
}

// AppendSummary appends markdown to the GITHUB_STEP_SUMMARY file at path, ending in a newline.
func AppendSummary(path, markdown string) error {
	if !strings.HasSuffix(markdown, "\n") {
		markdown += "\n"
	}
	return appendFile(path, markdown)
}

// appendFile appends text to the file at path, which the runner creates (a local run may
// name one that does not exist yet).
func appendFile(path, text string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	if _, err := f.WriteString(text); err != nil {
		_ = f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// ParseOutputs reads a GITHUB_OUTPUT file the way the runner does (its
// EnvFileKeyValuePairs): lines end at \n, \r\n or \r; empty lines are skipped; a line is
// NAME=VALUE when its first '=' comes before any "<<", else NAME<<DELIMITER, and the value is
// the lines up to the next line equal to the delimiter, joined with \n. Tests use it to
// read what a step's outputs will be.
func ParseOutputs(data string) (map[string]string, error) {
	lines := strings.Split(strings.ReplaceAll(strings.ReplaceAll(data, "\r\n", "\n"), "\r", "\n"), "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	out := map[string]string{}
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if line == "" {
			continue
		}
		eq, heredoc := strings.Index(line, "="), strings.Index(line, "<<")
		if eq >= 0 && (heredoc < 0 || eq < heredoc) {
			if eq == 0 {
				return nil, fmt.Errorf("line %d: empty name", i+1)
			}
			out[line[:eq]] = line[eq+1:]
			continue
		}
		if heredoc <= 0 {
			return nil, fmt.Errorf("line %d: %q is neither NAME=VALUE nor NAME<<DELIMITER", i+1, line)
		}
		name, delimiter := line[:heredoc], line[heredoc+2:]
		var value []string
		closed := false
		for i++; i < len(lines); i++ {
			if lines[i] == delimiter {
				closed = true
				break
			}
			value = append(value, lines[i])
		}
		if !closed {
			return nil, fmt.Errorf("output %s: no line ends its delimiter %q", name, delimiter)
		}
		out[name] = strings.Join(value, "\n")
	}
	return out, nil
}
