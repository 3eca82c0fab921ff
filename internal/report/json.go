package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/org/app-status-action/internal/result"
)

// JSON renders the whole Run, indented two spaces and ending in a newline: what
// `app-status verify -o json` prints and the `report` output holds. The document is
// described by schema/results.schema.json: lists are never null, and a zero schemaVersion
// is filled in with result.SchemaVersion.
func JSON(run result.Run) ([]byte, error) {
	var buf bytes.Buffer
	if err := WriteJSON(&buf, run); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// WriteJSON writes what JSON renders to w, a cluster at a time: a fleet's document (tens of
// megabytes) is never held whole, nor re-indented whole.
func WriteJSON(w io.Writer, run result.Run) error {
	run = normalise(run)
	clusters := run.Results
	run.Results = []result.Cluster{}
	head, err := encodeJSON(run, "  ")
	if err != nil {
		return fmt.Errorf("render run as json: %w", err)
	}
	// The document with no clusters has "results": [] on a line of its own; the clusters go
	// between its brackets, indented as the encoder indents an array's elements.
	const empty = "\n  \"results\": []"
	at := bytes.Index(head, []byte(empty))
	if len(clusters) == 0 {
		_, err := w.Write(head)
		return err
	}
	if at < 0 {
		return fmt.Errorf("render run as json: no place for the clusters in %.80q", head)
	}
	at += len(empty) - 1
	bw := bufio.NewWriterSize(w, 64<<10)
	_, _ = bw.Write(head[:at])
	// Each cluster is encoded compact, then indented by appendIndented, which costs far less
	// than the encoder's own indenting.
	var buf bytes.Buffer
	var indented []byte
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for i, c := range clusters {
		if i > 0 {
			_ = bw.WriteByte(',')
		}
		_, _ = bw.WriteString("\n    ")
		buf.Reset()
		if err := enc.Encode(c); err != nil {
			return fmt.Errorf("render run as json: %w", err)
		}
		// Without the newline the encoder ends each value with.
		indented = appendIndented(indented[:0], buf.Bytes()[:buf.Len()-1], "    ", "  ")
		_, _ = bw.Write(indented)
	}
	_, _ = bw.WriteString("\n  ")
	_, _ = bw.Write(head[at:])
	return bw.Flush()
}

// CompactJSON renders the whole Run like JSON, on one line: the report output.
func CompactJSON(run result.Run) ([]byte, error) {
	b, err := encodeJSON(normalise(run), "")
	if err != nil {
		return nil, fmt.Errorf("render run as json: %w", err)
	}
	return bytes.TrimSuffix(b, []byte("\n")), nil
}

// ResultsJSON renders run.Results as a compact JSON array, `[]` when there are none: the
// `results` output, whose elements are the schema's $defs/cluster.
func ResultsJSON(run result.Run) ([]byte, error) {
	b, err := encodeJSON(normalise(run).Results, "")
	if err != nil {
		return nil, fmt.Errorf("render results as json: %w", err)
	}
	return bytes.TrimSuffix(b, []byte("\n")), nil
}

// ClusterNamesJSON renders cluster names as a compact JSON array, `[]` when there are none:
// the `ready-clusters` and `failed-clusters` outputs.
func ClusterNamesJSON(names []string) []byte {
	b, err := encodeJSON(nonNil(names), "")
	if err != nil {
		// Unreachable: a []string always encodes (invalid UTF-8 becomes U+FFFD).
		return []byte("[]")
	}
	return bytes.TrimSuffix(b, []byte("\n"))
}

// encodeJSON encodes v followed by a newline. HTML characters are left as they are: the
// documents are read by programs and people, never embedded in a page.
func encodeJSON(v any, indent string) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if indent != "" {
		enc.SetIndent("", indent)
	}
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// normalise returns a copy of run that matches the schema: every list that is not omitempty
// is empty rather than nil and every schemaVersion is set. run itself is left alone.
func normalise(run result.Run) result.Run {
	out := run
	if out.SchemaVersion == 0 {
		out.SchemaVersion = result.SchemaVersion
	}
	out.Resources = nonNil(run.Resources)
	out.ReadyClusters = nonNil(run.ReadyClusters)
	out.FailedClusters = nonNil(run.FailedClusters)
	out.Results = make([]result.Cluster, len(run.Results))
	for i, c := range run.Results {
		if c.SchemaVersion == 0 {
			c.SchemaVersion = result.SchemaVersion
		}
		c.Flux = nonNil(c.Flux)
		c.Objects = nonNil(c.Objects)
		out.Results[i] = c
	}
	return out
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
