package report

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/org/app-status-action/internal/result"
)

func TestFormatDuration(t *testing.T) {
	t.Parallel()
	tests := []struct {
		ms   int64
		want string
	}{
		{ms: -5, want: "0.0s"},
		{ms: 0, want: "0.0s"},
		{ms: 49, want: "0.0s"},
		{ms: 50, want: "0.1s"},
		{ms: 12_345, want: "12.3s"},
		{ms: 59_949, want: "59.9s"},
		{ms: 59_950, want: "1m00s"},
		{ms: 62_000, want: "1m02s"},
		{ms: 300_004, want: "5m00s"},
		{ms: 3_599_499, want: "59m59s"},
		{ms: 3_599_500, want: "1h00m00s"},
		{ms: 3_723_000, want: "1h02m03s"},
	}
	for _, tt := range tests {
		if got := formatDuration(tt.ms); got != tt.want {
			t.Errorf("formatDuration(%d) = %q, want %q", tt.ms, got, tt.want)
		}
	}
}

func TestReadyObjects(t *testing.T) {
	t.Parallel()
	current := result.Object{Status: result.ObjectCurrent}
	failed := result.Object{Status: result.ObjectFailed}
	tests := []struct {
		name    string
		cluster result.Cluster
		want    string
	}{
		{name: "never read", cluster: result.Cluster{}, want: "-"},
		{name: "no objects", cluster: result.Cluster{Flux: []result.FluxObject{{}}}, want: "0/0"},
		{name: "all current", cluster: result.Cluster{Objects: []result.Object{current, current}}, want: "2/2"},
		{name: "some failing", cluster: result.Cluster{Objects: []result.Object{current, failed, failed}}, want: "1/3"},
	}
	for _, tt := range tests {
		if got := readyObjects(tt.cluster); got != tt.want {
			t.Errorf("%s: readyObjects() = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestVerdictSymbol checks every verdict has its own symbol; only the two credential verdicts
// share one.
func TestVerdictSymbol(t *testing.T) {
	t.Parallel()
	got := map[string][]result.Verdict{}
	for _, v := range result.Verdicts {
		s := verdictSymbol(v)
		if s == verdictSymbol("no such verdict") {
			t.Errorf("verdictSymbol(%s) = the symbol of an unknown verdict", v)
		}
		got[s] = append(got[s], v)
	}
	want := []result.Verdict{result.VerdictUnauthorized, result.VerdictForbidden}
	for s, vs := range got {
		if len(vs) > 1 && !cmp.Equal(vs, want) {
			t.Errorf("verdicts %v share the symbol %s", vs, s)
		}
	}
}

func TestReason(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		cluster result.Cluster
		want    string
	}{
		{name: "current", cluster: result.Cluster{Verdict: result.VerdictCurrent}, want: ""},
		{name: "code and message", cluster: result.Cluster{Verdict: result.VerdictFailed, Code: result.CodeOOM, Reason: "OOMKilled", Message: "killed"}, want: "oom: killed"},
		{name: "reason only", cluster: result.Cluster{Verdict: result.VerdictForbidden, Reason: "Forbidden"}, want: ""},
		{name: "reason differs", cluster: result.Cluster{Verdict: result.VerdictFailed, Reason: "Oops"}, want: "Oops"},
		{name: "verdict only", cluster: result.Cluster{Verdict: result.VerdictCancelled}, want: ""},
	}
	for _, tt := range tests {
		if got := reason(tt.cluster); got != tt.want {
			t.Errorf("%s: reason() = %q, want %q", tt.name, got, tt.want)
		}
	}
}
