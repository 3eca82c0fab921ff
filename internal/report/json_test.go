package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/org/app-status-action/internal/result"
)

func TestJSONNeverNull(t *testing.T) {
	t.Parallel()
	run := result.Run{Results: []result.Cluster{{Name: "a", Verdict: result.VerdictUnreachable}}} // every list nil
	tests := []struct {
		name   string
		render func() ([]byte, error)
		want   string
	}{
		{name: "run", render: func() ([]byte, error) { return JSON(run) }, want: `{
  "schemaVersion": 1,
  "status": "",
  "resources": [],
  "condition": {
    "type": "",
    "status": "",
    "reason": "",
    "message": ""
  },
  "readyClusters": [],
  "failedClusters": [],
  "durationMs": 0,
  "results": [
    {
      "schemaVersion": 1,
      "cluster": "a",
      "verdict": "Unreachable",
      "flux": [],
      "objects": [],
      "durationMs": 0
    }
  ]
}
`},
		{name: "results", render: func() ([]byte, error) { return ResultsJSON(run) }, want: `[{"schemaVersion":1,"cluster":"a","verdict":"Unreachable","flux":[],"objects":[],"durationMs":0}]`},
		{name: "no results", render: func() ([]byte, error) { return ResultsJSON(result.Run{}) }, want: `[]`},
		{name: "no names", render: func() ([]byte, error) { return ClusterNamesJSON(nil), nil }, want: `[]`},
		{name: "empty names", render: func() ([]byte, error) { return ClusterNamesJSON([]string{}), nil }, want: `[]`},
		{name: "names", render: func() ([]byte, error) { return ClusterNamesJSON([]string{"a", "b<c>"}), nil }, want: `["a","b<c>"]`},
	}
	for _, tt := range tests {
		got, err := tt.render()
		if err != nil {
			t.Fatalf("%s: render: %v", tt.name, err)
		}
		if diff := cmp.Diff(tt.want, string(got)); diff != "" {
			t.Errorf("%s: mismatch (-want +got):\n%s", tt.name, diff)
		}
	}
}

// TestJSONRoundTrip checks the JSON holds the whole run and leaves the run alone.
func TestJSONRoundTrip(t *testing.T) {
	t.Parallel()
	for _, f := range fixtures() {
		before := f.run
		b, err := JSON(f.run)
		if err != nil {
			t.Fatalf("%s: JSON: %v", f.name, err)
		}
		if !strings.HasSuffix(string(b), "}\n") {
			t.Errorf("%s: JSON does not end in a newline", f.name)
		}
		var got result.Run
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("%s: unmarshal: %v", f.name, err)
		}
		if diff := cmp.Diff(normalise(f.run), got); diff != "" {
			t.Errorf("%s: round trip mismatch (-want +got):\n%s", f.name, diff)
		}
		if diff := cmp.Diff(before, f.run); diff != "" {
			t.Errorf("%s: JSON changed the run (-want +got):\n%s", f.name, diff)
		}

		rb, err := ResultsJSON(f.run)
		if err != nil {
			t.Fatalf("%s: ResultsJSON: %v", f.name, err)
		}
		var results []result.Cluster
		if err := json.Unmarshal(rb, &results); err != nil {
			t.Fatalf("%s: unmarshal results: %v", f.name, err)
		}
		if diff := cmp.Diff(normalise(f.run).Results, results); diff != "" {
			t.Errorf("%s: results round trip mismatch (-want +got):\n%s", f.name, diff)
		}
	}
}

// TestWriteJSONIsTheWholeEncoding: the document written a cluster at a time is, byte for byte,
// the whole run encoded at once.
func TestWriteJSONIsTheWholeEncoding(t *testing.T) {
	t.Parallel()
	cut, _ := Fit(bigRun(5), 8<<10)
	for name, run := range map[string]result.Run{"mixed": mixedRun(), "hostile": hostileRun(), "big": bigRun(3), "cut": cut,
		"a fleet, in batches on every CPU": bigRun(5*clusterBatch + 3),
		"empty":                            result.NewRun(nil, "", nil, 0), "zero": {}} {
		want, err := encodeJSON(normalise(run), "  ")
		if err != nil {
			t.Fatal(err)
		}
		got, err := JSON(run)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(string(want), string(got)); diff != "" {
			t.Errorf("%s: (-whole +written):\n%s", name, diff)
		}
	}
}

// TestWriteClustersInBatches: however many encode at once, the clusters are written in their
// order, byte for byte as one encoder writes the elements of the document's results array.
func TestWriteClustersInBatches(t *testing.T) {
	t.Parallel()
	for _, n := range []int{1, clusterBatch, clusterBatch + 1, 7*clusterBatch + 5} {
		clusters := normalise(bigRun(n)).Results
		for i := range clusters {
			// Clusters of different sizes, so that batches end out of order.
			clusters[i].Objects = clusters[i].Objects[:(i*37)%len(clusters[i].Objects)]
		}
		// One encoder's document, whose array's elements sit where the report's do.
		whole, err := encodeJSON(struct{ Results []result.Cluster }{clusters}, "  ")
		if err != nil {
			t.Fatal(err)
		}
		start := bytes.Index(whole, []byte("[")) + 1
		want := whole[start:bytes.LastIndex(whole, []byte("\n  ]"))]
		for _, cpus := range []int{1, 2, 3, maxEncoders + 4} {
			var got bytes.Buffer
			bw := bufio.NewWriter(&got)
			if err := writeClusters(bw, clusters, cpus); err != nil {
				t.Fatal(err)
			}
			_ = bw.Flush()
			if diff := cmp.Diff(string(want), got.String()); diff != "" {
				t.Errorf("%d clusters on %d CPUs (-one encoder +written):\n%s", n, cpus, diff)
			}
		}
	}
}

// TestWriteClustersStopsAtAWriteError: a writer that fails ends the encoding, and its error is
// the one returned, on one CPU or several.
func TestWriteClustersStopsAtAWriteError(t *testing.T) {
	t.Parallel()
	clusters := normalise(bigRun(20 * clusterBatch)).Results
	errDiskFull := errors.New("no space left on device")
	for _, cpus := range []int{1, 2, maxEncoders} {
		err := writeClusters(bufio.NewWriterSize(failingWriter{err: errDiskFull}, 1024), clusters, cpus)
		if !errors.Is(err, errDiskFull) {
			t.Errorf("on %d CPUs: %v, want the writer's error", cpus, err)
		}
	}
}
