package report

import (
	"bytes"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/org/app-status-action/internal/result"
)

type failingWriter struct{ err error }

func (w failingWriter) Write([]byte) (int, error) { return 0, w.err }

func TestTextWriteError(t *testing.T) {
	t.Parallel()
	errBroken := errors.New("broken pipe")
	err := Text(failingWriter{err: errBroken}, mixedRun())
	if !errors.Is(err, errBroken) {
		t.Errorf("Text() = %v, want an error wrapping %v", err, errBroken)
	}
}

// TestTextTree checks how Flux objects nest by Owner, including data the engine should not
// produce: owner cycles, owners that were not checked and duplicate IDs.
func TestTextTree(t *testing.T) {
	t.Parallel()
	flux := func(id, owner string) result.FluxObject {
		return result.FluxObject{ID: id, Owner: owner, Verdict: result.VerdictCurrent, Ready: "True"}
	}
	failing := func(id, owner string) result.Object {
		return result.Object{ID: id, Owner: owner, Status: result.ObjectFailed, Message: "broken"}
	}
	tests := []struct {
		name    string
		cluster result.Cluster
		want    string
	}{
		{
			name: "nested",
			cluster: result.Cluster{
				Flux:    []result.FluxObject{flux("K/a", ""), flux("H/b", "K/a"), flux("H/c", "H/b")},
				Objects: []result.Object{failing("D/z", "H/c"), failing("H/b", "K/a"), failing("A/y", "K/a")},
			},
			want: `x: Failed
  K/a  Ready=True  0/2 objects Current
    A/y  Failed  broken
    H/b  Ready=True
      H/c  Ready=True  0/1 objects Current
        D/z  Failed  broken
`,
		},
		{
			name: "owner cycle and unknown owner",
			cluster: result.Cluster{
				Flux:    []result.FluxObject{flux("K/a", "K/b"), flux("K/b", "K/a"), flux("K/c", "K/gone")},
				Objects: []result.Object{failing("D/x", "K/gone"), {ID: "D/ok", Owner: "K/c", Status: result.ObjectCurrent}},
			},
			want: `x: Failed
  K/a  Ready=True
  K/b  Ready=True
  K/c  Ready=True  1/1 objects Current
  D/x  Failed  broken
`,
		},
		{
			name: "flux object with a failure is listed",
			cluster: result.Cluster{
				Flux: []result.FluxObject{flux("K/a", ""), flux("H/b", "K/a")},
				Objects: []result.Object{{ID: "H/b", Owner: "K/a", Status: result.ObjectFailed,
					Failure: &result.Failure{Code: result.CodeFluxTestFailed, Reason: "TestFailed", Message: "test failed"}}},
			},
			want: `x: Failed
  K/a  Ready=True  0/1 objects Current
    H/b  Failed  flux-test-failed: TestFailed: test failed
    H/b  Ready=True
`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := tt.cluster
			c.Name, c.Verdict = "x", result.VerdictFailed
			var b bytes.Buffer
			writeTextCluster(&b, c)
			if diff := cmp.Diff(tt.want, b.String()); diff != "" {
				t.Errorf("writeTextCluster() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
