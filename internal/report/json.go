package report

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"sync"

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

// WriteJSON writes what JSON renders to w, a cluster at a time: a fleet's document (tens to
// hundreds of megabytes) is never held whole, nor re-indented whole.
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
	if err := writeClusters(bw, clusters, runtime.GOMAXPROCS(0)); err != nil {
		return err
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

// clusterBatch is how many clusters one encoding takes at a time, and maxEncoders how many
// encodings run at once at most (writeClusters).
const (
	clusterBatch = 4
	maxEncoders  = 8
)

// writeClusters writes the clusters as the elements of the document's results array, each
// encoded compact, then indented by appendIndented, which costs far less than the encoder's
// own indenting. Batches of clusters are encoded on cpus at once and written in their
// order, so the bytes are those of one encoder: a fleet's document (10,000 clusters are
// hundreds of megabytes) is encoded in a fraction of the time once the verdicts are in, with
// only the batches in flight held (at most 2*maxEncoders+1 of clusterBatch clusters). It stops
// at the first error: an encoding's, or the writer's.
func writeClusters(bw *bufio.Writer, clusters []result.Cluster, cpus int) error {
	workers := min(cpus, maxEncoders, (len(clusters)+clusterBatch-1)/clusterBatch)
	if workers <= 1 {
		var e clusterEncoder
		var buf []byte
		for from := 0; from < len(clusters); from += clusterBatch {
			var encErr error
			buf, encErr = e.encode(buf[:0], clusters[from:min(from+clusterBatch, len(clusters))], from)
			_, err := bw.Write(buf)
			if err := cmp.Or(encErr, err); err != nil {
				return err
			}
		}
		return nil
	}
	type batch struct {
		from int
		out  chan encodedBatch
	}
	stop := make(chan struct{})
	todo := make(chan batch)
	// inOrder holds the batches handed out, in their order: its room, and the batch being
	// written, bound those in flight.
	inOrder := make(chan batch, 2*workers)
	go func() {
		defer close(inOrder)
		defer close(todo)
		for from := 0; from < len(clusters); from += clusterBatch {
			b := batch{from: from, out: make(chan encodedBatch, 1)}
			select {
			case inOrder <- b:
			case <-stop:
				return
			}
			select {
			case todo <- b:
			case <-stop:
				return
			}
		}
	}()
	var wg sync.WaitGroup
	free := make(chan []byte, 2*workers+1)
	for range workers {
		wg.Go(func() {
			var e clusterEncoder
			for b := range todo {
				var buf []byte
				select {
				case buf = <-free:
				default:
				}
				out, err := e.encode(buf[:0], clusters[b.from:min(b.from+clusterBatch, len(clusters))], b.from)
				b.out <- encodedBatch{b: out, err: err}
			}
		})
	}
	var err error
	for b := range inOrder {
		if err != nil {
			// Nothing more is written; the batches handed out are drained (a worker's
			// answer never blocks: out has room for it).
			continue
		}
		e := <-b.out
		_, writeErr := bw.Write(e.b)
		if err = cmp.Or(e.err, writeErr); err != nil {
			close(stop)
		}
		select {
		case free <- e.b:
		default:
		}
	}
	wg.Wait()
	return err
}

// encodedBatch is a batch of clusters as writeClusters writes them, or why not.
type encodedBatch struct {
	b   []byte
	err error
}

// clusterEncoder encodes clusters as array elements of the document; each writeClusters
// worker has its own.
type clusterEncoder struct {
	buf bytes.Buffer
	enc *json.Encoder
}

// encode appends the clusters, the first of which is the array's element number first, each
// after its separator.
func (e *clusterEncoder) encode(dst []byte, clusters []result.Cluster, first int) ([]byte, error) {
	if e.enc == nil {
		e.enc = json.NewEncoder(&e.buf)
		e.enc.SetEscapeHTML(false)
	}
	for i, c := range clusters {
		if first+i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, "\n    "...)
		e.buf.Reset()
		if err := e.enc.Encode(c); err != nil {
			return dst, fmt.Errorf("render run as json: %w", err)
		}
		// Without the newline the encoder ends each value with.
		dst = appendIndented(dst, e.buf.Bytes()[:e.buf.Len()-1], "    ", "  ")
	}
	return dst, nil
}
